"""Slurm launcher: the sweep runs inside one Slurm allocation (the current one when tfscale itself runs in a job,
else one requested with `salloc --no-shell` and cancelled at the end), each config as one `srun` job step whose
ranks find their cluster with TF's SlurmClusterResolver and write their result parts to the run folder, which
must be on a filesystem the nodes share. Never imports TensorFlow.

A step that fails, runs past its limit or is cancelled (`scancel`) ends with srun's exit status and Slurm's own
message (e.g. "*** STEP 12.3 ON n1 CANCELLED AT ... DUE TO TIME LIMIT ***"), which becomes the record's reason.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tfscale.errors import TfscaleError
from tfscale.launch.cluster import PROGRESS_ENV, cluster_tasks, pick_ports
from tfscale.launch.local import kill_tree, start_worker
from tfscale.spec import RunSpec
from tfscale.worker.cluster import (  # the names the ranks read (no TensorFlow import)
    PORT_BASE_ENV,
    RESOLVER_ENV,
)

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

    def salloc_args(self, nodes: int, name: str) -> list[str]:
        args = ["salloc", "--no-shell", f"--nodes={nodes}", f"--job-name={name}"]
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
    tasks = len(cluster_tasks(spec.strategy, spec.nodes, spec.num_ps)) if spec.cluster else 1
    return max(1, min(spec.nodes, allocation_nodes, tasks)), tasks


def step_argv(spec: RunSpec, job_id: str, allocation_nodes: int, worker: list[str]) -> list[str]:
    nodes, tasks = step_geometry(spec, allocation_nodes)
    minutes = max(1, math.ceil(spec.timeout_s / 60))  # Slurm's own limit on the step, beside tfscale's watchdog
    return ["srun", f"--jobid={job_id}", f"--nodes={nodes}", f"--ntasks={tasks}", "--overcommit",
            f"--job-name=tfscale-{spec.config_id}", "--kill-on-bad-exit=1", f"--time={minutes}", "--export=ALL",
            *worker]


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
    job_id: str = ""
    owned: bool = False
    node_count: int = 0
    _stderr: list[str] = field(default_factory=list)

    def __enter__(self) -> Allocation:
        if os.environ.get("SLURM_JOB_ID"):
            self.job_id = os.environ["SLURM_JOB_ID"]
            self.node_count = int(os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or 1)
            self.echo(f"slurm: running inside job {self.job_id} ({self.node_count} node(s))")
            return self
        argv = self.options.salloc_args(self.nodes, self.name)
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
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
    timed_out: bool
    duration_s: float
    job_id: str
    step_id: str | None
    slurm_reason: str | None


def _step_id(job_id: str, name: str) -> str | None:
    for line in _squeue("-s", "-j", job_id, "-o", "%i %j").splitlines():
        step, _, step_name = line.partition(" ")
        if step_name.strip() == name and "." in step:
            return step.split(".", 1)[1]
    return None


def run_step(spec: RunSpec, allocation: Allocation, worker: list[str], log_path: Path,
             progress_path: Path) -> StepOutcome:
    """Run one config as a job step; stop it (scancel) after spec.timeout_s. srun's output goes to log_path."""
    env = {**os.environ, PORT_BASE_ENV: str(pick_ports(1)[0]), PROGRESS_ENV: str(progress_path)}
    if spec.cluster:
        env[RESOLVER_ENV] = "slurm"
    name = f"tfscale-{spec.config_id}"
    argv = step_argv(spec, allocation.job_id, allocation.node_count, worker)
    start = time.monotonic()
    step_id = None
    with open(log_path, "ab") as log:
        log.write(f"--- tfscale: {' '.join(argv)}\n".encode())
        log.flush()
        process = start_worker(argv, log, env)
        try:
            while process.poll() is None and time.monotonic() - start < spec.timeout_s:
                step_id = step_id or _step_id(allocation.job_id, name)
                time.sleep(POLL_S)
            timed_out = process.poll() is None
            if timed_out:
                step_id = step_id or _step_id(allocation.job_id, name)
                _scancel(allocation.job_id, step_id)
        except BaseException:
            with contextlib.suppress(Exception):
                _scancel(allocation.job_id, step_id or _step_id(allocation.job_id, name))
            kill_tree(process)
            raise
        kill_tree(process)
    text = log_path.read_text(encoding="utf-8", errors="replace")
    return StepOutcome(None if timed_out else process.returncode, timed_out, time.monotonic() - start,
                       allocation.job_id, step_id, slurm_reason(text))

