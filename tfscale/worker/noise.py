"""The gradient noise scale measured inside the training step (tfscale.measures.goodput has the estimator).

Keras 3's optimizer all-reduces the replicas' gradients itself, in `_all_reduce_sum_gradients`, inside
`apply_gradients`. `NoiseProbe` wraps that method on the config's optimizer: the same one all-reduce runs, and
around it the probe takes the squared norm of the replica's own gradients (before) and of the summed ones (after),
two local reductions over the gradients. No communication is added: the step sums the squared norms of this
process's replicas on its host and adds them to an accumulator there, which the loop reads after each timing window,
outside the timed span. A MultiWorkerMirrored rank's estimate uses its own replicas' norms (an unbiased estimate all
the same: any subset of the replicas is a sample of small batches).

With one replica there is no all-reduce to read around: `make_halves_replica_step` takes the gradients of the
step's two half batches apart and applies their sum (the batch's gradient), what two replicas would give. It costs
two half-size backward passes instead of one (and BatchNorm sees half batches), so it runs only where asked
(`grad_noise: true`).
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from tfscale.measures.goodput import ProbeSchedule, step_estimates


def _squared_norm(gradients) -> tf.Tensor:
    halves = []  # l2_loss = sum(x^2) / 2 per variable, doubled once at the end
    for g in gradients:
        if g is None:
            continue
        values = g
        if isinstance(g, tf.IndexedSlices):  # rows of repeated indices add up before squaring (embeddings)
            rows, positions = tf.unique(g.indices)
            values = tf.math.unsorted_segment_sum(g.values, positions, tf.shape(rows)[0])
        # One kernel: square then reduce_sum writes and reads a gradient-sized temporary (bench_goodput, mlp/small:
        # +9 % step time that way, +2 % this way)
        halves.append(tf.nn.l2_loss(tf.cast(values, tf.float32)))
    return 2.0 * tf.add_n(halves) if halves else tf.constant(0.0)


class NoiseProbe:
    """Hooks an optimizer's all-reduce; `captured` holds (local, global) squared norms of the last traced call. It
    measures only in steps traced while `armed` (make_probed_replica_step sets it): the plain step, traced on the same
    optimizer where grad_noise_every > 1, stays plain."""

    def __init__(self, optimizer):
        original = getattr(optimizer, "_all_reduce_sum_gradients", None)
        if original is None:
            raise RuntimeError("this Keras optimizer has no _all_reduce_sum_gradients: the noise scale cannot be read")
        self.captured: list[tuple[tf.Tensor, tf.Tensor]] = []
        self.armed = False

        def all_reduce_and_measure(grads_and_vars):
            # Read on entry: MirroredStrategy runs each replica in its own thread, and a replica that got past the
            # all-reduce may leave apply_gradients while another is still inside it.
            if not self.armed:
                return original(grads_and_vars)
            grads_and_vars = list(grads_and_vars)
            reduced = original(grads_and_vars)
            local = _squared_norm(g for g, _ in grads_and_vars)
            summed = _squared_norm(g for g, _ in reduced)
            self.captured.append((local, summed))
            return reduced

        optimizer._all_reduce_sum_gradients = all_reduce_and_measure

    def take(self) -> tuple[tf.Tensor, tf.Tensor]:
        return self.captured.pop()


def make_probed_replica_step(gradients: Callable, optimizer, variables, probe: NoiseProbe) -> Callable:
    """`replica_step(x, y) -> (loss, (local squared norm, global squared norm))`. The global one is the same on every
    replica: the step reads the first local replica's, and TF drops the others' unused ops (profiled, mlp/tiny under
    Mirrored x2: 18 L2Loss ops a step for its 6 variables, 2 x 6 local and 6 global)."""

    def replica_step(x, y):
        loss, grads = gradients(x, y)
        probe.armed = True  # each replica's thread sets it before its own all-reduce (see NoiseProbe)
        optimizer.apply_gradients(zip(grads, variables, strict=True))
        probe.armed = False
        return loss, probe.take()

    return replica_step


def _add(a, b):
    """The sum of two gradients of one variable (IndexedSlices stay sparse: their rows are concatenated)."""
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, tf.IndexedSlices) and isinstance(b, tf.IndexedSlices):
        return tf.IndexedSlices(tf.concat([a.values, b.values], 0), tf.concat([a.indices, b.indices], 0), a.dense_shape)
    return tf.convert_to_tensor(a) + tf.convert_to_tensor(b)


def make_halves_replica_step(gradients: Callable, optimizer, variables) -> Callable:
    """`replica_step(x, y) -> (loss, (mean of the halves' squared norms, the sum's squared norm))` for one replica:
    each half's gradients of the loss averaged over the global batch (so the two add up to the batch's), their sum
    applied. The norms are what two replicas' probe gives: count it as NoiseAccumulator(2, global_batch)."""

    def half(t):  # the static batch size where known: halves of static shape (XLA compiles the gradients once)
        return (t.shape[0] if t.shape[0] is not None else tf.shape(t)[0]) // 2

    def replica_step(x, y):
        first = tf.nest.map_structure(lambda t: t[: half(t)], (x, y))
        second = tf.nest.map_structure(lambda t: t[half(t) :], (x, y))
        loss_a, grads_a = gradients(*first)
        loss_b, grads_b = gradients(*second)
        grads = [_add(a, b) for a, b in zip(grads_a, grads_b, strict=True)]
        optimizer.apply_gradients(zip(grads, variables, strict=True))
        own = (_squared_norm(grads_a) + _squared_norm(grads_b)) / 2
        return loss_a + loss_b, (own, _squared_norm(grads))

    return replica_step


