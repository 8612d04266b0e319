"""Synchronous data parallelism (OneDevice, Mirrored, CentralStorage, MultiWorkerMirrored): the strategy, and the
model and optimizer made in its scope; the fused training step; its communication measured beside it."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tfscale import metrics as m
from tfscale.suite.spec import RunSpec
from tfscale.worker.cluster import report_progress, task_devices
from tfscale.worker.trainer import Trainer, variable_bytes

# Seen with TF 2.21 on logical CPUs: the XLA-compiled gradients called from the compute-only step put replica 1's
# call on CPU:0 ("Trying to access resource ... located in device CPU:1 from device CPU:0"). Logical CPU devices
# share one physical device, which GPUs do not: on GPUs the breakdown runs (not checked here: no GPU).
JIT_NOT_MEASURED = (
    "not measured: with jit (XLA) on logical CPU devices the compute-only step fails (TF placed "
    "replica 1's compiled call on device 0); the communication fields are left empty"
)


@dataclass
class Built:
    """What a strategy's loop starts from: devices, strategy, and model and optimizer made in its scope."""

    devices: list[str]
    strategy: Any
    workload: Any
    optimizer: Any


def devices_and_strategy(spec: RunSpec) -> tuple[list[str], Any]:
    # Late imports: TensorFlow must only load after the worker prepared its environment.
    from tfscale.worker.devices import configure_devices, device_names
    from tfscale.worker.strategies import build_strategy

    configure_devices(spec.device, task_devices(spec))
    if spec.cluster:  # before anything initialises TF's runtime; cluster strategies wait here for their peers
        strategy = build_strategy(spec, [])
        devices = device_names(spec.device)
    else:
        devices = device_names(spec.device)
        strategy = build_strategy(spec, devices)
    report_progress("strategy ready")
    return devices, strategy


def new_optimizer(spec: RunSpec):
    import keras

    if spec.optimizer == "adam":
        return keras.optimizers.Adam(1e-3)
    return keras.optimizers.SGD(0.01, momentum=0.9)


def build(spec: RunSpec) -> Built:
    import keras
    import tensorflow as tf

    from tfscale.worker.models import build_workload
    from tfscale.worker.strategies import variable_policy

    devices, strategy = devices_and_strategy(spec)
    keras.mixed_precision.set_global_policy(spec.precision)
    keras.utils.set_random_seed(spec.seed)
    with strategy.scope(), variable_policy(spec):
        workload = build_workload(spec)
        if not workload.model.built:  # subclassed user models create their variables on first call
            workload.model(tf.zeros((1, *workload.input_spec.shape), workload.input_spec.dtype))
        optimizer = new_optimizer(spec)
        # MirroredStrategy custom loops fail with a placeholder error unless slots exist before the first step.
        optimizer.build(workload.model.trainable_variables)
    report_progress("model built")
    return Built(devices, strategy, workload, optimizer)


