"""A config's tasks as processes on this host: ports picked, each task started with its TF_CONFIG, watched
(timeout, startup, stall, the first failure stops the others) and relaunched on fresh ports after a transient
failure. The local launcher runs its jobs through it; Slurm shares its watch and relaunch rules.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tfscale import contract
from tfscale.contract import LOOPBACK, LOOPBACK_HOST, Placement, Task
from tfscale.launch.base import (
    STOPPED_STALL,
    STOPPED_STARTUP,
    STOPPED_TIMEOUT,
)
from tfscale.launch.processes import kill_trees, start_worker
from tfscale.launch.watchdog import read_phases
from tfscale.launch.zygote import ForkedWorker
from tfscale.suite.spec import RunSpec

# A cluster's failures that a fresh attempt on freshly picked ports cures: a picked port taken by another process
# before TF bound it, and gRPC's "Unable to parse request", seen once (a ParameterServer worker of a fresh-clone
# quickstart) while another suite's clusters ran on loopback beside it; its 3 reruns passed.
RELAUNCH_MARKERS = (
    "Could not start gRPC server",
    "Address already in use",
    "Failed to add port",
    "Unable to parse request",
)

MAX_ATTEMPTS = 3

POLL_S = 0.1


def pick_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 right now (the OS picks; another process may still take one before TF binds)."""
    sockets, ports = [], []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((LOOPBACK_HOST, 0))
            sockets.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in sockets:
            s.close()
    return ports


def cluster_spec(tasks: list[Task], ports: list[int], placement: Placement = LOOPBACK) -> dict[str, list[str]]:
    spec: dict[str, list[str]] = {}
    for task, port in zip(tasks, ports, strict=True):
        spec.setdefault(task.job, []).append(f"{placement.address(task)}:{port}")
    return spec


@dataclass
class TaskRun:
    task: Task
    log_path: Path
    result_path: Path
    progress_path: Path
    returncode: int | None = None  # None: still running when the job was stopped


@dataclass(frozen=True)
class Watch:
    """The watchdog's limits, in seconds: the whole job; for clusters also joining it (None: not watched) and the
    longest silence of a trainer between two progress reports once it has joined (None: not watched)."""

    timeout_s: float
    startup_s: float | None = None
    stall_s: float | None = None

    @classmethod
    def of(cls, spec: RunSpec) -> Watch:
        """Startup and stall deadlines apply to clusters, where a lost peer leaves the others waiting."""
        if spec.cluster:
            return cls(spec.timeout_s, spec.startup_timeout_s, spec.stall_timeout_s)
        return cls(spec.timeout_s)


@dataclass
class Attempts:
    """What running a job's tasks (with relaunches after transient cluster failures) came to."""

    runs: list[TaskRun]
    stopped: str | None  # STOPPED_* when the watchdog stopped the tasks
    duration_s: float
    attempts: int
    failed: TaskRun | None = None  # the first task that failed, when one did

    def phases(self) -> dict[str, str]:
        """Last phase each task reported ("" when it reported none)."""
        return read_phases({run.task.name: run.progress_path for run in self.runs})


def _transient(runs: list[TaskRun], offsets: dict[str, int]) -> bool:
    """Whether a task logged one of RELAUNCH_MARKERS since `offsets` (each log's size when the attempt began)."""
    logs = (_log_since(r.log_path, offsets[r.task.name]) for r in runs)
    return any(marker in log for log in logs for marker in RELAUNCH_MARKERS)


