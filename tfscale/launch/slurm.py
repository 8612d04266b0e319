"""Slurm launcher: the sweep runs inside one Slurm allocation (the current one when tfscale itself runs in a job,
else one requested with `salloc --no-shell` and cancelled at the end), each config as one `srun` job step whose
ranks find their cluster from Slurm's variables (contract.slurm_cluster, in Slurm's own task order) and write
their result parts to the run folder, which must be on a filesystem the nodes share. Never imports TensorFlow.

A step that fails, runs past its limit or is cancelled (`scancel`) ends with srun's exit status and Slurm's own
message (e.g. "*** STEP 12.3 ON n1 CANCELLED AT ... DUE TO TIME LIMIT ***"), which becomes the record's reason.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tfscale import contract
from tfscale import metrics as m
from tfscale.errors import TfscaleError
from tfscale.launch import checks
from tfscale.launch.base import (
    STOPPED_TIMEOUT,
    Job,
    Launcher,
    Outcome,
    config_comment,
    launched_processes,
    local_only,
    result_template,
    spec_file,
    worker_python,
)
from tfscale.launch.processes import kill_tree, start_worker
from tfscale.launch.tasks import MAX_ATTEMPTS, RELAUNCH_MARKERS, Watch, pick_ports
from tfscale.launch.watchdog import ProgressWatch
from tfscale.spec import RunSpec
from tfscale.store import read_json

TOOLS = ("salloc", "srun", "squeue", "scancel")
POLL_S = 0.5
PENDING_NOTE_S = 10.0  # how often a waiting allocation is reported
SLURM_STATE = re.compile(r"\*\*\* .* \*\*\*")  # slurmstepd's "*** STEP 12.3 ON n1 CANCELLED AT ... ***"
SLURM_ERROR = re.compile(r"(?:srun|slurmstepd\S*): error: .*")


def unavailable_reason() -> str | None:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    return f"--launcher slurm needs the Slurm client tools ({', '.join(missing)} not found)" if missing else None


@dataclass(frozen=True)
class SlurmOptions:
    """How the allocation is requested when tfscale is not already inside one."""

    partition: str | None = None
    account: str | None = None
    time_limit: str | None = None  # salloc --time syntax, e.g. "2:00:00"
    extra: tuple[str, ...] = ()  # further salloc arguments, e.g. ("--gres=gpu:4",)

    def __post_init__(self) -> None:
        checks.check_slurm_names("--partition", self.partition)
        checks.check_slurm_names("--account", self.account)
        checks.check_time("--time-limit", self.time_limit)
        for arg in self.extra:
            checks.check_text("--slurm-arg", arg)

    def salloc_args(self, nodes: int, name: str, gpu_args: list[str] | None = None) -> list[str]:
        args = ["salloc", "--no-shell", f"--nodes={nodes}", f"--job-name={name}", *(gpu_args or [])]
        args += [f"--partition={self.partition}"] if self.partition else []
        args += [f"--account={self.account}"] if self.account else []
        args += [f"--time={self.time_limit}"] if self.time_limit else []
        return args + list(self.extra)


def partition_nodes(options: SlurmOptions) -> int | None:
    """Nodes of the partition the allocation is asked from (None when sinfo cannot say)."""
    argv = ["sinfo", "-h", "-o", "%D"] + ([f"--partition={options.partition}"] if options.partition else [])
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        return sum(int(n) for n in done.stdout.split()) or None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def allocation_nodes(specs: tuple[RunSpec, ...], available: int | None) -> int:
    """Nodes to ask for: the most any config has, but no more than the partition has (a config with more TF
    workers than nodes then runs several ranks per node)."""
    wanted = max((s.nodes for s in specs), default=1)
    return max(1, min(wanted, available)) if available else wanted


def step_geometry(spec: RunSpec, allocation_nodes: int) -> tuple[int, int]:
    """(Slurm nodes, tasks) of a config's step: one task per TF task (one for single-process configs), spread over
    as many of the allocation's nodes as the config has nodes."""
    tasks = len(contract.tasks_of(spec))
    return max(1, min(spec.nodes, allocation_nodes, tasks)), tasks


def tasks_per_node_at_most(spec: RunSpec, allocation_nodes: int) -> int:
    """The most tasks of the step on one node (GPU steps ask srun for exactly this many per node)."""
    nodes, tasks = step_geometry(spec, allocation_nodes)
    return math.ceil(tasks / nodes)