def trainer(spec: RunSpec, task_name: str) -> Trainer:
    from tfscale.worker.input import SOURCE_SYNTHETIC
    from tfscale.worker.loop import build_train_step, host_sync, loss_scale, make_gradients, make_replica_step
    from tfscale.worker.strategies import collective_implementation

    built = build(spec)
    global_batch = spec.global_batch_size
    replicas = built.strategy.num_replicas_in_sync
    files, dataset = distributed_input(spec, built, replicas)
    gradients = make_gradients(built.workload, global_batch, spec.jit, loss_scale(spec))
    variables = built.workload.model.trainable_variables
    iterator = iter(dataset)
    sync, how = host_sync(spec.device, multi_worker=spec.cluster)
    replica_step = make_replica_step(gradients, built.optimizer, variables)
    probe = NoiseProbing.of(spec, built, gradients, replicas) if spec.grad_noise else None

    def make_step(batches) -> Callable[[], Any]:
        """The timed step on an iterator (the in-memory input measurement builds a second one the same way)."""
        plain = build_train_step(built.strategy, replica_step, batches)
        return plain if probe is None else probe.step(built.strategy, batches, plain)

    implementation = {m.COLLECTIVE_IMPLEMENTATION: collective_implementation(built.strategy)} if spec.cluster else {}
    implementation |= {m.DATA_SOURCE: SOURCE_SYNTHETIC} if files is None else files.columns

    def columns(loop) -> dict[str, Any]:
        found = dict(implementation)
        if probe is not None:
            found |= noise_columns(probe.noise, halves=replicas == 1, every=spec.grad_noise_every, loop=loop)
        if files is not None and files.measured:
            found |= input_figures(built, files, make_step, sync, loop)
        if not spec.comm_breakdown or replicas < 2 or spec.timing_only:
            return found
        if spec.jit and spec.device == "cpu":
            return found | {m.COMM_METHOD: JIT_NOT_MEASURED}
        return found | communication(spec, built, gradients, iterator, sync, loop)

    return Trainer(
        make_step(iterator),
        sync,
        how,
        built.workload,
        built.devices,
        replicas,
        columns=columns,
        agree=elementwise_max(built.strategy) if spec.cluster else None,
        start_timing=None if probe is None else probe.noise.start,
        after_window=None if probe is None else probe.noise.after_window,
    )