def _log_since(path: Path, offset: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _stalled(runs: list[TaskRun], stall_s: float | None, now: float) -> bool:
    if stall_s is None:
        return False
    for run in runs:
        if run.task.trainer and run.returncode is None:
            try:
                if now - run.progress_path.stat().st_mtime > stall_s:
                    return True
            except OSError:  # not joined yet: the startup deadline covers it
                continue
    return False


def _attempt(
    runs: list[TaskRun],
    argv_for: Callable[[TaskRun], list[str]],
    env_for: Callable[[TaskRun], dict[str, str]],
    deadline: float,
    watch: Watch,
    placement: Placement,
    fork: bool,
) -> tuple[str | None, TaskRun | None]:
    """Start every task, watch them, stop them all. Returns (why the watchdog stopped them early, first failed
    task)."""
    processes: dict[str, subprocess.Popen | ForkedWorker] = {}
    logs = []
    try:
        for run in runs:
            run.returncode = None
            run.result_path.unlink(missing_ok=True)
            run.progress_path.unlink(missing_ok=True)
            log = open(run.log_path, "ab")  # noqa: SIM115 (closed in finally, after the process is gone)
            logs.append(log)
            env = {**os.environ, **env_for(run), contract.PROGRESS_ENV: str(run.progress_path)}
            processes[run.task.name] = start_worker(placement.wrap(run.task, argv_for(run)), log, env, fork=fork)
        startup_deadline = None if watch.startup_s is None else time.monotonic() + watch.startup_s
        while True:
            for run in runs:
                run.returncode = processes[run.task.name].poll()
            failed = [r for r in runs if r.returncode not in (None, 0) or (not r.task.trainer and r.returncode == 0)]
            if failed:
                # Peers of a lost task fail too within a poll (UnavailableError): name a task killed by a signal
                # first, as the likelier cause.
                return None, min(failed, key=lambda r: r.returncode is None or r.returncode >= 0)
            if all(r.returncode == 0 for r in runs if r.task.trainer):
                return None, None
            now = time.monotonic()
            if now > deadline:
                return STOPPED_TIMEOUT, None
            # A peer that never starts leaves the others waiting in the strategy constructor (for an hour in TF):
            # every trainer must have formed the cluster ("strategy ready") by the startup deadline.
            if (
                startup_deadline is not None
                and now > startup_deadline
                and not all(r.progress_path.exists() for r in runs if r.task.trainer)
            ):
                return STOPPED_STARTUP, None
            if _stalled(runs, watch.stall_s, time.time()):  # progress files carry wall-clock mtimes
                return STOPPED_STALL, None
            time.sleep(POLL_S)
    finally:
        kill_trees(list(processes.values()))
        for log in logs:
            log.close()


def run_tasks(
    runs: list[TaskRun],
    argv_for: Callable[[TaskRun], list[str]],
    watch: Watch,
    cluster: bool,
    placement: Placement = LOOPBACK,
    max_attempts: int = MAX_ATTEMPTS,
    task_env: dict[str, dict[str, str]] | None = None,
    fork: bool = False,
) -> Attempts:
    """Run one job's tasks to completion (or failure, or timeout) and leave no process behind. Cluster tasks get
    TF_CONFIG on freshly picked ports (pick_ports, looked up at call time so tests can replace it); each task also
    gets `task_env[its name]` (its CUDA_VISIBLE_DEVICES). `fork`: the tasks may be forked by the zygote (CPU
    configs; launch.processes.start_worker)."""
    task_env = task_env or {}
    tasks = [run.task for run in runs]
    start = time.monotonic()
    deadline = start + watch.timeout_s
    for attempt in range(1, max_attempts + 1):
        offsets = {r.task.name: r.log_path.stat().st_size if r.log_path.exists() else 0 for r in runs}
        addresses = cluster_spec(tasks, pick_ports(len(tasks)), placement) if cluster else None
        if addresses is not None:
            for run in runs:
                with open(run.log_path, "a", encoding="utf-8") as log:
                    log.write(f"--- tfscale: attempt {attempt}, {run.task.name}, cluster {json.dumps(addresses)}\n")

        def env_for(run: TaskRun, addresses=addresses) -> dict[str, str]:
            own = task_env.get(run.task.name, {})
            if addresses is None:
                return own
            return own | {contract.TF_CONFIG_ENV: contract.tf_config(addresses, run.task)}

        stopped, failed = _attempt(runs, argv_for, env_for, deadline, watch, placement, fork)
        may_relaunch = cluster and failed is not None and attempt < max_attempts and time.monotonic() < deadline
        if may_relaunch and _transient(runs, offsets):  # the logs are read only when a relaunch could follow
            continue
        return Attempts(runs, stopped, time.monotonic() - start, attempt, failed)
    raise AssertionError("unreachable")