def step_gpus_per_node(spec: RunSpec, allocation_nodes: int) -> int:
    """GPUs a GPU config's step asks for on each node. With block distribution and at most k tasks per node, a
    node holds k consecutive ranks: exactly ranks jk..jk+k-1 when the tasks fill every node, else some k or
    fewer consecutive ones, so the neediest k consecutive tasks bound it. Parameter servers and the
    ParameterServer chief need none (contract.gpus_of). 0 on CPU suites."""
    need = contract.gpu_needs(spec)
    nodes, tasks = step_geometry(spec, allocation_nodes)
    k = tasks_per_node_at_most(spec, allocation_nodes)
    starts = range(0, tasks, k) if nodes * k == tasks else range(max(1, tasks - k + 1))
    return max(sum(need[i : i + k]) for i in starts)


def step_name(spec: RunSpec) -> str:
    return f"tfscale-{spec.config_id}"


# In the batch script the CPUs of a node are known only inside the job: the shell divides them among the tasks.
CPUS_ON_NODE_SHELL = "$(( SLURM_CPUS_ON_NODE / {k} ))"


def srun_argv(
    spec: RunSpec,
    allocation_nodes: int,
    worker: list[str],
    job_id: str | None = None,
    cpus_per_node: int | str | None = None,
) -> list[str]:
    """The `srun` line of one config's job step, for `tfscale run --launcher slurm` (with the job id of its
    allocation) and for the batch script `tfscale launch --target slurm` writes (inside the job: no id).

    CPU suites overcommit (several ranks may share a core on a small test host). GPU suites place tasks by block
    with at most k per node, ask for each node's GPUs (step_gpus_per_node; the ranks split them with
    contract.place_gpus) and give each task its share of the node's CPUs (`cpus_per_node` // k; the default
    binding of one CPU per task would leave an 8-GPU process on one core)."""
    nodes, tasks = step_geometry(spec, allocation_nodes)
    minutes = max(1, math.ceil(spec.timeout_s / 60))  # Slurm's own limit on the step, beside tfscale's watchdog
    jobid = [f"--jobid={job_id}"] if job_id else []
    if spec.device == "gpu":
        k = tasks_per_node_at_most(spec, allocation_nodes)
        placing = [f"--ntasks-per-node={k}", "--distribution=block"]
        gpus = step_gpus_per_node(spec, allocation_nodes)
        placing += [f"--gpus-per-node={gpus}"] if gpus else []
        if isinstance(cpus_per_node, int):
            placing.append(f"--cpus-per-task={max(1, cpus_per_node // k)}")
        elif isinstance(cpus_per_node, str):
            placing.append(f"--cpus-per-task={cpus_per_node.format(k=k)}")
    else:
        placing = ["--overcommit"]
    return [
        "srun",
        *jobid,
        f"--nodes={nodes}",
        f"--ntasks={tasks}",
        *placing,
        f"--job-name={step_name(spec)}",
        "--kill-on-bad-exit=1",
        f"--time={minutes}",
        "--export=ALL",
        *worker,
    ]


def script_line(argv: list[str]) -> str:
    """A command line for the batch script: every argument quoted but the shell arithmetic of CPUS_ON_NODE_SHELL."""
    return " ".join(a if a.startswith("--cpus-per-task=$") else shlex.quote(a) for a in argv)


def batch_time_limit(specs) -> str:
    """A batch job's time limit that covers its steps run one after another: the sum of each step's own limit
    (srun_argv's --time, timeout_s rounded up to minutes) over every repeat of every config, as Slurm's H:MM:00."""
    minutes = sum(max(1, math.ceil(s.timeout_s / 60)) * s.repeats for s in specs)  # each repeat is a step
    return f"{minutes // 60}:{minutes % 60:02d}:00"


def allocation_gpu_args(specs: tuple[RunSpec, ...], allocation_nodes: int) -> list[str]:
    """What the allocation asks for on GPU suites: the most GPUs per node any step asks for, and whole nodes
    (--exclusive: every CPU of the node, for the steps to share out)."""
    gpus = max((step_gpus_per_node(s, allocation_nodes) for s in specs), default=0)
    return [f"--gpus-per-node={gpus}", "--exclusive"] if gpus else []


def step_env(port_base: int) -> dict[str, str]:
    """What every rank of a step needs besides Slurm's own variables: build its cluster from them
    (worker.cluster.slurm_environment) on ports from `port_base`, and take its share of the step's GPUs."""
    return {contract.RESOLVER_ENV: contract.RESOLVER_SLURM, contract.PORT_BASE_ENV: str(port_base)}


