"""The tf.distribute strategies, the parallelism modes and the measuring modes they make, with what each supports."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StrategyInfo:
    """What the plan needs to know about a tf.distribute strategy (the worker knows how to build it)."""

    name: str
    tf_name: str  # the tf.distribute class, for messages and the report
    exactly_one_device: bool = False  # OneDeviceStrategy: devices_per_node must be 1
    cluster: bool = False  # runs as a cluster of processes (one per TF task), even with nodes: 1
    one_replica_per_cpu_worker: bool = False  # on device: cpu each worker has exactly one replica (CPU:0)
    own_axes: tuple[str, ...] = ()  # axes only this strategy reads; blanked (None) for the others


STRATEGIES: dict[str, StrategyInfo] = {
    s.name: s
    for s in (
        StrategyInfo("one_device", "OneDeviceStrategy", exactly_one_device=True),
        StrategyInfo("mirrored", "MirroredStrategy", own_axes=("cross_device_ops",)),
        StrategyInfo("central_storage", "experimental.CentralStorageStrategy"),
        StrategyInfo(
            "multi_worker_mirrored",
            "MultiWorkerMirroredStrategy",
            cluster=True,
            one_replica_per_cpu_worker=True,
            own_axes=("collective", "bytes_per_pack"),
        ),
        StrategyInfo(
            "parameter_server",
            "ParameterServerStrategy",
            cluster=True,
            one_replica_per_cpu_worker=True,
            own_axes=("num_ps", "partitioner"),
        ),
    )
}

STRATEGY_AXES = frozenset(a for s in STRATEGIES.values() for a in s.own_axes)


def collective_of(device: str, collective: str | None) -> str:
    """The MultiWorkerMirrored all-reduce tfscale asks TF for: `auto` is NCCL on GPUs and RING on CPUs. (TF's own
    AUTO leaves the choice to the runtime, which in TF2 eager mode runs RING on GPUs too: NCCL must be asked for.)"""
    if collective in (None, "auto"):
        return "NCCL" if device == "gpu" else "RING"
    return collective.upper()


@dataclass(frozen=True)
class ParallelismInfo:
    """A way of splitting the work over devices. Model-parallel modes run in one process without a tf.distribute
    strategy (the `strategy` axis does not apply to them) on the zoo models listed in `models`."""

    name: str
    models: tuple[str, ...] | None  # None: every model
    own_axes: tuple[str, ...] = ()


# The support matrix: which models each mode can split (the plan refuses the rest in one line).
PARALLELISMS: dict[str, ParallelismInfo] = {
    p.name: p
    for p in (
        ParallelismInfo("data", None),
        ParallelismInfo("pipeline", ("mlp", "transformer"), ("stages", "micro_batches")),
        ParallelismInfo("tensor", ("mlp", "transformer"), ("tensor_parallel",)),
        ParallelismInfo("hybrid", ("mlp", "transformer"), ("tensor_parallel",)),
    )
}

PARALLELISM_AXES = frozenset(a for p in PARALLELISMS.values() for a in p.own_axes)


@dataclass(frozen=True)
class ModeInfo:
    """How the worker trains a config (tfscale.worker.modes has one trainer per mode), and the add-ons (run
    settings that switch on extra measurements) it cannot make, each with the reason `tfscale plan` gives."""

    name: str
    unsupported: dict[str, str]


ADDONS = ("profile", "comm_breakdown")

MODES: dict[str, ModeInfo] = {
    i.name: i
    for i in (
        ModeInfo("synchronous", {}),
        ModeInfo(
            "parameter_server",
            {
                "profile": "parameter_server steps run on the workers and the profiler traces only the chief's "
                "coordinator; use a synchronous strategy to trace the step"
            },
        ),
        ModeInfo(
            "pipeline",
            {
                "comm_breakdown": "a pipeline has no gradient all-reduce to time apart (its stages pass activations "
                "by copies, and bubble_fraction measures the schedule)"
            },
        ),
        ModeInfo(
            "tensor",
            {
                "comm_breakdown": "the collectives DTensor inserts run inside the sharded step and cannot be timed "
                "apart; profile: true reads their time from a trace"
            },
        ),
    )
}


def mode_of(strategy: str | None, parallelism: str) -> str:
    """The worker mode of a config: a key of MODES."""
    if parallelism == "pipeline":
        return "pipeline"
    if parallelism in ("tensor", "hybrid"):
        return "tensor"
    return "parameter_server" if strategy == "parameter_server" else "synchronous"


def replicas_of(
    strategy: str | None,
    nodes: int,
    devices_per_node: int,
    parallelism: str = "data",
    tensor_parallel: int | None = None,
) -> int:
    """Model copies trained in data parallelism (the plan refuses devices_per_node > 1 where TF would give one);
    pipeline and tensor parallelism train one copy, hybrid devices / tensor_parallel copies."""
    if parallelism in ("pipeline", "tensor"):
        return 1
    if parallelism == "hybrid":
        return nodes * devices_per_node // (tensor_parallel or 1)
    return 1 if STRATEGIES[strategy].exactly_one_device else nodes * devices_per_node
