"""The training step (a `tf.function` around `strategy.run`) and the timed loop around it.

Timing (tfscale.worker.timing): wall clock over windows of `window_steps` steps; each window ends in a host sync,
so device work queued asynchronously (GPUs) is inside the window it belongs to. Warm-up steps, including the
first step (tracing, XLA compilation), are never in a window. How many steps a window, the warm-up and the timed
part take: tfscale.stats.precision.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields

import tensorflow as tf

from tfscale.contract import PHASE_TIMED, PHASE_TIMING, WINDOW_PHASE_PREFIX
from tfscale.stats.precision import (
    STOP_FIXED,
    STOP_TARGET,
    WARMUP_BUDGET,
    WARMUP_FIXED,
    WARMUP_STEADY,
    Blocks,
    calibrated_window_steps,
    check_due,
    fixed_steps_window,
    is_auto,
    steady,
    stop_reason,
)
from tfscale.suite.spec import RunSpec
from tfscale.suite.workload import Workload
from tfscale.worker.timing import time_calls

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
    window_steps: int  # steps per timed window (as set, or as calibrated)
    final_loss: float | None  # the last timed step's (None where the mode reads it otherwise)
    timing: str  # how the samples were measured, one sentence
    warmup_steps: int = 0  # untimed steps run before the timed windows, the first step included
    warmup_stop: str = ""  # why the warm-up ended (tfscale.stats.precision.WARMUP_*)
    measure_stop: str = ""  # why the timed windows ended (tfscale.stats.precision.STOP_*)
    extra: dict = field(default_factory=dict)  # strategy-specific record columns (e.g. ParameterServer ranks)


Agree = Callable[[list[float]], list[float]]  # element-wise max of a few numbers over the config's trainers


def _alone(values: list[float]) -> list[float]:
    return values


@dataclass(frozen=True)
class Plan:
    """How the loop measures, from the spec's precision settings (tfscale.stats.precision has the rules)."""

    steps: int | str
    warmup_steps: int | str
    window_steps: int | str
    min_window_s: float
    target_ci: float
    max_measure_s: float
    max_warmup_s: float

    @classmethod
    def of(cls, spec: RunSpec) -> Plan:
        """The spec's fields of these names (each field here is the RunSpec field of its name)."""
        return cls(**{f.name: getattr(spec, f.name) for f in fields(cls)})


class _Progress:
    """report_progress at most every PROGRESS_EVERY_S: short windows would otherwise write the file 20 x a second."""

    PROGRESS_EVERY_S = 0.5

    def __init__(self, report: Callable[[str], None] | None):
        self.report, self.last = report, -math.inf

    def __call__(self, phase: str, force: bool = False) -> None:
        now = time.monotonic()
        if self.report is not None and (force or now - self.last >= self.PROGRESS_EVERY_S):
            self.report(phase)
            self.last = now


def warm_up(train_step, sync, plan: Plan, agree: Agree, progress: _Progress) -> tuple[int, int, str]:
    """Untimed steps after the first until the timing can start: (window steps, untimed steps run, why stopped).

    Fixed warmup_steps run first; then, where window_steps or warmup_steps is auto, whole windows run untimed: each
    too short a window grows the window (calibration), and with warmup_steps auto, windows run until the last
    ones agree (steady) or max_warmup_s is spent. Every decision is agreed over the trainers (`agree`), so the
    ranks of a synchronous cluster take the same number of steps."""
    fixed_warmup = not is_auto(plan.warmup_steps)
    ran = 1
    if fixed_warmup:
        for _ in range(int(plan.warmup_steps) - 1):
            sync(train_step())
        ran = int(plan.warmup_steps)
    auto_window = is_auto(plan.window_steps)
    window = 1 if auto_window else int(plan.window_steps)
    if fixed_warmup and not auto_window:
        return window, ran, WARMUP_FIXED
    start, blocks = time.perf_counter(), Blocks()
    while True:
        elapsed = time_calls(train_step, sync, samples=1, per_sample=window, collect=False).samples_s[0] * window
        ran += window
        wanted = calibrated_window_steps(window, elapsed, plan.min_window_s) if auto_window else window
        if auto_window and not is_auto(plan.steps):
            wanted = fixed_steps_window(int(plan.steps), wanted)
        blocks.add(elapsed / window, elapsed)
        spent = time.perf_counter() - start >= plan.max_warmup_s
        unsteady = not fixed_warmup and not steady(blocks.medians)
        wanted, unsteady, spent = agree([float(wanted), float(unsteady), float(spent)])
        progress(f"warm-up: {ran} steps")
        if spent:
            return int(wanted), ran, WARMUP_FIXED if fixed_warmup else WARMUP_BUDGET
        if wanted != window:  # a window of another size starts the steady check afresh
            window, blocks = int(wanted), Blocks()
            continue
        if not unsteady:
            return window, ran, WARMUP_FIXED if fixed_warmup else WARMUP_STEADY


