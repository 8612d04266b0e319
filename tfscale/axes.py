"""The sweep axes and run settings a suite may set, with their types, allowed values and defaults.

Pure data, no TensorFlow: the suite loader validates against it and the plan fills defaults from it. A later
capability (multi-node strategies, model parallelism, communication options) adds an axis or a choice here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ZOO_MODELS = ("mlp", "cnn", "transformer")
AUTO = "auto"  # steps, warmup_steps, window_steps: chosen while measuring (tfscale.precision)
# Defaults of the precision settings (why these values: docs/report.md, "How step time is measured, and how long").
# min_window_s auto, per device: the host sync must cost < 1 % of a window. On CPU a sync is a 13 us loss fetch (a
# tf.function call returns after its ops ran): 2 ms windows. On GPUs it also drains the queue the host keeps ahead
# of the device: 50 ms windows keep a drain of up to 0.5 ms under 1 % (assumed, not measured here: no GPU).
MIN_WINDOW_S = {"cpu": 0.002, "gpu": 0.05}
MAX_MEASURE_S = 4.0
MAX_WARMUP_S = 3.0
GRAD_NOISE_EVERY = 8  # steps per probed step: at 4 the transformer/tiny probe still cost +1.2 % (bench_goodput)
MODEL_SIZES = ("tiny", "small", "medium", "large")
DATA_SYNTHETIC, DATA_FILES = "synthetic", "files"
DATA_SOURCES = (DATA_SYNTHETIC, DATA_FILES)
# task: what the targets are. random: drawn at random (gradients without signal: the loss cannot fall); teacher: a
# fixed random teacher function of the inputs labels them, inputs drawn fresh every step (tfscale.worker.teacher)
TASK_RANDOM, TASK_TEACHER = "random", "teacher"
TASKS = (TASK_RANDOM, TASK_TEACHER)


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


# Upper bounds of the numeric axes: far above any real sweep, low enough that no plan, launch or worker meets a
# number it cannot hold (10^11 nodes made `tfscale launch` build 10^11 tasks; a 300-digit timeout overflowed a float).
MAX_NODES = 4096
MAX_DEVICES_PER_NODE = 1024
MAX_STEPS = 1 << 31  # TF's int32 loop counters
MAX_SECONDS = 30 * 24 * 3600.0  # 30 days: any timeout or measuring budget
MAX_REPEATS = 1000


@dataclass(frozen=True)
class Axis:
    """One setting a config has. `choices` limits strings; `minimum` and `maximum` limit numbers (every numeric axis
    has both; floats are finite)."""

    name: str
    kind: type  # str, int, float or bool
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    nullable: bool = False  # None is allowed and means "not applicable / TF's default"
    sweepable: bool = True  # may appear in `matrix`; run settings may only be set in defaults / include
    recorded: bool = True  # a record column (every axis; the settings that say how the samples were taken)
    auto: bool = False  # also takes the string AUTO: the worker chooses (tfscale.precision has the rules)
    # Run settings: False where a difference leaves what the timed steps measure as it was (a timeout, a price);
    # compare names every differing setting and refuses to gate across those that are True.
    timing: bool = True
    # False: the default is left out of config_id, so an axis added after ids were published keeps existing ids
    default_in_id: bool = True
    # True: how the work is laid out over devices and hosts (strategy, counts, modes), not what the work is; the
    # other config axes make a workload (the scaling baseline's key: tfscale.analysis.WORKLOAD_KEY)
    layout: bool = False


def _axes(*axes: Axis) -> dict[str, Axis]:
    return {a.name: a for a in axes}


AXES: dict[str, Axis] = _axes(
    Axis("model", str, "mlp", "zoo model (mlp|cnn|transformer) or a name from the suite's `models`"),
    Axis("model_size", str, "small", "size knob of zoo models", choices=MODEL_SIZES),
    Axis("strategy", str, "one_device", "tf.distribute strategy", choices=tuple(STRATEGIES), layout=True),
    Axis(
        "cross_device_ops",
        str,
        None,
        "mirrored only: how gradients are all-reduced",
        choices=("nccl", "hierarchical_copy", "reduction_to_one_device"),
        nullable=True,
        layout=True,
    ),
    Axis(
        "collective",
        str,
        "auto",
        "multi_worker_mirrored: all-reduce implementation (CommunicationOptions); auto: nccl on gpu, ring on cpu",
        choices=("auto", "ring", "nccl"),
        nullable=True,
        layout=True,
    ),
    Axis(
        "bytes_per_pack",
        int,
        0,
        "multi_worker_mirrored: gradient pack size for all-reduce, 0 = TF's choice",
        minimum=0,
        maximum=1 << 40,
        nullable=True,
        layout=True,
    ),
    Axis(
        "num_ps",
        int,
        1,
        "parameter_server: parameter server tasks",
        minimum=1,
        maximum=1024,
        nullable=True,
        layout=True,
    ),
    Axis(
        "partitioner",
        str,
        "min_size",
        "parameter_server: how variables are sharded over the servers",
        choices=("none", "min_size", "fixed_shards"),
        nullable=True,
        layout=True,
    ),
    Axis(
        "network_link",
        str,
        None,
        "cluster strategies on several nodes: simulate each node as a network "
        "namespace whose link is shaped to this rate (tc syntax: 100mbit, 1gbit); empty: loopback, unshaped",
        nullable=True,
        layout=True,
    ),
    Axis(
        "nodes",
        int,
        1,
        "number of nodes (hosts); for cluster strategies, the number of workers",
        minimum=1,
        maximum=MAX_NODES,
        layout=True,
    ),
    Axis(
        "devices_per_node",
        int,
        1,
        "accelerators or logical CPU devices per node",
        minimum=1,
        maximum=MAX_DEVICES_PER_NODE,
        layout=True,
    ),
    Axis(
        "parallelism",
        str,
        "data",
        "how work is split over devices: data (a tf.distribute strategy), pipeline "
        "(layer stages on devices), tensor (DTensor-sharded weights), hybrid (data x tensor mesh)",
        choices=tuple(PARALLELISMS),
        layout=True,
    ),
    Axis(
        "stages",
        int,
        None,
        "pipeline: contiguous layer groups, one per device (empty: one per device)",
        minimum=1,
        maximum=1024,
        nullable=True,
        layout=True,
    ),
    Axis(
        "micro_batches",
        int,
        4,
        "pipeline: micro-batches the global batch is cut into (GPipe schedule)",
        minimum=1,
        maximum=1 << 16,
        nullable=True,
        layout=True,
    ),
    Axis(
        "tensor_parallel",
        int,
        None,
        "tensor, hybrid: devices each weight is sharded over (empty: every device "
        "for tensor, 2 for hybrid); hybrid uses devices / tensor_parallel data-parallel copies",
        minimum=1,
        maximum=1 << 16,
        nullable=True,
        layout=True,
    ),
    Axis("batch_size", int, 32, "examples per step: per replica (weak) or global (strong)", minimum=1, maximum=1 << 24),
    Axis(
        "batch_policy",
        str,
        "weak",
        "weak: batch_size per replica; strong: batch_size global",
        choices=("weak", "strong"),
    ),
    Axis("precision", str, "float32", "Keras dtype policy", choices=("float32", "mixed_bfloat16", "mixed_float16")),
    Axis("jit", bool, False, "XLA-compile the per-replica gradient computation"),
    Axis("optimizer", str, "sgd", "sgd (momentum 0.9) or adam", choices=("sgd", "adam")),
    Axis(
        "data",
        str,
        "synthetic",
        "synthetic: one in-memory batch repeated (the input costs nothing); files: TFRecord files written once "
        "to a cache folder and read through a tf.data pipeline (a user model's own dataset_fn if it has one)",
        choices=DATA_SOURCES,
        default_in_id=False,
    ),
    Axis(
        "task",
        str,
        "random",
        "random: random targets (the gradients carry no signal); teacher: a fixed random teacher network labels the "
        "inputs, drawn fresh every step, so the loss falls and the gradient noise scale means something",
        choices=TASKS,
        default_in_id=False,
    ),
    Axis("data_examples", int, 4096, "data files: examples written", minimum=1, maximum=1 << 31, nullable=True),
    Axis(
        "data_shards",
        int,
        8,
        "data files: TFRecord files the examples are split into",
        minimum=1,
        maximum=1 << 16,
        nullable=True,
    ),
    Axis(
        "data_compression",
        str,
        "none",
        "data files: TFRecord compression",
        choices=("none", "gzip", "zlib"),
        nullable=True,
    ),
    Axis(
        "data_parallel_calls",
        int,
        AUTO,
        "data files: parallel calls of the parse/decode and augment maps and the file interleave; auto: tf.data "
        "AUTOTUNE",
        minimum=1,
        maximum=1024,
        nullable=True,
        auto=True,
    ),
    Axis(
        "shuffle_buffer",
        int,
        1024,
        "data files: examples in the shuffle buffer (0: no shuffle)",
        minimum=0,
        maximum=1 << 31,
        nullable=True,
    ),
    Axis(
        "prefetch",
        int,
        AUTO,
        "data files: batches prefetched after batching (0: none); auto: tf.data AUTOTUNE",
        minimum=0,
        maximum=1024,
        nullable=True,
        auto=True,
    ),
    Axis(
        "cache",
        bool,
        False,
        "data files: keep the decoded examples in memory after the first epoch (tf.data cache)",
        nullable=True,
    ),
)
# The input pipeline's knobs: they apply to data: files only (blanked for synthetic data).
WORKLOAD_AXES = tuple(name for name, axis in AXES.items() if not axis.layout)
DATA_AXES = (
    "data_examples",
    "data_shards",
    "data_compression",
    "data_parallel_calls",
    "shuffle_buffer",
    "prefetch",
    "cache",
)

# Run settings: how a config is measured, not what it is; they are not part of config_id.
SETTINGS: dict[str, Axis] = _axes(
    Axis(
        "steps",
        int,
        AUTO,
        "timed steps; auto: timing windows until the 95 % CI of the median step is within +-target_ci "
        "(at least 20 windows) or max_measure_s is spent",
        minimum=1,
        maximum=MAX_STEPS,
        sweepable=False,
        recorded=False,
        auto=True,
    ),
    Axis(
        "warmup_steps",
        int,
        AUTO,
        "untimed steps first (the first one includes tracing); auto: windows until the last 3 agree within 5 %, "
        "at most max_warmup_s",
        minimum=1,
        maximum=MAX_STEPS,
        sweepable=False,
        auto=True,
    ),
    Axis(
        "window_steps",
        int,
        AUTO,
        "steps per timing window, each window ended by a host sync; auto: enough steps for min_window_s",
        minimum=1,
        maximum=MAX_STEPS,
        sweepable=False,
        auto=True,
    ),
    Axis(
        "min_window_s",
        float,
        AUTO,
        "window_steps auto: shortest timing window, seconds; auto: 0.002 on cpu, 0.05 on gpu (a host sync costs "
        "< 1 % of it)",
        minimum=0.0001,
        maximum=3600,
        sweepable=False,
        auto=True,
    ),
    Axis(
        "target_ci",
        float,
        0.02,
        "steps auto: stop once the 95 % CI of the median step is within +- this fraction of the median",
        minimum=0.001,
        maximum=1,
        sweepable=False,
        recorded=False,
    ),
    Axis(
        "max_measure_s",
        float,
        MAX_MEASURE_S,
        "steps auto: most seconds of timed windows per config (and per repeat)",
        minimum=0.1,
        maximum=MAX_SECONDS,
        sweepable=False,
    ),
    Axis(
        "max_warmup_s",
        float,
        MAX_WARMUP_S,
        "warmup_steps auto: most seconds of warm-up windows before timing starts anyway",
        minimum=0.1,
        maximum=MAX_SECONDS,
        sweepable=False,
    ),
    Axis(
        "repeats",
        int,
        1,
        "fresh worker processes per config, interleaved over the sweep (every config once, then again); their "
        "medians are combined and the CI then covers the spread between processes; auto: each workload's 1-device "
        "and first 2-device config run twice (at least 3 degrees of freedom in all), the others once, and every "
        "CI covers the spread those measure (tfscale/autorepeats.py)",
        minimum=1,
        maximum=MAX_REPEATS,
        sweepable=False,
        auto=True,
    ),
    Axis(
        "timeout_s",
        float,
        600.0,
        "seconds before the config's process tree is killed",
        minimum=1,
        maximum=MAX_SECONDS,
        sweepable=False,
        recorded=False,
        timing=False,
    ),
    Axis(
        "startup_timeout_s",
        float,
        300.0,
        "cluster strategies: seconds for every trainer to join the cluster",
        minimum=1,
        maximum=MAX_SECONDS,
        sweepable=False,
        recorded=False,
        timing=False,
    ),
    Axis(
        "stall_timeout_s",
        float,
        300.0,
        "cluster strategies: longest silence of a trainer between progress "
        "reports (warm-up, each timing window) before the cluster is stopped",
        minimum=1,
        maximum=MAX_SECONDS,
        sweepable=False,
        recorded=False,
        timing=False,
    ),
    Axis(
        "comm_breakdown",
        bool,
        None,
        "also time the communication apart: compute-only, split and isolated all-reduce steps (synchronous data "
        "parallelism, 2+ replicas), pull and push rounds (parameter_server); empty: wherever the mode measures it",
        sweepable=False,
        recorded=False,
        nullable=True,
    ),
    Axis(
        "grad_noise",
        bool,
        None,
        "measure the gradient noise scale in the step (synchronous data parallelism: squared norms around the "
        "optimizer's own all-reduce, no communication added; one replica: its batch's two halves, a slower step); "
        "empty: on for task: teacher with 2+ replicas",
        sweepable=False,
        recorded=False,
        nullable=True,
    ),
    Axis(
        "grad_noise_every",
        int,
        GRAD_NOISE_EVERY,
        "with grad_noise: the probe runs in one step of every N (the plain step in the others; 1: every step): "
        "its cost on the step time falls about N-fold, and so do the estimate's samples",
        minimum=1,
        maximum=MAX_STEPS,
        sweepable=False,
        recorded=False,
    ),
    Axis(
        "comm_steps",
        int,
        10,
        "timed calls of each communication measurement",
        minimum=1,
        maximum=1 << 20,
        sweepable=False,
        recorded=False,
        timing=False,
    ),
    Axis(
        "profile",
        bool,
        False,
        "run profile_steps extra (untimed) steps under the TF profiler and read the collective time from the trace",
        sweepable=False,
        recorded=False,
        timing=False,
    ),
    Axis(
        "profile_steps",
        int,
        3,
        "steps traced when profile is on",
        minimum=1,
        maximum=1 << 16,
        sweepable=False,
        recorded=False,
        timing=False,
    ),
    Axis(
        "telemetry_hz",
        float,
        10.0,
        "samples per second of host and GPU telemetry (0: off)",
        minimum=0,
        maximum=1000,
        sweepable=False,
        recorded=False,
    ),
    Axis(
        "seed",
        int,
        0,
        "seed of the synthetic data and model initialisation",
        minimum=0,
        maximum=2**32 - 1,
        sweepable=False,
    ),
    Axis(
        "price_per_device_hour",
        float,
        None,
        "price of one device for one hour (any currency): the report then gives the cost per million examples",
        minimum=0,
        maximum=1e9,
        nullable=True,
        sweepable=False,
        timing=False,
    ),
    Axis(
        "peak_flops_per_s",
        float,
        None,
        "peak FLOP/s of one device, the denominator of mfu; empty: GPUs from tfscale.peaks' datasheet table, CPUs "
        "measured by a matmul microbenchmark before the sweep",
        minimum=1,
        maximum=1e21,
        nullable=True,
        sweepable=False,
        recorded=False,
        timing=False,
    ),
)

ALL_KEYS: dict[str, Axis] = {**AXES, **SETTINGS}
