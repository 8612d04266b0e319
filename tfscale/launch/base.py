"""The one launcher interface: a `Job` in (the spec file, where its tasks write, the worker mode), an `Outcome` out.

A launcher is a context manager held for a whole sweep (Slurm holds its allocation; local holds nothing) and
starts every process of one config per `run(job)`: a single-process config is a cluster of one task. It never
reads results into records: `tfscale.runner.configs.record_fields` turns any launcher's outcome into record columns.

Adding a launcher (Kubernetes, say) means one subclass: `run`, and optionally `unavailable` (configs it cannot
run become skipped records), `live_pids` (what telemetry samples) and `script` (what `tfscale launch` writes).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfscale import contract
from tfscale.contract import Task
from tfscale.labels import model_label
from tfscale.suite.spec import RunSpec
from tfscale.untrusted import visible

if TYPE_CHECKING:
    from tfscale.suite.planner import Plan


@dataclass(frozen=True)
class Job:
    """One config's processes to run: which spec, in which worker mode, and where its files go."""

    spec: RunSpec
    spec_path: Path  # the spec as JSON (contract.worker_argv reads it)
    work: Path  # result parts and progress files: <prefix>.<task>.result.json, <prefix>.<task>.progress
    logs: Path
    prefix: str  # file-name prefix of this job's files: the config id, or commbench-<config id>
    run_id: str
    mode: str = contract.TRAIN
    repeat: int = 0  # which of the config's fresh processes (its round of the sweep: runner.configs.interleaved)

    @property
    def tasks(self) -> list[Task]:
        return contract.tasks_of(self.spec)

    def result_path(self, task: Task | None = None) -> Path | str:
        """A task's result file; without a task, the template the worker fills with its own task name."""
        path = contract.task_file(self.work, self.prefix, contract.RESULT_SUFFIX, task)
        return Path(path) if task else path

    def progress_path(self, task: Task | None = None) -> Path | str:
        path = contract.task_file(self.work, self.prefix, contract.PROGRESS_SUFFIX, task)
        return Path(path) if task else path

    def argv(self, result: Path | str, python: str | None = None) -> list[str]:
        return contract.worker_argv(result, self.mode, self.spec_path, python)


# Why a watchdog stopped a job before it ended.
STOPPED_TIMEOUT, STOPPED_STARTUP, STOPPED_STALL = "timeout", "startup", "stall"


@dataclass
class Outcome:
    """How one job ended, whatever launched it."""

    duration_s: float | None  # wall time from the first start to the last exit, s (None: not known, collected)
    parts: dict[str, dict[str, Any] | None]  # task name -> its result JSON (None: it wrote none)
    trainers: list[str]  # names of the tasks whose parts are measurements, in rank order
    log_path: Path | None  # the log that tells most: the failed task's, else the first trainer's (None: none)
    stopped: str | None = None  # the watchdog stopped it: STOPPED_TIMEOUT, STOPPED_STARTUP or STOPPED_STALL
    stopped_how: str = ""  # what stopping did, in words: "process tree killed", "step 12.3 cancelled"
    failed: str | None = None  # the task (or step) that failed first, for the reason's prefix; "" for none
    returncode: int | None = None  # exit status of the failed process (negative: killed by that signal)
    process: str = "worker"  # what returncode is the exit status of, for the reason: "worker", "srun"
    launcher_reason: str | None = None  # the launcher's own words on a failure (Slurm's state line)
    time_limit: bool = False  # the launcher's own time limit ended it (Slurm's TIME LIMIT): a timeout
    phases: dict[str, str] = field(default_factory=dict)  # task name -> last phase it reported
    columns: dict[str, Any] = field(default_factory=dict)  # launcher's record columns (cluster, slurm ids, link)

    @property
    def ok(self) -> bool:
        return (
            self.stopped is None
            and self.failed is None
            and all(contract.result_ok(self.parts.get(name)) for name in self.trainers)
        )


