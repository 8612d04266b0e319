"""Local launcher: one process per task of a config on this host (a single-process config is a cluster of one
task). Cluster tasks (MultiWorkerMirrored workers; ParameterServer chief, workers and parameter servers) get their
own TF_CONFIG, on ports picked here, all bound to 127.0.0.1 or, on simulated hosts, each to its node's address
inside its node's network namespace (a `Placement` from tfscale.netsim.hosts).

The launcher is also the watchdog: the config's timeout covers all its tasks; the first task to fail stops the
others (survivors of a lost peer would otherwise wait up to an hour in TF); ParameterServer servers, which never
exit on their own, are stopped when the chief is done. A task that could not bind its port (taken between picking
and binding) makes the launcher pick new ports and relaunch, a bounded number of times.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tfscale import contract
from tfscale import metrics as m
from tfscale.contract import LOOPBACK, LOOPBACK_HOST, Placement, Task
from tfscale.launch.base import (
    STOPPED_STALL,
    STOPPED_STARTUP,
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
from tfscale.launch.processes import LIVE, kill_trees, start_worker
from tfscale.launch.watchdog import read_phases
from tfscale.netsim.hosts import cluster_hosts
from tfscale.netsim.network import NetworkError
from tfscale.netsim.network import unavailable_reason as network_unavailable
from tfscale.spec import RunSpec
from tfscale.store import read_json

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
) -> tuple[str | None, TaskRun | None]:
    """Start every task, watch them, stop them all. Returns (why the watchdog stopped them early, first failed
    task)."""
    processes: dict[str, subprocess.Popen] = {}
    logs = []
    try:
        for run in runs:
            run.returncode = None
            run.result_path.unlink(missing_ok=True)
            run.progress_path.unlink(missing_ok=True)
            log = open(run.log_path, "ab")  # noqa: SIM115 (closed in finally, after the process is gone)
            logs.append(log)
            env = {**os.environ, **env_for(run), contract.PROGRESS_ENV: str(run.progress_path)}
            processes[run.task.name] = start_worker(placement.wrap(run.task, argv_for(run)), log, env)
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
) -> Attempts:
    """Run one job's tasks to completion (or failure, or timeout) and leave no process behind. Cluster tasks get
    TF_CONFIG on freshly picked ports (pick_ports, looked up at call time so tests can replace it); each task also
    gets `task_env[its name]` (its CUDA_VISIBLE_DEVICES)."""
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

        stopped, failed = _attempt(runs, argv_for, env_for, deadline, watch, placement)
        may_relaunch = cluster and failed is not None and attempt < max_attempts and time.monotonic() < deadline
        if may_relaunch and _transient(runs, offsets):  # the logs are read only when a relaunch could follow
            continue
        return Attempts(runs, stopped, time.monotonic() - start, attempt, failed)
    raise AssertionError("unreachable")


class LocalLauncher(Launcher):
    """Processes on this host; simulated hosts (network_link) place each task in its node's network namespace."""

    name = "local"

    def __init__(self, gpus: list[str] | None = None) -> None:
        self._gpus = gpus  # the host's GPUs tasks may get (gpus.host_gpus), looked up on first need

    @property
    def gpus(self) -> list[str]:
        if self._gpus is None:
            from tfscale.gpus import host_gpus  # late: NVML is only asked on GPU suites

            self._gpus = host_gpus()
        return self._gpus

    def place(self, spec: RunSpec) -> dict[str, tuple[str, ...]]:
        """Each task's own GPUs on this host (every simulated node shares it); PlacementError when they do not
        fit. CPU configs: none."""
        return contract.place_on_host(spec, self.gpus) if spec.device == "gpu" else {}

    def sampled_gpus(self, spec: RunSpec) -> list[str] | None:
        if spec.device != "gpu":
            return None
        from tfscale.gpus import gpu_uuids, nvml_uuids

        try:
            placed = [gpu for gpus in self.place(spec).values() for gpu in gpus]
        except contract.PlacementError:
            return []
        return gpu_uuids(placed, nvml_uuids())

    def unavailable(self, spec: RunSpec) -> str | None:
        return network_unavailable() if spec.network_link is not None else None

    def live_pids(self) -> list[int]:
        return [p.pid for p in list(LIVE)]

    def run(self, job: Job) -> Outcome:
        spec = job.spec
        tasks = job.tasks
        runs = [
            TaskRun(task, job.logs / _log_name(job, task), job.result_path(task), job.progress_path(task))
            for task in tasks
        ]
        trainers = [run for run in runs if run.task.trainer]
        try:
            gpus = self.place(spec)
        except contract.PlacementError as error:
            return Outcome(0.0, {}, [r.task.name for r in trainers], None, failed="", launcher_reason=str(error))
        task_env = {
            name: {
                contract.VISIBLE_GPUS_ENV: contract.visible_gpus_value(own),
                contract.GPU_ORDER_ENV: contract.GPU_ORDER,
            }
            for name, own in gpus.items()
        }
        for name, value in contract.energy_gpus(tasks, gpus).items():  # the ParameterServer chief: its workers'
            task_env[name][contract.ENERGY_GPUS_ENV] = value
        nccl_on_link = link_nccl_env(spec, tasks)
        for name, env in nccl_on_link.items():
            task_env.setdefault(name, {}).update(env)
        try:
            with cluster_hosts(spec, job.run_id) as hosts:
                done = run_tasks(
                    runs,
                    lambda run: job.argv(run.result_path),
                    Watch.of(spec),
                    spec.cluster,
                    hosts.placement,
                    task_env=task_env,
                )
        except NetworkError as error:
            return Outcome(0.0, {}, [r.task.name for r in trainers], None, failed="", launcher_reason=str(error))
        parts = {run.task.name: read_json(run.result_path) for run in runs}
        columns = {}
        if spec.cluster:
            columns = {m.CLUSTER: contract.job_counts(tasks), m.PORT_RETRIES: done.attempts - 1}
        if hosts.check is not None:
            columns |= {m.LINK_MEASURED_BYTES_PER_S: hosts.check.bytes_per_s, m.LINK_CHECK_METHOD: hosts.check.method}
        if nccl_on_link:
            columns[m.LINK_NCCL_SETTINGS] = contract.simulated_link_nccl_note()
        outcome = Outcome(
            done.duration_s,
            parts,
            [run.task.name for run in trainers],
            trainers[0].log_path,
            stopped=done.stopped,
            stopped_how="cluster stopped" if spec.cluster else "process tree killed",
            phases=done.phases() if spec.cluster else {},
            columns=columns,
        )
        if done.failed is not None:
            outcome.failed = done.failed.task.name if spec.cluster else ""
            outcome.returncode = done.failed.returncode
            outcome.log_path = done.failed.log_path
        elif done.stopped is None and not outcome.ok:  # a trainer exited 0 without a result
            silent = next(r for r in trainers if not contract.result_ok(parts[r.task.name]))
            outcome.failed = silent.task.name if spec.cluster else ""
            outcome.returncode, outcome.log_path = silent.returncode, silent.log_path
        return outcome

    @classmethod
    def not_emitted(cls, plan, options) -> dict[str, str]:
        skipped = {}
        for spec in plan.specs:
            tasks = len(contract.tasks_of(spec))
            if spec.network_link is not None:
                skipped[spec.config_id] = local_only("a set of real hosts")
            elif tasks > len(options.hosts):
                skipped[spec.config_id] = f"needs {tasks} hosts (one per task), {len(options.hosts)} given"
        return skipped

    @classmethod
    def script(cls, plan, out: Path, options) -> dict[str, str]:
        """`tfscale launch --target hosts`: per config, one line per task, the host to run it on and the command
        with its TF_CONFIG. One task per host, each on port_base, or on the port a host entry names
        (`h1:9001`, so that several tasks can share a host)."""
        if not options.hosts:
            raise ValueError("--target hosts needs --hosts")
        skipped = cls.not_emitted(plan, options)
        lines = ["# Generated by tfscale launch: run each line on the host it names, from a copy of this folder."]
        if any(spec.repeats > 1 for spec in plan.specs):
            lines.append("# A config's processes (repeats) run one after another: start each when the last has ended.")
        for process in launched_processes(plan.specs):
            spec = process.spec
            if spec.config_id in skipped:
                lines += [f"# {spec.config_id}: not emitted: {skipped[spec.config_id]}"] * (process.repeat == 0)
                continue
            tasks = contract.tasks_of(spec)
            hosts = options.hosts[: len(tasks)]
            addresses: dict[str, list[str]] = {}
            for task, host in zip(tasks, hosts, strict=True):
                addresses.setdefault(task.job, []).append(host if ":" in host else f"{host}:{options.port_base}")
            lines.append(f"{config_comment(spec)}{process.note()} on {', '.join(hosts)}")
            argv = contract.worker_argv(
                result_template(process.name), contract.TRAIN, spec_file(spec), worker_python(options, sys.executable)
            )
            gpus = host_gpu_env(spec, tasks, hosts)
            for task, host in zip(tasks, hosts, strict=True):
                env = (
                    f"{contract.TF_CONFIG_ENV}={shlex.quote(contract.tf_config(addresses, task))} "
                    if spec.cluster
                    else ""
                )
                lines.append(f"{host}: {gpus.get(task.name, '')}{env}{shlex.join(argv)}")
        return {"hosts.txt": "\n".join(lines) + "\n"}