class NoiseAccumulator:
    """Running sums on the host: [sum of the replicas' own squared norms, sum of the summed gradient's squared norm,
    replica-steps, steps]; `windows` holds each timing window's estimates (|G|^2 sum, tr(Sigma) sum, steps).
    `replicas` is the number of equal parts the global batch's gradient is the sum of (2 for one replica's halves)."""

    def __init__(self, replicas: int, global_batch: int):
        self.replicas, self.big = replicas, global_batch
        self.small = global_batch // replicas
        with tf.device("/cpu:0"):
            self.sums = tf.Variable(tf.zeros(4, tf.float64), trainable=False, name="noise_sums")
        self.last = None
        self.windows: list[tuple[float, float, int]] = []

    def add(self, own: list[tf.Tensor], summed: tf.Tensor) -> tf.Operation:
        """Inside the step: `own` = this process's replicas' squared norms of their gradients, `summed` = that of
        the all-reduced gradient (one replica's: the same on all), of the loss averaged over the GLOBAL batch."""
        counts = tf.constant([float(len(own)), 1.0], tf.float64)
        norms = tf.cast(tf.stack([tf.add_n(own), summed]), tf.float64)
        return self.sums.assign_add(tf.concat([norms, counts], axis=0))

    def start(self) -> None:
        self.last = self.sums.numpy()
        self.windows = []

    def after_window(self) -> None:
        now = self.sums.numpy()
        own, summed, replica_steps, steps = now - self.last
        self.last = now
        if steps == 0:
            return
        # A replica's gradient is 1/replicas of its small batch's mean gradient (the loss is averaged over the
        # global batch): |G_b|^2 = replicas^2 x its squared norm.
        small_sq = own / replica_steps * self.replicas**2
        grad_sq, trace = step_estimates(small_sq, summed / steps, self.small, self.big)
        self.windows.append((grad_sq * steps, trace * steps, int(steps)))


def build_probed_train_step(strategy, replica_step: Callable, iterator, accumulator: NoiseAccumulator) -> Callable:
    """tfscale.worker.loop.build_train_step with the probe: this process's replicas' squared norms added to the
    accumulator (no communication) before the summed loss is returned."""

    @tf.function
    def train_step():
        x, y = next(iterator)
        losses, (own, summed) = strategy.run(replica_step, args=(x, y))
        local = strategy.experimental_local_results
        with tf.control_dependencies([accumulator.add(list(local(own)), local(summed)[0])]):
            return tf.identity(strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None))

    return train_step


def scheduled_step(schedule: ProbeSchedule, probed: Callable, plain: Callable) -> Callable:
    """One step that is `probed` where the schedule says so, `plain` otherwise (both tf.functions on one iterator
    and optimizer: the same training, one with the norms). The first call runs one of each, so that both are traced
    and compiled in the config's first step (first_step_s): with warmup_steps 1 the plain one's first call would
    otherwise fall in the first timed window."""
    if schedule.every == 1:
        return probed
    first = True

    def step():
        nonlocal first
        if first:  # counts as two steps of the schedule: the probed one and the plain one
            first = False
            schedule.probe_now()
            probed()
            schedule.probe_now()
            return plain()
        return probed() if schedule.probe_now() else plain()

    return step
