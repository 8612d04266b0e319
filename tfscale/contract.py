"""What the parent (runner, launchers) and the worker process must agree on, defined once. Pure: no TensorFlow.

- the tasks of a config: one `Task` per process (a single-process config is a cluster of one task);
- the worker's command line (`worker_argv`) and where each task writes its result and progress files;
- the environment variables the launchers set and the worker reads;
- the shape of a result file: `{"ok": true, "measurements": {...}}` or `{"ok": false, "error": "...",
  "error_type": "..."}`;
- which GPUs each task computes on (`place_gpus`), and a Slurm step's cluster in Slurm's own task order
  (`slurm_cluster`): every launcher places tasks with these two.

Both sides import this module; it imports nothing of tfscale's (so no import cycle runs through it).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Environment variables a launcher sets for each task.
PROGRESS_ENV = "TFSCALE_PROGRESS"  # file the task overwrites with the phase it reached ("{task}" is filled in)
RESOLVER_ENV = "TFSCALE_RESOLVER"  # "slurm": build the cluster from Slurm's task layout instead of TF_CONFIG
PORT_BASE_ENV = "TFSCALE_PORT_BASE"  # first port of each node's tasks under Slurm
TF_CONFIG_ENV = "TF_CONFIG"  # TensorFlow's own: the cluster and this task, as JSON (tf_config)
# Tests only: "<config_id>=<seconds>" makes every training step of that config sleep so long first (a planted
# slowdown that tfscale compare must flag, a worker kept alive); never set by tfscale itself.
TEST_SLEEP_ENV = "TFSCALE_TEST_SLEEP"
# Test-only: milliseconds the data: files pipeline sleeps per example (tfscale.worker.input), a slow pipeline made
# on purpose. Synchronous strategies only (a ParameterServer worker cannot run the Python function).
TEST_DATA_DELAY_ENV = "TFSCALE_TEST_DATA_DELAY_MS"
RESOLVER_SLURM = "slurm"
# The pid of the tfscale process that started this worker (local launcher, one-shot calls): the worker asks the
# kernel to kill it when that process dies (PR_SET_PDEATHSIG), whatever kills it, and exits if it is gone already.
PARENT_PID_ENV = "TFSCALE_PARENT_PID"
TMPDIR_ENV = "TMPDIR"  # Python's and TF's temporary folder; a local worker's: its tfscale's (launch.scratch)
# How local CPU workers start (launch.zygote): forked from a TensorFlow-loaded zygote (the default), or "exec" afresh.
WORKER_START_ENV, WORKER_START_FORK, WORKER_START_EXEC = "TFSCALE_WORKER_START", "fork", "exec"
FORKED_FROM_ENV = "TFSCALE_FORKED_FROM"  # set in a worker the zygote forked: the zygote's pid
# Temporary folders, each named <prefix><pid of its owner>-<random>: the next tfscale removes those whose owner died
# (launch.scratch.remove_stale): a tfscale's scratch folder for its workers, and a worker's own (worker/process.py).
SCRATCH_PREFIX = "tfscale-tmp-"
WORKER_TMP_PREFIX = "tfscale-worker-"
# CUDA's own: the GPUs a process may see, by index or UUID. A launcher sets it per task (place_gpus) before TF starts.
VISIBLE_GPUS_ENV = "CUDA_VISIBLE_DEVICES"
# The GPUs whose energy a trainer reads when it computes on none of them: the ParameterServer chief, whose workers
# run the steps it times (its host's CUDA_VISIBLE_DEVICES entries, comma-separated; local launcher only).
ENERGY_GPUS_ENV = "TFSCALE_ENERGY_GPUS"
NO_GPUS = "-1"  # CUDA shows only the devices listed before the first invalid index: none
# CUDA's own: with PCI_BUS_ID, CUDA numbers GPUs as NVML and nvidia-smi do (its default, FASTEST_FIRST, need not),
# so an index tfscale reads from NVML names the same GPU inside TensorFlow.
GPU_ORDER_ENV = "CUDA_DEVICE_ORDER"
GPU_ORDER = "PCI_BUS_ID"
DEFAULT_PORT_BASE = 8888  # first port of a Slurm node's tasks (TF's SlurmClusterResolver uses the same)

# Phases a trainer reports (PROGRESS_ENV) around its timed windows ("window k/n" in between): telemetry samples
# taken from PHASE_TIMING until PHASE_TIMED are the timed steps'; what runs after (communication breakdown,
# profiling) is not.
PHASE_TIMING = "timing"
PHASE_TIMED = "timed windows done"
WINDOW_PHASE_PREFIX = "window "


def in_timed_windows(phase: str) -> bool:
    """Whether a reported phase lies inside the timed windows."""
    return phase == PHASE_TIMING or phase.startswith(WINDOW_PHASE_PREFIX)


TASK_FIELD = "{task}"  # in a result or progress path: replaced by the task's name ("worker-1") in the worker
RESULT_SUFFIX = ".result.json"
PROGRESS_SUFFIX = ".progress"

# What a worker process is asked to do (`python -m tfscale.worker ...`): train a config (or its rank's part), run
# the all-reduce sweep of a config's topology, describe TensorFlow's view of this host, or check user models.
TRAIN = "train"
COMMBENCH = "commbench"
ENV = "env"
CHECK_MODELS = "check-models"
PEAK = "peak"  # the CPU's peak FLOP/s per logical device (tfscale.worker.peak)


@dataclass(frozen=True)
class Task:
    job: str  # "worker", "ps" or "chief" (TF_CONFIG job names)
    index: int
    trainer: bool  # runs the training loop and writes a result part; servers are stopped when trainers finish

    @property
    def name(self) -> str:
        return task_name(self.job, self.index)


def task_name(job: str, index: int) -> str:
    """'worker-1', 'ps-0', 'chief-0': how files, logs and reasons name a task."""
    return f"{job}-{index}"


SINGLE = Task("worker", 0, True)  # the one task of a single-process config
CHIEF = Task("chief", 0, True)  # ParameterServer's coordinator: its result part tells the servers to stop


def cluster_tasks(strategy: str, workers: int, num_ps: int | None) -> list[Task]:
    """MultiWorkerMirrored: `workers` trainer workers. ParameterServer: a trainer chief (the coordinator),
    `workers` server workers and `num_ps` parameter servers."""
    if strategy == "multi_worker_mirrored":
        return [Task("worker", i, True) for i in range(workers)]
    if strategy == "parameter_server":
        return (
            [CHIEF]
            + [Task("worker", i, False) for i in range(workers)]
            + [Task("ps", i, False) for i in range(num_ps or 1)]
        )
    raise ValueError(f"{strategy} is not a cluster strategy")


def tasks_of(spec) -> list[Task]:
    """Every process of a config (a RunSpec): its cluster's tasks, or the one task of a single-process config."""
    if spec.cluster:
        return cluster_tasks(spec.strategy, spec.nodes, spec.num_ps)
    return [SINGLE]


