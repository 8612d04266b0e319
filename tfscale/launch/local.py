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

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from tfscale import contract
from tfscale import metrics as m
from tfscale.contract import Task
from tfscale.launch.base import (
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
from tfscale.launch.processes import LIVE
from tfscale.launch.tasks import (
    TaskRun,
    Watch,
    run_tasks,
)
from tfscale.launch.zygote import expect_rounds, serve_round, stop_zygote, zygote_failure
from tfscale.netsim.hosts import cluster_hosts
from tfscale.netsim.network import NetworkError
from tfscale.netsim.network import unavailable_reason as network_unavailable
from tfscale.store.records import read_json
from tfscale.suite.spec import RunSpec


def tasks_env(tasks, gpus: dict, nccl_on_link: dict) -> dict[str, dict[str, str]]:
    """Each task's own environment: its GPUs (CUDA_VISIBLE_DEVICES by placement, in PCI order), the GPUs whose
    energy a ParameterServer chief reads (its workers'), and NCCL's settings on simulated links."""
    task_env = {
        name: {
            contract.VISIBLE_GPUS_ENV: contract.visible_gpus_value(own),
            contract.GPU_ORDER_ENV: contract.GPU_ORDER,
        }
        for name, own in gpus.items()
    }
    for name, value in contract.energy_gpus(tasks, gpus).items():  # the ParameterServer chief: its workers'
        task_env[name][contract.ENERGY_GPUS_ENV] = value
    for name, env in nccl_on_link.items():
        task_env.setdefault(name, {}).update(env)
    return task_env


def launch_columns(spec, tasks, done, check, nccl_on_link: bool) -> dict:
    """The record columns the launcher knows: a cluster's task counts and port retries, the simulated link's
    measured rate, the NCCL settings on it."""
    columns = {}
    if spec.cluster:
        columns = {m.CLUSTER: contract.job_counts(tasks), m.PORT_RETRIES: done.attempts - 1}
    if check is not None:
        columns |= {m.LINK_MEASURED_BYTES_PER_S: check.bytes_per_s, m.LINK_CHECK_METHOD: check.method}
    if nccl_on_link:
        columns[m.LINK_NCCL_SETTINGS] = contract.simulated_link_nccl_note()
    return columns


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

    def __exit__(self, *exc) -> None:
        stop_zygote()  # the sweep's workers are done: the TensorFlow-loaded process that forked them goes too

    def live_pids(self) -> list[int]:
        return [p.pid for p in list(LIVE)]

    def warnings(self) -> list[str]:
        failure = zygote_failure()
        if failure is None:
            return []
        return [f"CPU workers were started as fresh interpreters, each importing TensorFlow anew: {failure}"]

    def expect(self, runs: Sequence[tuple[RunSpec, int]]) -> None:
        """The rounds the zygote forks for (launch.zygote.expect_rounds): those of the CPU configs' processes."""
        expect_rounds(1 + max((repeat for spec, repeat in runs if spec.device == "cpu"), default=0))

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
        serve_round(job.repeat)  # a config's fresh processes never share a zygote (launch.zygote)
        nccl_on_link = link_nccl_env(spec, tasks)
        task_env = tasks_env(tasks, gpus, nccl_on_link)
        try:
            with cluster_hosts(spec, job.run_id) as hosts:
                done = run_tasks(
                    runs,
                    lambda run: job.argv(run.result_path),
                    Watch.of(spec),
                    spec.cluster,
                    hosts.placement,
                    task_env=task_env,
                    fork=spec.device == "cpu",  # a GPU config's workers read their GPUs at import: fresh processes
                )
        except NetworkError as error:
            return Outcome(0.0, {}, [r.task.name for r in trainers], None, failed="", launcher_reason=str(error))
        parts = {run.task.name: read_json(run.result_path) for run in runs}
        outcome = Outcome(
            done.duration_s,
            parts,
            [run.task.name for run in trainers],
            trainers[0].log_path,
            stopped=done.stopped,
            stopped_how="cluster stopped" if spec.cluster else "process tree killed",
            phases=done.phases() if spec.cluster else {},
            columns=launch_columns(spec, tasks, done, hosts.check, bool(nccl_on_link)),
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