class _Stop:
    """After each timed window: whether to take another (fixed steps: until they are done; auto: until
    stats.precision.stop_reason says stop, checked when check_due, every rank of a cluster agreeing), and why the
    windows stopped."""

    def __init__(self, plan: Plan, window: int, windows: int | None, agree: Agree, progress, after_window) -> None:
        self.plan, self.window, self.windows = plan, window, windows
        self.agree, self.progress, self.after_window = agree, progress, after_window
        self.why = STOP_FIXED if windows is not None else ""

    def more(self, samples: list[float]) -> bool:
        if self.after_window is not None:  # outside the timed span, like the rest of the loop
            self.after_window()
        if self.windows is not None:
            self.progress(f"{WINDOW_PHASE_PREFIX}{len(samples)}/{self.windows}")
            return True
        self.progress(f"{WINDOW_PHASE_PREFIX}{len(samples)}")
        if not check_due(len(samples)):
            return True
        why = stop_reason(samples, sum(samples) * self.window, self.plan.target_ci, self.plan.max_measure_s)
        (carry_on,) = self.agree([float(why is None)])
        if carry_on:
            return True
        self.why = why or STOP_TARGET  # another rank wanted more windows until now: this one's target
        return False


def run_timed_loop(
    train_step: Callable[[], tf.Tensor],
    *,
    plan: Plan,
    sync: Callable[[tf.Tensor], float],
    how: str,
    on_window: Callable[[str], None] | None = None,
    start_timing: Callable[[], None] | None = None,
    agree: Agree | None = None,
    after_window: Callable[[], None] | None = None,
) -> LoopResult:
    """The first step timed on its own, the warm-up (`warm_up`), then timed windows of a fixed number of steps,
    each ended by `sync` (host_sync gives it and `how`, the sentence that says what it does), until the fixed
    steps are done or `tfscale.stats.precision.stop_reason` says stop. `start_timing` runs before the first timed
    window; `agree` (cluster trainers) makes every rank take the same decisions."""
    agree = agree or _alone
    progress = _Progress(on_window)
    first = time_calls(train_step, sync, samples=1)
    window, warmup_ran, warmup_stop = warm_up(train_step, sync, plan, agree, progress)
    progress("warm-up done", force=True)
    if start_timing is not None:
        start_timing()
    progress(PHASE_TIMING, force=True)  # the telemetry's timed samples start here (not after window 1)
    fixed = not is_auto(plan.steps)
    windows = max(1, int(plan.steps) // window) if fixed else None
    stop = _Stop(plan, window, windows, agree, progress, after_window)
    timed = time_calls(train_step, sync, samples=windows, per_sample=window, more=stop.more)
    progress(PHASE_TIMED, force=True)  # what runs after (breakdown, profile) is not timed-window telemetry
    samples = timed.samples_s
    timing = (
        f"time.perf_counter over {len(samples)} windows of {window} step(s), each ended by a host sync "
        f"({how}); {warmup_ran} warm-up step(s) untimed ({warmup_stop}); stopped: {stop.why}"
    )
    return LoopResult(
        first.samples_s[0],
        samples,
        len(samples) * window,
        window,
        timed.last,
        timing,
        warmup_steps=warmup_ran,
        warmup_stop=warmup_stop,
        measure_stop=stop.why,
    )
