"""Cluster launcher: one process per TF task (MultiWorkerMirrored workers; ParameterServer chief, workers and
parameter servers), each with its own TF_CONFIG, on ports picked here, all bound to 127.0.0.1 or, on simulated
hosts, each to its node's address inside its node's network namespace (a `Placement`).

The launcher is also the watchdog: the config's timeout covers the whole cluster; the first task to fail stops
all the others (survivors of a lost peer would otherwise wait up to an hour in TF); ParameterServer servers, which
never exit on their own, are stopped when the chief is done. A task that could not bind its port (taken between
picking and binding) makes the launcher pick new ports and relaunch, a bounded number of times.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tfscale.launch.local import kill_trees, start_worker

HOST = "127.0.0.1"
PORT_CLASH_MARKERS = ("Could not start gRPC server", "Address already in use", "Failed to add port")
MAX_ATTEMPTS = 3
POLL_S = 0.1
PROGRESS_ENV = "TFSCALE_PROGRESS"  # tfscale.worker.cluster reads the same name


@dataclass(frozen=True)
class Task:
    job: str  # "worker", "ps" or "chief" (TF_CONFIG job names)
    index: int
    trainer: bool  # runs the training loop and writes a result part; servers are stopped when trainers finish

    @property
    def name(self) -> str:
        return f"{self.job}-{self.index}"


def cluster_tasks(strategy: str, workers: int, num_ps: int | None) -> list[Task]:
    """MultiWorkerMirrored: `workers` trainer workers. ParameterServer: a trainer chief (the coordinator),
    `workers` server workers and `num_ps` parameter servers."""
    if strategy == "multi_worker_mirrored":
        return [Task("worker", i, True) for i in range(workers)]
    if strategy == "parameter_server":
        return ([Task("chief", 0, True)] + [Task("worker", i, False) for i in range(workers)]
                + [Task("ps", i, False) for i in range(num_ps or 1)])
    raise ValueError(f"{strategy} is not a cluster strategy")


def job_counts(tasks: list[Task]) -> dict[str, int]:
    """Tasks per TF job, e.g. {"chief": 1, "worker": 2, "ps": 1}: SlurmClusterResolver's `jobs` argument."""
    counts: dict[str, int] = {}
    for task in tasks:
        counts[task.job] = counts.get(task.job, 0) + 1
    return counts


def node_of(task: Task, nodes: int) -> int:
    """The node a task runs on: worker i on node i; the ParameterServer chief on node 0, server j on j mod nodes."""
    return task.index % nodes if task.job in ("worker", "ps") else 0


def _loopback(task: Task) -> str:
    return HOST


def _unwrapped(task: Task, argv: list[str]) -> list[str]:
    return argv


@dataclass(frozen=True)
class Placement:
    """Where each task runs: its address in the cluster spec, and how its command is started there."""

    address: Callable[[Task], str] = _loopback
    wrap: Callable[[Task, list[str]], list[str]] = _unwrapped


LOOPBACK = Placement()