def _log_name(job: Job, task: Task) -> str:
    """One log per process: <prefix>.log for a single process, <prefix>.<task>.log for each task of a cluster."""
    return f"{job.prefix}.{task.name}.log" if job.spec.cluster else f"{job.prefix}.log"


def host_gpu_env(spec, tasks: list[Task], hosts: list[str]) -> dict[str, str]:
    """`CUDA_VISIBLE_DEVICES=... ` for each task of a GPU config on the hosts target: tasks that share a host (the
    same name before any `:port`) get disjoint GPUs, in task order from index 0 (contract.place_gpus), and tasks
    that compute on none (parameter servers, the ParameterServer chief) none. Without it, several tasks on one
    host all saw GPUs 0..k-1 (NCCL's duplicate-GPU error for MultiWorkerMirrored). Empty for CPU configs (the
    worker hides GPUs itself)."""
    if spec.device != "gpu":
        return {}
    names = [host.rsplit(":", 1)[0] if host.count(":") == 1 else host for host in hosts]
    index = {name: i for i, name in enumerate(dict.fromkeys(names))}
    need = contract.gpu_needs(spec, tasks)
    on_host = [sum(n for n, h in zip(need, names, strict=True) if h == name) for name in index]
    placed = contract.place_gpus(tasks, [index[h] for h in names], [[str(i) for i in range(c)] for c in on_host], need)
    return {name: f"{contract.VISIBLE_GPUS_ENV}={contract.visible_gpus_value(gpus)} " for name, gpus in placed.items()}


def link_nccl_env(spec, tasks: list[Task]) -> dict[str, dict[str, str]]:
    """Task name -> the NCCL environment that keeps a GPU config on simulated hosts on its shaped link
    (contract.simulated_link_nccl_env); none for CPU configs or loopback."""
    if spec.network_link is None or spec.device != "gpu":
        return {}
    return {task.name: contract.simulated_link_nccl_env(task, spec.nodes) for task in tasks}