def energy_gpus(tasks: list[Task], placed: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """Task name -> ENERGY_GPUS_ENV's value, for a config (`tasks`) whose first trainer has no GPU of its own but
    other tasks have (`placed`: task name -> its GPUs on one host): it reads all of theirs. Empty otherwise."""
    first = next(t for t in tasks if t.trainer).name
    if placed.get(first) or not any(placed.values()):
        return {}
    return {first: visible_gpus_value(tuple(gpu for gpus in placed.values() for gpu in gpus))}


def first_trainer(spec) -> Task:
    """The config's first training task: rank 0, whose part a merged record starts from (tfscale.measures.merge)."""
    return next(t for t in tasks_of(spec) if t.trainer)


def job_counts(tasks: list[Task]) -> dict[str, int]:
    """Tasks per TF job, e.g. {"chief": 1, "worker": 2, "ps": 1} (the record column `cluster`)."""
    counts: dict[str, int] = {}
    for task in tasks:
        counts[task.job] = counts.get(task.job, 0) + 1
    return counts


def node_of(task: Task, nodes: int) -> int:
    """The node a task runs on: worker i on node i; the ParameterServer chief on node 0, server j on j mod nodes."""
    return task.index % nodes if task.job in ("worker", "ps") else 0


# Simulated hosts are network namespaces of one machine: they share its hostname, /dev/shm and PIDs, so NCCL takes
# them for one host and moves data by P2P or shared memory, never over the shaped veth link. Disabled, with
# InfiniBand (it would bypass the veth too), NCCL's socket transport is left, over the namespace's one interface.
SIMULATED_LINK_NCCL = {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1", "NCCL_IB_DISABLE": "1"}
NCCL_HOST_ID_ENV = "NCCL_HOSTID"  # NCCL's host identity (its host hash); one per simulated node


def simulated_link_nccl_env(task: Task, nodes: int) -> dict[str, str]:
    """The NCCL environment of a task on simulated hosts (SIMULATED_LINK_NCCL, and its node as NCCL's host)."""
    return {**SIMULATED_LINK_NCCL, NCCL_HOST_ID_ENV: f"tfscale-node{node_of(task, nodes)}"}


def simulated_link_nccl_note() -> str:
    """The record's link_nccl_settings: what simulated_link_nccl_env sets, in words."""
    settings = " ".join(f"{k}={v}" for k, v in SIMULATED_LINK_NCCL.items())
    return f"{settings}, {NCCL_HOST_ID_ENV} per node: NCCL's socket transport over the simulated link"


LOOPBACK_HOST = "127.0.0.1"


def _loopback(task: Task) -> str:
    return LOOPBACK_HOST


def _unwrapped(task: Task, argv: list[str]) -> list[str]:
    return argv


@dataclass(frozen=True)
class Placement:
    """Where each task runs: its address in the cluster spec, and how its command is started there."""

    address: Callable[[Task], str] = _loopback
    wrap: Callable[[Task, list[str]], list[str]] = _unwrapped


LOOPBACK = Placement()


def tf_config(cluster: dict[str, list[str]], task: Task) -> str:
    """TF_CONFIG of `task` in `cluster` (job -> addresses)."""
    return json.dumps({"cluster": cluster, "task": {"type": task.job, "index": task.index}})


def process_name(config_id: str, repeat: int) -> str:
    """The name of one fresh process of a config (`repeats: N` runs N): its files (spec, parts, log, telemetry,
    traces) and its jobs carry it. The first is the config id itself."""
    return config_id if repeat == 0 else f"{config_id}-r{repeat}"


def task_file(folder: str | Path, prefix: str, suffix: str, task: Task | None = None) -> str:
    """`<folder>/<prefix>.<task>.<suffix>`; without a task, the template with TASK_FIELD for the worker to fill."""
    return f"{Path(folder) / prefix}.{task.name if task else TASK_FIELD}{suffix}"


def fill_task(template: str, task_name: str) -> str:
    """A path template with this process's task name in place of TASK_FIELD."""
    return template.replace(TASK_FIELD, task_name)


def worker_argv(
    result_path: str | Path, mode: str = TRAIN, input_path: str | Path | None = None, python: str | None = None
) -> list[str]:
    """The worker's command line, the only place it is built. `input_path`: the spec file (TRAIN, COMMBENCH), the
    list of user models (CHECK_MODELS) or the device counts and dtypes (PEAK); `result_path`: a path, or a template
    with TASK_FIELD."""
    argv = [python or sys.executable, "-m", "tfscale.worker"]
    if mode == TRAIN:
        argv += ["--spec", str(input_path)]
    elif mode == COMMBENCH:
        argv += ["--commbench", "--spec", str(input_path)]
    elif mode == ENV:
        argv += ["--env"]
    elif mode == CHECK_MODELS:
        argv += ["--check-models", str(input_path)]
    elif mode == PEAK:
        argv += ["--peak", str(input_path)]
    else:
        raise ValueError(f"unknown worker mode {mode!r}")
    return [*argv, "--result", str(result_path)]


def ok_result(measurements: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "measurements": measurements}


def error_result(error: str, error_type: str) -> dict[str, Any]:
    return {"ok": False, "error": error, "error_type": error_type}


def result_ok(result: dict[str, Any] | None) -> bool:
    return bool(result and result.get("ok"))


def result_error(result: dict[str, Any] | None) -> str | None:
    """The one-line error a failed task wrote, or None."""
    return result.get("error") or None if result and not result.get("ok") else None


class PlacementError(ValueError):
    """The tasks of a config need more GPUs than their host (or allocation) has."""


def gpus_of(strategy: str | None, task: Task, devices_per_node: int) -> int:
    """GPUs a task computes on: `devices_per_node` for every task that runs replicas; none for ParameterServer's
    parameter servers and its chief (the coordinator only dispatches steps; TF reads the workers' GPU count from
    the cluster, not from the chief's own devices)."""
    if strategy == "parameter_server":
        return devices_per_node if task.job == "worker" else 0
    return devices_per_node if task.trainer else 0


def place_gpus(
    tasks: Sequence[Task], hosts: Sequence[int], host_gpus: Sequence[Sequence[str]], need: Sequence[int]
) -> dict[str, tuple[str, ...]]:
    """Each task's own GPUs: task i runs on host `hosts[i]` and needs `need[i]` GPUs, taken in order from that
    host's list `host_gpus[host]` (indices or UUIDs as CUDA_VISIBLE_DEVICES writes them), disjoint from every other
    task's on that host. Raises PlacementError, naming the host, its GPUs and the tasks, when they do not fit."""
    placed: dict[str, tuple[str, ...]] = {}
    taken = [0] * len(host_gpus)
    for task, host, count in zip(tasks, hosts, need, strict=True):
        first = taken[host]
        taken[host] += count
        placed[task.name] = tuple(host_gpus[host][first : first + count])
    for host, used in enumerate(taken):
        if used > len(host_gpus[host]):
            names = [t.name for t, h, n in zip(tasks, hosts, need, strict=True) if h == host and n]
            have = ",".join(host_gpus[host]) or "none"
            raise PlacementError(
                f"{used} GPUs needed on host {host} by {', '.join(names)}; it has {len(host_gpus[host])} ({have})"
            )
    return placed


def gpu_needs(spec, tasks: Sequence[Task] | None = None) -> list[int]:
    """GPUs each of `tasks` (default: every task of the config, a RunSpec) computes on: gpus_of on GPU suites,
    none on CPU suites."""
    tasks = tasks_of(spec) if tasks is None else tasks
    if spec.device != "gpu":
        return [0] * len(tasks)
    return [gpus_of(spec.strategy, task, spec.devices_per_node) for task in tasks]


def place_on_host(spec, gpus: Sequence[str], tasks: Sequence[Task] | None = None) -> dict[str, tuple[str, ...]]:
    """place_gpus for `tasks` (default: every task of the config) that all run on one host with `gpus`: the local
    launcher's whole cluster, or a Slurm node's ranks."""
    tasks = tasks_of(spec) if tasks is None else tasks
    return place_gpus(tasks, [0] * len(tasks), [gpus], gpu_needs(spec, tasks))


def visible_gpus_value(gpus: Sequence[str]) -> str:
    """CUDA_VISIBLE_DEVICES for a task with these GPUs (NO_GPUS for none: an empty value can read as unset)."""
    return ",".join(gpus) if gpus else NO_GPUS


def parse_visible_gpus(value: str | None) -> list[str] | None:
    """The GPUs a CUDA_VISIBLE_DEVICES value lets a process see (None: unset, every GPU). CUDA stops at the first
    invalid entry, so "-1" and "" mean none."""
    if value is None:
        return None
    gpus = []
    for entry in value.split(","):
        entry = entry.strip()
        if not entry or entry.startswith("-"):
            break
        gpus.append(entry)
    return gpus


_HOST_RANGE = re.compile(r"^([^\[]*)\[([^\]]+)\](.*)$")


def expand_hostlist(hostlist: str) -> list[str]:
    """Slurm's compact host list in Slurm's own order: 'gpu[9-10],cpu01' -> ['gpu9', 'gpu10', 'cpu01'] (zero
    padding kept: 'n[08-10]' -> n08, n09, n10; several brackets in one name: 'rack1-[01-02]-gpu[1-2]'). Never
    sorted: Slurm numbers tasks in this order."""
    parts, depth, current = [], 0, ""
    for char in hostlist:
        depth += (char == "[") - (char == "]")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [host for part in filter(None, (p.strip() for p in parts)) for host in _expand_ranges(part)]


def _expand_ranges(name: str) -> list[str]:
    """One host list entry with any number of bracket ranges: 'r[1-2]-g[1-2]' -> r1-g1, r1-g2, r2-g1, r2-g2 (the
    first bracket varies slowest, as `scontrol show hostnames` lists them)."""
    match = _HOST_RANGE.match(name)
    if not match:
        return [name]
    prefix, ranges, suffix = match.groups()
    tails = _expand_ranges(suffix)
    hosts = []
    for item in ranges.split(","):
        low, _, high = item.partition("-")
        for number in range(int(low), int(high or low) + 1):
            hosts += [f"{prefix}{str(number).zfill(len(low))}{tail}" for tail in tails]
    return hosts


def expand_tasks_per_node(value: str) -> list[int]:
    """Slurm's SLURM_STEP_TASKS_PER_NODE: '2(x3),1' -> [2, 2, 2, 1]."""
    counts: list[int] = []
    for part in value.split(","):
        match = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part.strip())
        if not match:
            raise ValueError(f"cannot read SLURM_STEP_TASKS_PER_NODE={value!r}")
        counts += [int(match.group(1))] * int(match.group(2) or 1)
    return counts


@dataclass(frozen=True)
class SlurmRank:
    """Where one Slurm task (rank) of a step runs and which TF task it is."""

    task: Task
    host: str
    node: int  # index of its host in the step's node list (Slurm's order)
    local: int  # its place among the tasks on its node (port offset, GPU share)


def slurm_cluster(
    hostlist: str, tasks_per_node: str, tasks: Sequence[Task], port_base: int
) -> tuple[dict[str, list[str]], list[SlurmRank]]:
    """A step's TF cluster (job -> addresses) and its ranks, in Slurm's own order: with block distribution Slurm
    gives ranks 0..n0-1 to the first listed node, the next ones to the second, and so on; rank r is TF task
    `tasks[r]`, at its node's host on port `port_base` + its place on that node.

    TF's SlurmClusterResolver sorts host names as strings ('gpu10' before 'gpu9') but numbers ranks in Slurm's
    order, so its ranks and addresses disagree on such nodes; this function is what tfscale uses instead."""
    hosts, counts = expand_hostlist(hostlist), expand_tasks_per_node(tasks_per_node)
    if len(hosts) != len(counts) or sum(counts) != len(tasks):
        raise ValueError(
            f"Slurm step of {len(hosts)} node(s) ({hostlist}) with tasks per node {tasks_per_node} does not hold "
            f"the config's {len(tasks)} tasks"
        )
    ranks = []
    for node, (host, count) in enumerate(zip(hosts, counts, strict=True)):
        ranks += [SlurmRank(tasks[len(ranks) + local], host, node, local) for local in range(count)]
    cluster: dict[str, list[str]] = {}
    for rank in ranks:
        cluster.setdefault(rank.task.job, []).append(f"{rank.host}:{port_base + rank.local}")
    return cluster, ranks
