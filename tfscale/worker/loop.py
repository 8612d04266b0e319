"""The training step (a `tf.function` around `strategy.run`) and the timed loop around it.

Timing (tfscale.worker.timing): wall clock over windows of `window_steps` steps; each window ends in a host sync,
so device work queued asynchronously (GPUs) is inside the window it belongs to. Warm-up steps, including the
first step (tracing, XLA compilation), are never in a window.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import tensorflow as tf

from tfscale.spec import RunSpec
from tfscale.worker.timing import time_calls
from tfscale.workload import Workload

# float16 gradients underflow without loss scaling. Keras 3's dynamic LossScaleOptimizer fails inside
# strategy.run (its apply_gradients calls merge_call inside a cond: seen with Keras 3.15 under Mirrored and
# CentralStorage), and its static `loss_scale_factor` cannot divide IndexedSlices (embedding gradients). So the
# step scales the loss by this constant and unscales the gradients itself: the same float16 work, without the
# dynamic scale's overflow check and skipped steps.
STATIC_LOSS_SCALE = 2.0**10


def loss_scale(spec: RunSpec) -> float | None:
    return STATIC_LOSS_SCALE if spec.precision == "mixed_float16" else None


def _unscale(gradient, scale: float):
    if gradient is None:  # a variable the loss does not depend on
        return None
    if isinstance(gradient, tf.IndexedSlices):
        return tf.IndexedSlices(gradient.values / scale, gradient.indices, gradient.dense_shape)
    return gradient / scale


def make_gradients(workload: Workload, global_batch: int, jit: bool, loss_scale: float | None = None) -> Callable:
    """`gradients(x, y) -> (loss, grads)` of one replica, without any communication.

    The per-replica loss is averaged over the GLOBAL batch (`compute_average_loss`) because the optimizer sums
    gradients over replicas. With `jit`, this computation is XLA-compiled; the update with its all-reduce is not
    (collectives inside XLA are not available on every device kind).
    """
    model = workload.model
    variables = model.trainable_variables

    def gradients(x, y):
        with tf.GradientTape() as tape:
            per_example = tf.cast(workload.loss(y, model(x, training=True)), tf.float32)
            if per_example.shape.rank != 1:  # user losses may keep extra (or unknown) axes: average per example
                per_example = tf.reduce_mean(tf.reshape(per_example, [tf.shape(per_example)[0], -1]), axis=1)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
            scaled = loss if loss_scale is None else loss * loss_scale
        grads = tape.gradient(scaled, variables)
        return loss, grads if loss_scale is None else [_unscale(g, loss_scale) for g in grads]

    return tf.function(gradients, jit_compile=True) if jit else gradients


def make_replica_step(gradients: Callable, optimizer, variables) -> Callable:
    """`replica_step(x, y) -> loss`: gradients, then the optimizer update (Keras all-reduces inside it)."""

    def replica_step(x, y):
        loss, grads = gradients(x, y)
        optimizer.apply_gradients(zip(grads, variables, strict=True))
        return loss

    return replica_step


def build_train_step(strategy: tf.distribute.Strategy, replica_step: Callable, iterator) -> Callable[[], tf.Tensor]:
    """A `tf.function() -> summed loss` running one synchronous data-parallel step on the next batch.

    The iterator is captured, not passed: a tf.function argument costs a trace-cache lookup of its type spec on
    every call (7-round benchmark runs: 0.973x the bare loop when passed, 0.986x when captured).
    """

    @tf.function
    def train_step():
        x, y = next(iterator)
        losses = strategy.run(replica_step, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    return train_step


def host_sync(device: str, multi_worker: bool = False) -> tuple[Callable[[tf.Tensor], float], str]:
    """A function that blocks until a step's work is done, and a sentence saying how."""
    if device == "gpu" and multi_worker:
        # sync_devices() fails under MultiWorkerMirrored (seen with TF 2.21): the reduced loss is the sync point.
        return (lambda loss: float(loss.numpy())), "all-reduced loss fetched to host (sync_devices fails here)"
    if device == "gpu":

        def sync(loss: tf.Tensor) -> float:
            value = float(loss.numpy())
            tf.test.experimental.sync_devices()  # also waits for the weight updates still queued on the GPUs
            return value

        return sync, "loss fetched to host, then tf.test.experimental.sync_devices()"
    # On CPU a tf.function call returns only after all its ops, stateful updates included, have run.
    return (lambda loss: float(loss.numpy())), "loss fetched to host (CPU ops finish before the call returns)"


@dataclass(frozen=True)
class LoopResult:
    first_step_s: float  # first step: tracing, compilation and one step, ended by a sync
    samples_s: list[float]  # per-step time of each window: window wall time / window_steps
    timed_steps: int
    window_steps: int
    final_loss: float | None  # the last timed step's (None where the mode reads it otherwise)
    timing: str  # how the samples were measured, one sentence
    extra: dict = field(default_factory=dict)  # strategy-specific record columns (e.g. ParameterServer ranks)


def run_timed_loop(
    train_step: Callable[[], tf.Tensor],
    *,
    warmup_steps: int,
    steps: int,
    window_steps: int,
    sync: Callable[[tf.Tensor], float],
    how: str,
    on_window: Callable[[str], None] | None = None,
    start_timing: Callable[[], None] | None = None,
) -> LoopResult:
    """Warm up (the first step timed on its own), then time `steps // window_steps` windows, each ended by `sync`
    (host_sync gives it and `how`, the sentence that says what it does). `start_timing` runs between the two."""
    first = time_calls(train_step, sync, samples=1)
    for _ in range(warmup_steps - 1):
        sync(train_step())
    if on_window is not None:
        on_window("warm-up done")
    if start_timing is not None:
        start_timing()
    windows = max(1, steps // window_steps)

    def reached(index: int) -> None:
        if on_window is not None:
            on_window(f"window {index + 1}/{windows}")

    timed = time_calls(train_step, sync, samples=windows, per_sample=window_steps, on_sample=reached)
    timing = (
        f"time.perf_counter over {windows} windows of {window_steps} step(s), each ended by a host sync "
        f"({how}); {warmup_steps} warm-up step(s) untimed"
    )
    return LoopResult(first.samples_s[0], timed.samples_s, windows * window_steps, window_steps, timed.last, timing)