def pick_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 right now (the OS picks; another process may still take one before TF binds)."""
    sockets, ports = [], []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
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


def tf_config(cluster: dict[str, list[str]], task: Task) -> str:
    return json.dumps({"cluster": cluster, "task": {"type": task.job, "index": task.index}})


@dataclass
class TaskRun:
    task: Task
    log_path: Path
    result_path: Path
    progress_path: Path
    returncode: int | None = None  # None: still running when the cluster was stopped


@dataclass
class ClusterOutcome:
    runs: list[TaskRun]
    stopped: str | None  # why the watchdog stopped the cluster: "timeout", "startup", "stall"; None otherwise
    duration_s: float
    attempts: int
    failed: TaskRun | None = None  # the first task that failed, when one did
    port_clashes: list[str] = field(default_factory=list)  # task names that could not bind, per failed attempt

    def progress(self) -> dict[str, str]:
        """Last phase each task reported ("" when it reported none)."""
        phases = {}
        for run in self.runs:
            try:
                phases[run.task.name] = run.progress_path.read_text(encoding="utf-8")
            except OSError:
                phases[run.task.name] = ""
        return phases


def _log_since(path: Path, offset: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")
    except OSError:
        return ""


@dataclass(frozen=True)
class Watch:
    """The watchdog's limits, in seconds: the whole cluster, joining it, and the longest silence of a trainer
    between two progress reports once it has joined."""

    timeout_s: float
    startup_s: float
    stall_s: float | None = None


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


def _attempt(runs: list[TaskRun], argv_for: Callable[[TaskRun], list[str]], cluster: dict[str, list[str]],
             deadline: float, watch: Watch, placement: Placement) -> tuple[str | None, TaskRun | None]:
    """Start every task, watch them, stop them all. Returns (why it was stopped early: "timeout", "startup" or
    "stall", first failed task)."""
    processes: dict[str, subprocess.Popen] = {}
    logs = []
    try:
        for run in runs:
            run.returncode = None
            run.result_path.unlink(missing_ok=True)
            run.progress_path.unlink(missing_ok=True)
            log = open(run.log_path, "ab")  # noqa: SIM115 (closed in finally, after the process is gone)
            logs.append(log)
            env = {**os.environ, "TF_CONFIG": tf_config(cluster, run.task), PROGRESS_ENV: str(run.progress_path)}
            processes[run.task.name] = start_worker(placement.wrap(run.task, argv_for(run)), log, env)
        startup_deadline = time.monotonic() + watch.startup_s
        while True:
            for run in runs:
                run.returncode = processes[run.task.name].poll()
            failed = [r for r in runs if r.returncode not in (None, 0) or (not r.task.trainer and r.returncode == 0)]
            if failed:
                # Peers of a lost task fail too within a poll (UnavailableError): name a task killed by a signal
                # first, as the likelier cause.
                return None, min(failed, key=lambda r: (r.returncode is None or r.returncode >= 0))
            if all(r.returncode == 0 for r in runs if r.task.trainer):
                return None, None
            now = time.monotonic()
            if now > deadline:
                return "timeout", None
            # A peer that never starts leaves the others waiting in the strategy constructor (for an hour in TF):
            # every trainer must have formed the cluster ("strategy ready") by the startup deadline.
            if now > startup_deadline and not all(r.progress_path.exists() for r in runs if r.task.trainer):
                return "startup", None
            if _stalled(runs, watch.stall_s, time.time()):  # progress files carry wall-clock mtimes
                return "stall", None
            time.sleep(POLL_S)
    finally:
        kill_trees(list(processes.values()))
        for log in logs:
            log.close()


def run_cluster(tasks: list[Task], argv_for: Callable[[TaskRun], list[str]], work_dir: Path, log_dir: Path,
                prefix: str, watch: Watch, pick: Callable[[int], list[int]] | None = None,
                max_attempts: int = MAX_ATTEMPTS, placement: Placement = LOOPBACK) -> ClusterOutcome:
    """Run one cluster to completion (or failure, or timeout) and leave no process behind.

    `pick(n)` gives n ports (default: pick_ports, looked up at call time so tests can replace it)."""
    pick = pick or pick_ports
    runs = [TaskRun(t, log_dir / f"{prefix}.{t.name}.log", work_dir / f"{prefix}.{t.name}.result.json",
                    work_dir / f"{prefix}.{t.name}.progress") for t in tasks]
    start = time.monotonic()
    deadline = start + watch.timeout_s
    clashes: list[str] = []
    for attempt in range(1, max_attempts + 1):
        offsets = {r.task.name: r.log_path.stat().st_size if r.log_path.exists() else 0 for r in runs}
        cluster = cluster_spec(tasks, pick(len(tasks)), placement)
        for run in runs:
            with open(run.log_path, "a", encoding="utf-8") as log:
                log.write(f"--- tfscale: attempt {attempt}, {run.task.name}, cluster {json.dumps(cluster)}\n")
        stopped, failed = _attempt(runs, argv_for, cluster, deadline, watch, placement)
        clashed = [r.task.name for r in runs
                   if any(marker in _log_since(r.log_path, offsets[r.task.name]) for marker in PORT_CLASH_MARKERS)]
        if failed is not None and clashed and attempt < max_attempts and time.monotonic() < deadline:
            clashes += clashed
            continue
        return ClusterOutcome(runs, stopped, time.monotonic() - start, attempt, failed, clashes)
    raise AssertionError("unreachable")
