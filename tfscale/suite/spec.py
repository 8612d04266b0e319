"""`RunSpec`: the contract between the parent (plan, runner) and the worker process.

The runner writes a spec as JSON to a file and passes its path to `python -m tfscale.worker`; the worker writes
its measurements as JSON to the result path it was given. Both sides use `to_dict`/`from_dict` only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tfscale import metrics as m
from tfscale.axes import AXES, SETTINGS, STRATEGIES, replicas_of
from tfscale.labels import mode_label
from tfscale.suite.linkrate import parse_rate

TIMING_ONLY = "timing_only"  # the spec.extra key of RunSpec.timing_only, set by runner.configs.run_config


@dataclass(frozen=True)
class RunSpec:
    """One expanded config of a suite plus how to measure it. Axis fields mirror `tfscale.axes.AXES`."""

    suite: str
    device: str  # cpu|gpu
    config_id: str
    # axes (what is measured; hashed into config_id)
    model: str
    model_size: str | None
    strategy: str | None  # None for model-parallel modes (no tf.distribute strategy)
    cross_device_ops: str | None
    collective: str | None
    bytes_per_pack: int | None
    num_ps: int | None
    partitioner: str | None
    network_link: str | None  # simulated hosts: each node's link rate (tc syntax); None = loopback
    nodes: int
    devices_per_node: int
    parallelism: str
    stages: int | None
    micro_batches: int | None
    tensor_parallel: int | None
    batch_size: int
    batch_policy: str
    precision: str
    jit: bool
    optimizer: str
    task: str  # random|teacher
    data: str  # synthetic|files; the pipeline's knobs below apply to files only (None otherwise)
    data_examples: int | None
    data_shards: int | None
    data_compression: str | None
    data_parallel_calls: int | str | None  # an int, or "auto" (tf.data AUTOTUNE)
    shuffle_buffer: int | None
    prefetch: int | str | None  # an int, or "auto" (tf.data AUTOTUNE)
    cache: bool | None
    # run settings (how it is measured)
    steps: int | str  # an int, or "auto" (tfscale.stats.precision decides; so for the next two)
    warmup_steps: int | str
    window_steps: int | str
    min_window_s: float
    target_ci: float
    max_measure_s: float
    max_warmup_s: float
    repeats: int  # "auto" only until the planner resolves it (tfscale.suite.autorepeats)
    timeout_s: float
    startup_timeout_s: float
    stall_timeout_s: float
    comm_breakdown: bool
    grad_noise: bool
    grad_noise_every: int
    comm_steps: int
    profile: bool
    profile_steps: int
    telemetry_hz: float
    seed: int
    price_per_device_hour: float | None
    peak_flops_per_s: float | None
    # a suite's own model: {"entry": "module:function", "args": {...}}; None for zoo models
    user_model: dict[str, Any] | None = None
    # folder of the suite file: user-model modules are imported from there
    suite_dir: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # room for later capabilities' options

    @property
    def timing_only(self) -> bool:
        """Whether this process of the config (its repeat > 0) skips the extra measurements after its timed windows
        (communication breakdown, profile, FLOPs count): a config's record takes every column but the step time's
        from its repeat 0 (tfscale.stats.repeats), so a later process's would be thrown away."""
        return bool(self.extra.get(TIMING_ONLY))

    @property
    def devices(self) -> int:
        """Total devices over all nodes: the N of scaling efficiency."""
        return self.nodes * self.devices_per_node

    @property
    def replicas(self) -> int:
        """Model copies the strategy trains in data parallelism."""
        return replicas_of(self.strategy, self.nodes, self.devices_per_node, self.parallelism, self.tensor_parallel)

    @property
    def global_batch_size(self) -> int:
        """Examples per step over all replicas (weak: batch_size per replica; strong: batch_size)."""
        return self.batch_size * self.replicas if self.batch_policy == "weak" else self.batch_size

    @property
    def per_replica_batch_size(self) -> int:
        return self.global_batch_size // self.replicas

    @property
    def cluster(self) -> bool:
        """Runs as a cluster of processes, one per TF task (MultiWorkerMirrored, ParameterServer)."""
        return self.strategy is not None and STRATEGIES[self.strategy].cluster

    @property
    def mode_label(self) -> str:
        """How the devices are used, for tables: the strategy, or the model-parallel layout."""
        return mode_label(
            self.strategy, self.parallelism, self.stages, self.micro_batches, self.replicas, self.tensor_parallel
        )

    @property
    def link_bytes_per_s(self) -> float | None:
        """The simulated link's configured rate per node and direction, bytes/s (None: loopback)."""
        return None if self.network_link is None else parse_rate(self.network_link)

    @property
    def device_kind(self) -> str:
        return "cpu-logical" if self.device == "cpu" else "gpu"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"RunSpec: unknown fields {sorted(unknown)}")
        return cls(**data)


# The record columns a record takes from its spec: what the config is (its axes) and how its samples were taken.
SPEC_FIELDS = (m.CONFIG_ID, m.SUITE, m.DEVICE, *AXES, *(name for name, axis in SETTINGS.items() if axis.recorded))