def distributed_input(spec: RunSpec, built, replicas: int):
    """(the files source or None, the dataset distributed over the strategy's replicas): one synthetic batch, or the
    pipeline reading the config's files."""
    from tfscale.worker.data import synthetic_dataset
    from tfscale.worker.input import source

    files = source(spec, built.workload, spec.global_batch_size // replicas)
    if files is None:
        synthetic = synthetic_dataset(built.workload, spec.global_batch_size, spec.seed)
        return None, built.strategy.experimental_distribute_dataset(synthetic)
    dataset = files.distributed(built.strategy)
    report_progress("input pipeline ready")
    return files, dataset


@dataclass
class NoiseProbing:
    """grad_noise: true: the noise scale read in the step every grad_noise_every steps (tfscale.worker.noise)."""

    noise: Any  # noise.NoiseAccumulator
    schedule: Any  # goodput.ProbeSchedule
    probed: Any  # the probed replica step

    @classmethod
    def of(cls, spec: RunSpec, built, gradients, replicas: int) -> NoiseProbing:
        from tfscale.measures.goodput import ProbeSchedule
        from tfscale.worker import noise as probe

        variables = built.workload.model.trainable_variables
        if replicas == 1:  # no all-reduce to read around: the step's two halves stand for two replicas
            noise = probe.NoiseAccumulator(2, spec.global_batch_size)
            probed = probe.make_halves_replica_step(gradients, built.optimizer, variables)
        else:
            noise = probe.NoiseAccumulator(replicas, spec.global_batch_size)
            probed = probe.make_probed_replica_step(
                gradients, built.optimizer, variables, probe.NoiseProbe(built.optimizer)
            )
        return cls(noise, ProbeSchedule(spec.grad_noise_every), probed)

    def step(self, strategy, batches, plain: Callable[[], Any]) -> Callable[[], Any]:
        """The plain step, and the probed one on the schedule's steps."""
        from tfscale.worker import noise as probe

        return probe.scheduled_step(
            self.schedule, probe.build_probed_train_step(strategy, self.probed, batches, self.noise), plain
        )


def elementwise_max(strategy) -> Callable[[list[float]], list[float]]:
    """The loop's decisions shared by every worker of a MultiWorkerMirrored cluster: an all-gather of a few numbers
    (outside the timed windows), then their maximum per position. tf.distribute.ReduceOp has no MAX."""
    import tensorflow as tf

    @tf.function
    def gathered(values):
        def replica_fn(v):
            return tf.distribute.get_replica_context().all_gather(v[None], axis=0)

        return strategy.experimental_local_results(strategy.run(replica_fn, args=(values,)))[0]

    def agree(values: list[float]) -> list[float]:
        rows = gathered(tf.constant(values, tf.float32)).numpy()
        return [float(x) for x in rows.max(axis=0)]

    return agree


def communication(spec: RunSpec, built: Built, gradients, iterator, sync, loop) -> dict[str, Any]:
    """Compute-only, split and isolated timings beside the fused step (tfscale.worker.comm), with the fused
    step's windows (`loop`, a LoopResult)."""
    from tfscale.measures.comm import applicable
    from tfscale.worker import comm

    variables = built.workload.model.trainable_variables
    window = loop.window_steps
    strategy = built.strategy
    samples = comm.measure(strategy, gradients, built.optimizer, variables, iterator, spec.comm_steps, sync, window)
    report_progress("communication timed")
    found = comm.figures(samples, loop.samples_s, window, variable_bytes(variables), strategy.num_replicas_in_sync)
    return applicable(found, spec.strategy)


def input_figures(built: Built, files, make_step, sync, loop) -> dict[str, Any]:
    """The input wait and the pipeline's own throughput (measures.inputs): windows of the same step fed one pipeline
    batch held in memory (tfscale.worker.input.time_input), then this process's pipeline drained alone. Every rank
    of a cluster runs the same windows (lockstep: the step all-reduces)."""
    from tfscale.measures.inputs import input_columns
    from tfscale.worker.input import time_input

    strategy = built.strategy
    memory_step = make_step(iter(strategy.distribute_datasets_from_function(files.in_memory)))
    pipeline = files.fn(files.contexts[0])
    memory_samples, examples_per_s = time_input(memory_step, sync, loop, pipeline, files.per_replica_batch)
    # This process's share: its pipeline feeds its own replicas (all of them, or one MultiWorkerMirrored worker's:
    # the merge sums the workers' pipelines and recomputes the headroom over the config's throughput).
    local_replicas = len(strategy.extended.worker_devices)
    consumed = files.per_replica_batch * local_replicas / statistics.median(loop.samples_s)
    return input_columns(loop.samples_s, memory_samples, examples_per_s, consumed, loop.window_steps)


NOISE_METHOD = (
    "gradient noise scale B_simple = tr(Sigma) / |G|^2, each the sum over the probed steps of McCandlish et al.'s "
    "unbiased two-batch estimates from {small_batches} (batch {small}) and {big_batch} (batch {big}), read in "
    "{probed} of {timed} timed steps ({which})"
)
NOISE_CI = "95 % CI: Fieller's, for a ratio of means over the {windows} timing windows that held one"
NOISE_SMALL = {
    "replicas": ("every replica's squared gradient norm before the optimizer's all-reduce", "the all-reduced one's"),
    "halves": ("the squared gradient norms of the step's two half batches", "their sum's"),
}


def noise_columns(noise, halves: bool, every: int, loop) -> dict[str, Any]:
    """The record's noise-scale columns from the accumulator's per-window sums (measures.goodput); `halves`: read
    from one replica's two half batches, else around the all-reduce of the replicas; `every`: grad_noise_every;
    `loop`: the timed windows (a LoopResult)."""
    from tfscale.measures.goodput import NoiseScale

    small_batches, big_batch = NOISE_SMALL["halves" if halves else "replicas"]
    windows = noise.windows
    scale = NoiseScale.of([w[0] for w in windows], [w[1] for w in windows])
    method = NOISE_METHOD.format(
        small_batches=small_batches,
        big_batch=big_batch,
        small=noise.small,
        big=noise.big,
        probed=sum(w[2] for w in windows),
        timed=loop.timed_steps,
        which="every step" if every == 1 else f"one step in every {every}: grad_noise_every",
    )
    ci = NOISE_CI.format(windows=scale.windows) if scale.low is not None else ""
    return {
        m.GRAD_NOISE_SCALE: scale.value,
        m.GRAD_NOISE_SCALE_CI95_LOW: scale.low,
        m.GRAD_NOISE_SCALE_CI95_HIGH: scale.high,
        m.GRAD_NOISE_METHOD: "; ".join(part for part in (method, ci, scale.note) if part),
    }
