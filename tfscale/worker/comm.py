"""Communication timing inside a data-parallel step, measured beside the fused step (measures.comm defines terms).

- compute-only step: `strategy.run` of the per-replica gradient computation, no all-reduce, no update;
- split step: given gradients already computed (untimed), their all-reduce through the strategy's own
  cross-device path plus an optimizer update per variable that communicates nothing;
- isolated collective: the all-reduce alone of tensors with exactly the gradients' shapes and dtypes, packed by the
  strategy as it packs gradients.

Keras 3's `apply_gradients` all-reduces by itself and works only in replica context, so the split step reduces
with a replica-context `all_reduce` of the whole gradient list (what `apply_gradients` does inside) and updates
each variable with `strategy.extended.update(v.value, optimizer.update_step)`.
That path skips Keras' gradient clipping, EMA and weight decay (none are used by tfscale's optimizers) and passes
the tf variable (`v.value`) as destination: a Keras variable raises. Sparse gradients (IndexedSlices, embeddings)
are made dense first in the split and isolated paths.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

import tensorflow as tf

from tfscale.worker.timing import time_calls

SUM = tf.distribute.ReduceOp.SUM


def _dense(gradient):
    return tf.convert_to_tensor(gradient) if isinstance(gradient, tf.IndexedSlices) else gradient


def compute_only_step(strategy: tf.distribute.Strategy, gradients: Callable, iterator) -> Callable:
    """tf.function() -> (summed loss, per-replica gradients): forward and backward only."""

    @tf.function
    def step():
        x, y = next(iterator)
        loss, grads = strategy.run(gradients, args=(x, y))
        return strategy.reduce(SUM, loss, axis=None), grads

    return step


def all_reduce(strategy: tf.distribute.Strategy, per_replica: list) -> list:
    """Sum per-replica tensors over replicas with a replica-context `all_reduce` of the whole list: the path Keras'
    own `apply_gradients` takes, so the strategy packs them as it packs gradients (per-variable
    `batch_reduce_to` does not pack: "Efficient batch_reduce is not supported if destinations are different")."""

    def replica_fn(*values):
        # tensors made by another tf.function need an identity here, else "destinations can not be empty"
        return tf.distribute.get_replica_context().all_reduce(SUM, [tf.identity(v) for v in values])

    return list(strategy.run(replica_fn, args=tuple(per_replica)))


def reduce_and_update_step(strategy: tf.distribute.Strategy, optimizer, variables: list) -> Callable:
    """tf.function(per-replica gradients) -> iteration count: all-reduce, then update without communication."""

    def update(variable, gradient):
        return optimizer.update_step(gradient, variable, tf.cast(optimizer.learning_rate, variable.dtype))

    @tf.function
    def step(grads):
        reduced = all_reduce(strategy, [_dense_per_replica(strategy, g) for g in grads])
        for variable, gradient in zip(variables, reduced, strict=True):
            strategy.extended.update(variable.value, update, args=(gradient,), group=False)
        return optimizer.iterations.assign_add(1)

    return step


def _dense_per_replica(strategy: tf.distribute.Strategy, gradient):
    return strategy.run(_dense, args=(gradient,)) if _has_sparse(strategy, gradient) else gradient


def _has_sparse(strategy: tf.distribute.Strategy, gradient) -> bool:
    return any(isinstance(v, tf.IndexedSlices) for v in strategy.experimental_local_results(gradient))


def isolated_all_reduce(strategy: tf.distribute.Strategy, variables: list) -> Callable:
    """tf.function() -> one reduced tensor: all-reduce of ones shaped like every gradient, nothing else."""

    def ones():
        return [tf.ones(v.shape, v.dtype) for v in variables]

    # Named functions, not two lambdas on one line: AutoGraph cannot tell those apart and warns in every worker log.
    payload = tf.function(lambda: strategy.run(ones))()

    @tf.function
    def step():
        reduced = all_reduce(strategy, list(payload))
        # One element of each result: returning depends on every reduction (some cross-device ops are not
        # stateful and would be pruned), without summing megabytes inside the timed call.
        firsts = [tf.cast(tf.reshape(strategy.experimental_local_results(t)[0], [-1])[0], tf.float32) for t in reduced]
        return tf.add_n(firsts)

    return step


@dataclass(frozen=True)
class CommSamples:
    compute_s: list[float]
    split_s: list[float]
    isolated_s: list[float]


def measure(
    strategy, gradients, optimizer, variables, iterator, samples: int, sync: Callable[[object], object], window: int
) -> CommSamples:
    """Time compute-only, split and isolated steps, `samples` each (the first call of each is untimed), each over
    windows of `window` calls, as the fused step is: per-call samples would add a host sync to every call and make
    the compute-only step look slower than it is (a negative exposed communication). The split step reduces and
    applies one set of gradients, computed once (untimed), at every call: what it times (an all-reduce of tensors
    of fixed shapes, an update) does not depend on their values, and computing fresh ones before each call cost
    as much as the compute-only samples again. Measured here (2 cores, 2026-12-07): cnn/tiny Mirrored x4's
    breakdown took 8.8 s instead of 12.4 s; in one process, 30 split samples each way in alternating blocks
    (7 Mirrored and CentralStorage configs x 3 runs), median new/old ratio 1.00 (geometric mean 0.98, range
    0.77-1.15): the same figure within noise."""
    compute = compute_only_step(strategy, gradients, iterator)
    split = reduce_and_update_step(strategy, optimizer, variables)
    isolated = isolated_all_reduce(strategy, variables)

    def timed(call) -> list[float]:  # one untimed call first
        return time_calls(call, sync, samples=samples, warmup=1, per_sample=window).samples_s

    compute_s = timed(lambda: compute()[0])
    loss, grads = compute()
    sync(loss)
    return CommSamples(compute_s=compute_s, split_s=timed(lambda: split(grads)), isolated_s=timed(isolated))


METHOD = (
    "medians of {n} samples each (one untimed call first), each ended by a host sync: compute = strategy.run of "
    "forward+backward only, over windows of {w} call(s) like the fused step; split = replica-context all_reduce "
    "of gradients computed once (untimed) + per-variable optimizer.update_step via strategy.extended.update, over "
    "windows of {w} call(s); isolated = the same all_reduce of ones shaped like the "
    "gradients, over windows of {w} call(s); exposed = fused median - compute median; CIs: bootstrap of the "
    "medians (exposed, overlap), order statistics of the isolated median (busbw)"
)


def figures(samples: CommSamples, fused_samples: list[float], window: int, grad_bytes: int, replicas: int) -> dict:
    """Record columns (tfscale.measures.comm.comm_figures and comm_intervals) plus the method sentence."""
    from tfscale import metrics as m
    from tfscale.measures.comm import comm_figures, comm_intervals

    return (
        comm_figures(
            fused_s=statistics.median(fused_samples),
            compute_s=statistics.median(samples.compute_s),
            split_s=statistics.median(samples.split_s),
            isolated_s=statistics.median(samples.isolated_s),
            grad_bytes=grad_bytes,
            replicas=replicas,
        )
        | comm_intervals(
            fused_samples=fused_samples,
            compute_samples=samples.compute_s,
            split_samples=samples.split_s,
            isolated_samples=samples.isolated_s,
            grad_bytes=grad_bytes,
            replicas=replicas,
        )
        | {m.COMM_METHOD: METHOD.format(n=len(samples.compute_s), w=window)}
    )
