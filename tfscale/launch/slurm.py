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
import os
import re
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
from tfscale.launch.srun import (
    CPUS_ON_NODE_SHELL,
    SlurmOptions,
    allocation_gpu_args,
    allocation_nodes,
    batch_time_limit,
    script_line,
    slurm_reason,
    srun_argv,
    step_env,
    step_name,
)
from tfscale.launch.tasks import MAX_ATTEMPTS, RELAUNCH_MARKERS, Watch, pick_ports
from tfscale.launch.watchdog import ProgressWatch
from tfscale.store.records import read_json
from tfscale.suite.spec import RunSpec

TOOLS = ("salloc", "srun", "squeue", "scancel")
POLL_S = 0.5
PENDING_NOTE_S = 10.0  # how often a waiting allocation is reported


def unavailable_reason() -> str | None:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    return f"--launcher slurm needs the Slurm client tools ({', '.join(missing)} not found)" if missing else None


def partition_nodes(options: SlurmOptions) -> int | None:
    """Nodes of the partition the allocation is asked from (None when sinfo cannot say)."""
    argv = ["sinfo", "-h", "-o", "%D"] + ([f"--partition={options.partition}"] if options.partition else [])
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        return sum(int(n) for n in done.stdout.split()) or None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


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
