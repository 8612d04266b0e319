"""The gradient noise scale measured inside the training step (tfscale.goodput has the estimator).

Keras 3's optimizer all-reduces the replicas' gradients itself, in `_all_reduce_sum_gradients`, inside
`apply_gradients`. `NoiseProbe` wraps that method on the config's optimizer: the same one all-reduce runs, and
around it the probe takes the squared norm of the replica's own gradients (before) and of the summed ones (after),
two local reductions over the gradients. The step then averages the replicas' pairs with one all-reduce of two
floats, and adds the step's two estimates to an accumulator on the host; the loop reads it after each timing window,
outside the timed span. Nothing else of the step changes.
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from tfscale.goodput import step_estimates


def _squared_norm(gradients) -> tf.Tensor:
    total = []
    for g in gradients:
        if g is None:
            continue
        values = g
        if isinstance(g, tf.IndexedSlices):  # rows of repeated indices add up before squaring (embeddings)
            rows, positions = tf.unique(g.indices)
            values = tf.math.unsorted_segment_sum(g.values, positions, tf.shape(rows)[0])
        total.append(tf.reduce_sum(tf.square(tf.cast(values, tf.float32))))
    return tf.add_n(total) if total else tf.constant(0.0)


class NoiseProbe:
    """Hooks an optimizer's all-reduce; `captured` holds (local, global) squared norms of the last traced call."""

    def __init__(self, optimizer):
        original = getattr(optimizer, "_all_reduce_sum_gradients", None)
        if original is None:
            raise RuntimeError("this Keras optimizer has no _all_reduce_sum_gradients: the noise scale cannot be read")
        self.captured: list[tuple[tf.Tensor, tf.Tensor]] = []

        def all_reduce_and_measure(grads_and_vars):
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
    """`replica_step(x, y) -> (loss, [local squared norm, global squared norm])`."""

    def replica_step(x, y):
        loss, grads = gradients(x, y)
        optimizer.apply_gradients(zip(grads, variables, strict=True))
        local, summed = probe.take()
        return loss, tf.stack([local, summed])

    return replica_step


class NoiseAccumulator:
    """Sums of the per-step estimates (|G|^2, tr(Sigma), steps) on the host, read after each window."""

    def __init__(self, replicas: int, global_batch: int):
        self.replicas, self.big = replicas, global_batch
        self.small = global_batch // replicas
        with tf.device("/cpu:0"):
            self.sums = tf.Variable(tf.zeros(3, tf.float64), trainable=False, name="noise_sums")
        self.last = None
        self.windows: list[tuple[float, float, int]] = []

    def add(self, norms: tf.Tensor) -> tf.Operation:
        """Inside the step: norms = the replicas' mean of [local, global] squared norms of the SUMMED-loss
        gradients; each replica's own gradient is 1/replicas of its mean gradient's scale (the loss is averaged
        over the global batch), hence the factor on the local one."""
        local = tf.cast(norms[0], tf.float64) * float(self.replicas) ** 2
        summed = tf.cast(norms[1], tf.float64)
        grad_sq, trace = step_estimates(local, summed, self.small, self.big)
        return self.sums.assign_add(tf.stack([grad_sq, trace, tf.constant(1.0, tf.float64)]))

    def start(self) -> None:
        self.last = self.sums.numpy()
        self.windows = []

    def after_window(self) -> None:
        now = self.sums.numpy()
        g, t, n = now - self.last
        self.windows.append((float(g), float(t), int(n)))
        self.last = now


def build_probed_train_step(strategy, replica_step: Callable, iterator, accumulator: NoiseAccumulator) -> Callable:
    """tfscale.worker.loop.build_train_step with the probe: the replicas' squared norms averaged (one all-reduce of
    two floats) and the step's estimates added to the accumulator before the summed loss is returned."""

    @tf.function
    def train_step():
        x, y = next(iterator)
        losses, norms = strategy.run(replica_step, args=(x, y))
        mean_norms = strategy.reduce(tf.distribute.ReduceOp.MEAN, norms, axis=None)
        with tf.control_dependencies([accumulator.add(mean_norms)]):
            return tf.identity(strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None))

    return train_step