def slurm_reason(output: str) -> str | None:
    """Slurm's own words about a step that did not end well: its state line (cancelled, time limit, node
    failure) when there is one, else srun's last error line."""
    found = SLURM_STATE.findall(output) or SLURM_ERROR.findall(output)
    return found[-1].strip() if found else None


def _scancel(job_id: str, step_id: str | None = "") -> None:
    """Cancel the job, or one of its steps; nothing when the step never appeared (step_id None)."""
    if step_id is None:
        return
    target = f"{job_id}.{step_id}" if step_id else job_id
    subprocess.run(["scancel", target], capture_output=True, timeout=30, check=False)


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text else None
    except ValueError:
        return None


def _squeue(*args: str) -> str:
    try:
        done = subprocess.run(["squeue", "-h", *args], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip()


@dataclass
class Allocation:
    """Context manager: the job the steps run in. Reports while the request waits in the queue."""

    options: SlurmOptions
    nodes: int
    name: str
    echo: Callable[[str], None] = print
    gpu_args: list[str] = field(default_factory=list)  # allocation_gpu_args: GPU suites only
    job_id: str = ""
    owned: bool = False
    node_count: int = 0
    cpus_per_node: int | None = None  # CPUs of each node in the allocation (None: not known)
    _stderr: list[str] = field(default_factory=list)

    def __enter__(self) -> Allocation:
        if os.environ.get("SLURM_JOB_ID"):
            self.job_id = os.environ["SLURM_JOB_ID"]
            self.node_count = int(os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or 1)
            self.cpus_per_node = _int(os.environ.get("SLURM_CPUS_ON_NODE"))
            self.echo(f"slurm: running inside job {self.job_id} ({self.node_count} node(s))")
            return self
        argv = self.options.salloc_args(self.nodes, self.name, self.gpu_args)
        process = subprocess.Popen(
            argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        reader = threading.Thread(target=lambda: self._stderr.extend(process.stderr), daemon=True)
        reader.start()
        try:
            self._wait(process)
        except BaseException:
            kill_tree(process)
            self._cancel()
            raise
        reader.join(timeout=5)
        if process.returncode != 0 or not self.job_id:
            self._cancel()
            raise TfscaleError(f"slurm: {' '.join(argv)} failed: {''.join(self._stderr).strip()[-300:]}")
        self.owned = True
        self.node_count = self.nodes
        cpus, _, nodes = _squeue("-j", self.job_id, "-o", "%C %D").partition(" ")
        self.cpus_per_node = _int(cpus) // _int(nodes) if _int(cpus) and _int(nodes) else None
        self.echo(f"slurm: allocation {self.job_id} granted ({self.nodes} node(s))")
        return self

    def _wait(self, process: subprocess.Popen) -> None:
        last_note = 0.0
        while process.poll() is None:
            self._find_id()
            now = time.monotonic()
            if self.job_id and now - last_note > PENDING_NOTE_S:
                state = _squeue("-j", self.job_id, "-o", "%T %r") or "?"
                self.echo(f"slurm: waiting for allocation {self.job_id}: {state}")
                last_note = now
            time.sleep(POLL_S)
        self._find_id()

    def _find_id(self) -> None:
        if not self.job_id:
            for line in list(self._stderr):
                match = re.search(r"job allocation (\d+)", line)
                if match:
                    self.job_id = match.group(1)

    def _cancel(self) -> None:
        if self.job_id:
            _scancel(self.job_id)

    def __exit__(self, *exc) -> None:
        if self.owned:
            self._cancel()


@dataclass(frozen=True)
class StepOutcome:
    returncode: int | None  # None: stopped by tfscale's watchdog
    stopped: str | None  # STOPPED_* when tfscale's watchdog cancelled the step
    duration_s: float
    job_id: str
    step_id: str | None
    slurm_reason: str | None
    log_text: str = ""  # what the step wrote to the log (srun's and every rank's output)

    @property
    def timed_out(self) -> bool:
        return self.stopped == STOPPED_TIMEOUT


def port_clash(step: StepOutcome) -> bool:
    """Whether a step failed because a rank could not bind its port (contract.PORT_BASE_ENV + its local rank was
    free on the submit host, where it was picked, but taken on the rank's node): a relaunch on other ports helps."""
    return step.returncode not in (None, 0) and any(marker in step.log_text for marker in RELAUNCH_MARKERS)


def _step_id(job_id: str, name: str) -> str | None:
    for line in _squeue("-s", "-j", job_id, "-o", "%i %j").splitlines():
        step, _, step_name = line.partition(" ")
        if step_name.strip() == name and "." in step:
            return step.split(".", 1)[1]
    return None


def run_step(
    spec: RunSpec,
    job_id: str,
    argv: list[str],
    log_path: Path,
    env: dict[str, str],
    timeout_s: float,
    watch: ProgressWatch | None = None,
) -> StepOutcome:
    """Run one config as a job step; cancel it (scancel) after `timeout_s` or when `watch` (its trainers' startup
    and stall deadlines) says so. srun's output goes to log_path."""
    name = step_name(spec)
    start = time.monotonic()
    step_id, stopped = None, None
    with open(log_path, "ab") as log:
        offset = log.tell()
        log.write(f"--- tfscale: {' '.join(argv)}\n".encode())
        log.flush()
        process = start_worker(argv, log, {**os.environ, **env}, worker=False)  # srun: its ranks are slurmstepd's
        try:
            while process.poll() is None:
                now = time.monotonic()
                stopped = STOPPED_TIMEOUT if now - start >= timeout_s else watch.check(now) if watch else None
                if stopped is not None:
                    break
                step_id = step_id or _step_id(job_id, name)
                time.sleep(POLL_S)
            if stopped is not None:
                step_id = step_id or _step_id(job_id, name)
                _scancel(job_id, step_id)
        except BaseException:
            with contextlib.suppress(Exception):
                _scancel(job_id, step_id or _step_id(job_id, name))
            kill_tree(process)
            raise
        kill_tree(process)
    with open(log_path, "rb") as log:
        log.seek(offset)
        text = log.read().decode(errors="replace")
    return StepOutcome(
        None if stopped else process.returncode,
        stopped,
        time.monotonic() - start,
        job_id,
        step_id,
        slurm_reason(text),
        text,
    )


class SlurmLauncher(Launcher):
    """Every config a job step in one allocation, held from `with` to its end (none is asked for when there is
    nothing to run). Ranks write their parts into the run folder, which must be on a filesystem the nodes share."""

    name = "slurm"

    def __init__(
        self, options: SlurmOptions, specs: tuple[RunSpec, ...], job_name: str, echo: Callable[[str], None] = print
    ):
        self.needed = bool(specs)
        nodes = allocation_nodes(specs, partition_nodes(options)) if specs else 1
        self.allocation = Allocation(options, nodes, job_name, echo, allocation_gpu_args(specs, nodes))

    def __enter__(self) -> SlurmLauncher:
        if self.needed:
            self.allocation.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.needed:
            self.allocation.__exit__(*exc)

    def unavailable(self, spec: RunSpec) -> str | None:
        return local_only("a Slurm cluster") if spec.network_link is not None else None

    @classmethod
    def not_emitted(cls, plan, options) -> dict[str, str]:
        return {s.config_id: local_only("a Slurm cluster") for s in plan.specs if s.network_link is not None}

    def run(self, job: Job) -> Outcome:
        # the ranks may start in another folder, on other nodes: every path absolute
        job = dataclasses.replace(job, work=job.work.resolve(), spec_path=job.spec_path.resolve())
        step, attempts, watch = self._run_steps(job)
        tasks = job.tasks
        parts = {task.name: read_json(job.result_path(task)) for task in tasks}
        label = f"step {step.job_id}.{step.step_id}" if step.step_id is not None else f"job {step.job_id}"
        cluster = job.spec.cluster
        outcome = Outcome(
            step.duration_s,
            parts,
            [t.name for t in tasks if t.trainer],
            job.logs / f"{job.prefix}.log",
            columns={
                m.SLURM_JOB_ID: step.job_id,
                m.SLURM_STEP_ID: step.step_id,
                m.CLUSTER: contract.job_counts(tasks) if cluster else None,
                m.PORT_RETRIES: attempts - 1 if cluster else None,
            },
            process="srun",
        )
        if step.stopped is not None:
            outcome.stopped, outcome.stopped_how = step.stopped, f"{label} cancelled"
            if watch is not None:
                outcome.phases = watch.phases()
        elif step.returncode != 0 or not outcome.ok:
            outcome.failed, outcome.returncode = label, step.returncode
            outcome.launcher_reason = step.slurm_reason
            outcome.time_limit = "TIME LIMIT" in (step.slurm_reason or "")
        return outcome

    def _watch(self, job: Job, start: float) -> ProgressWatch:
        """The startup and stall deadlines of a cluster's trainers (none for one process: timeout_s covers it), as
        the local launcher's watchdog has them (tasks.Watch)."""
        watch = Watch.of(job.spec)
        trainers = [task for task in job.tasks if task.trainer]
        return ProgressWatch(
            {task.name: job.progress_path(task) for task in trainers},
            {task.name: job.result_path(task) for task in trainers},
            start,
            watch.startup_s,
            watch.stall_s,
        )

    def _run_steps(self, job: Job) -> tuple[StepOutcome, int, ProgressWatch | None]:
        """Run the config's step, again on other ports (up to MAX_ATTEMPTS, within timeout_s in all) when a rank
        could not bind its port. Returns the last step, the number of attempts and the watch it ran under."""
        allocation = self.allocation
        argv = srun_argv(
            job.spec, allocation.node_count, job.argv(job.result_path()), allocation.job_id, allocation.cpus_per_node
        )
        start = time.monotonic()
        for attempt in range(1, MAX_ATTEMPTS + 1):
            for task in job.tasks:  # a relaunch must not read the failed attempt's files
                Path(job.result_path(task)).unlink(missing_ok=True)
                Path(job.progress_path(task)).unlink(missing_ok=True)
            env = step_env(pick_ports(1)[0]) | {contract.PROGRESS_ENV: str(job.progress_path())}
            remaining = job.spec.timeout_s - (time.monotonic() - start)
            watch = self._watch(job, time.monotonic()) if job.spec.cluster else None
            step = run_step(job.spec, allocation.job_id, argv, job.logs / f"{job.prefix}.log", env, remaining, watch)
            in_time = time.monotonic() - start < job.spec.timeout_s
            if not (job.spec.cluster and port_clash(step) and attempt < MAX_ATTEMPTS and in_time):
                break
        return dataclasses.replace(step, duration_s=time.monotonic() - start), attempt, watch

    @classmethod
    def script(cls, plan, out: Path, options) -> dict[str, str]:
        """An sbatch script: the allocation fits the largest config; one srun job step per config, in order."""
        most_nodes = max(s.nodes for s in plan.specs)
        most_tasks = max(len(contract.tasks_of(s)) for s in plan.specs)
        checks.check_port("--port-base", options.port_base, most_tasks)  # a node may hold every task of a step
        gpu_args = allocation_gpu_args(plan.specs, most_nodes)
        lines = [
            "#!/bin/bash",
            f"#SBATCH --job-name=tfscale-{plan.suite.name}",
            f"#SBATCH --nodes={most_nodes}",
            f"#SBATCH --ntasks={most_tasks}",
            f"#SBATCH --time={options.time_limit or batch_time_limit(plan.specs)}",
            f"#SBATCH --output=tfscale-{plan.suite.name}-%j.out",
        ]
        lines += [f"#SBATCH --partition={options.partition}"] * bool(options.partition)
        lines += [f"#SBATCH --account={options.account}"] * bool(options.account)
        lines += [f"#SBATCH {arg}" for arg in gpu_args]
        lines += [
            "# Generated by tfscale launch. Submit it from this folder: sbatch slurm.sbatch",
            "set -u",
            # sbatch runs a spool copy of this script: $0 is not here, the folder it was submitted from is
            'cd "${SLURM_SUBMIT_DIR:-.}"',
            *(f"export {name}={value}" for name, value in step_env(options.port_base).items()),
            "",
        ]
        for process in launched_processes(plan.specs, cls.not_emitted(plan, options)):
            spec = process.spec
            tasks = contract.tasks_of(spec)
            # Each rank finds its task from Slurm's variables; the worker fills contract.TASK_FIELD in with it.
            worker = contract.worker_argv(
                result_template(process.name), contract.TRAIN, spec_file(spec), worker_python(options, sys.executable)
            )
            lines += [
                f"{config_comment(spec)}, {spec.nodes} node(s) x {spec.devices_per_node} "
                f"device(s), tasks {json.dumps(contract.job_counts(tasks))}{process.note()}",
                script_line(srun_argv(spec, most_nodes, worker, cpus_per_node=CPUS_ON_NODE_SHELL)),
                "",
            ]
        return {"slurm.sbatch": "\n".join(lines)}