def local_only(cluster: str) -> str:
    """Why a config with simulated hosts does not run on `cluster` (a skipped record, or a config not emitted)."""
    return f"simulated hosts (network_link) run with the local launcher only; {cluster} has its own network"


# What `tfscale launch` writes: specs/<config_id>.json beside the script, results/<config_id>.<task>.result.json
def spec_file(spec: RunSpec) -> str:
    return f"specs/{spec.config_id}.json"


def config_comment(spec: RunSpec) -> str:
    """What a script says about a config above its commands: id, model and how it uses its devices, on one line
    whatever the names hold (the plan refuses control characters; this holds for specs built any other way)."""
    return "# " + visible(f"{spec.config_id}: {model_label(spec.model, spec.model_size)} {spec.mode_label}")


def result_template(process: str) -> str:
    """Where each task of a config's process (contract.process_name) writes its part, relative to the output folder;
    the worker fills in its task name."""
    return contract.task_file("results", process, contract.RESULT_SUFFIX)


@dataclass(frozen=True)
class LaunchedProcess:
    """One fresh process of a config that a written script starts (a config of `repeats: N` has N)."""

    spec: RunSpec
    repeat: int  # 0 .. spec.repeats - 1

    @property
    def name(self) -> str:
        """Its files' and jobs' name (contract.process_name)."""
        return contract.process_name(self.spec.config_id, self.repeat)

    def note(self) -> str:
        """What a script's comment adds for a config of several processes: ", process 2 of 3"; else nothing."""
        return f", process {self.repeat + 1} of {self.spec.repeats}" if self.spec.repeats > 1 else ""


def launched_processes(specs: Iterable[RunSpec], skipped: Container[str] = ()) -> list[LaunchedProcess]:
    """Every process a written script starts: each config not `skipped`, `repeats` times (fresh processes one after
    another, as `tfscale run` runs them; `tfscale collect` combines them)."""
    return [
        LaunchedProcess(spec, repeat)
        for spec in specs
        if spec.config_id not in skipped
        for repeat in range(spec.repeats)
    ]


class Launcher:
    """Base of every launcher; `with launcher:` holds what it needs for a sweep."""

    name = ""  # the record column `launcher`

    def __enter__(self) -> Launcher:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def unavailable(self, spec: RunSpec) -> str | None:
        """Why this launcher cannot run the config (it becomes a skipped record), or None."""
        return None

    def warnings(self) -> list[str]:
        """What the user should know of how the sweep's processes were started (tfscale run prints each as a
        `warning:` line after the sweep); by default nothing."""
        return []

    def expect(self, runs: Sequence[tuple[RunSpec, int]]) -> None:
        """The processes the sweep will run, in order: (config, repeat) pairs (runner.configs.interleaved). A
        launcher may get ready for them; by default nothing."""
        return None

    def run(self, job: Job) -> Outcome:
        raise NotImplementedError(f"the {self.name} launcher does not run configs")

    def sampled_gpus(self, spec: RunSpec) -> list[str] | None:
        """UUIDs of the GPUs this host's tasks of the config compute on, for telemetry (None: every GPU)."""
        return None

    def live_pids(self) -> list[int] | None:
        """Processes of the running job that this host can sample (None: none here, e.g. on other nodes)."""
        return None

    @classmethod
    def not_emitted(cls, plan: Plan, options: Any) -> dict[str, str]:
        """config_id -> why `script` writes nothing for that config (tfscale launch prints each)."""
        return {}

    @classmethod
    def script(cls, plan: Plan, out: Path, options: Any) -> dict[str, str]:
        """File name -> text of what `tfscale launch --target <this>` writes beside the specs."""
        raise NotImplementedError(f"the {cls.name} launcher writes no script")


def worker_python(options, default: str) -> str:
    """The Python an emitted command starts the worker with: the options' --python where given, else the target's
    `default` (slurm and hosts: the interpreter running tfscale launch, on a shared filesystem; kubernetes: `python`
    on the image's PATH, never a path of the submitting host)."""
    return options.python or default
