"""Does the gradient noise scale predict what a bigger batch costs in steps? The zoo mlp on the teacher task, trained
to a target loss at two global batch sizes, against McCandlish et al.'s S = S_min (1 + B_noise / B).

Both batch sizes train under MirroredStrategy on 2 logical CPU devices with tfscale's own probed step
(tfscale.worker.noise), with plain SGD (McCandlish et al.'s setting; `--momentum 0.9` gives tfscale's default
optimizer), each at the best learning rate of a grid in steps of sqrt(2) that is widened until its best rate is
inside it (the relation assumes a tuned learning rate per batch size). A run's step count is the first step (the
small batch: the first multiple of `--every` steps) at which the loss on a fixed held-out set of `--eval` fresh
examples of the same teacher is <= `--target`. (The training batches' own losses are no measure of progress at a
small batch: the mean of 10 batches of 32 fluctuates by more than the gap to the target, so a small batch "reaches"
it early by luck; a first version of this check did so and measured ratios of 4.6 to 5.3 where this one finds 11.9
to 14.1 with momentum.) The default target, 1.0, lies where the loss still falls steeply; near 0.8 a batch of 32 is
close to the loss its gradient noise lets it reach, and steps to the target count that floor too.

Each seed gives the model its initialisation and its stream of training inputs (the teacher is the same). B_noise is
tfscale's in-step estimate along the large-batch runs at their best rates, averaged as the relation counts it (per
window of `--window` steps, pooled over the seeds: a step at batch B with noise scale B_t makes the progress of
1 / (1 + B_t/B) steps of an infinite batch; `along_the_way`). The predicted ratio of steps, S_small / S_large =
(1 + B_noise/B_small) / (1 + B_noise/B_large), is compared with the measured one (ratio of the mean step counts).
Printed beside it: the prediction from the same average along the small-batch runs, from the plain ratio of the
sums over the large-batch runs (`_pooled`), the B_noise that the measured ratio implies, and the error's 95 % CI
(`error_ci95`: the seeds' runs bootstrapped, `error_interval`), and whether the error and its CI are within the
issue's 15 % (`within_bar`, `ci_within_bar`). Ten seeds by default: a large batch's noise scale read along its run
depends on which rate of the grid wins for that seed (with SGD 132 at rate 1.13, 137-243 at 0.8, 220-256 at 0.57),
and seeds 0-2 alone read -18 % where ten read -6 %. Prints one JSON line; 2 to 3 minutes on 2 cores.
docs/goodput.md has the figures seen.

    python tests/e2e/support/convergence_check.py [--small 32] [--large 512] [--target 1.0] [--seeds 0,1,...,9]
        [--momentum 0.9]
"""

import argparse
import json
import math
import os
import sys

import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402
import numpy as np  # noqa: E402

from tfscale.stats.uncertainty import BOOTSTRAP_RESAMPLES, CONFIDENCE  # noqa: E402
from tfscale.worker.loop import make_gradients  # noqa: E402
from tfscale.worker.models import mlp  # noqa: E402
from tfscale.worker.noise import (  # noqa: E402
    NoiseAccumulator,
    NoiseProbe,
    build_probed_train_step,
    make_probed_replica_step,
)
from tfscale.worker.teacher import teacher, teacher_stream  # noqa: E402

TEACHER_SEED = 0  # one task for every seed
BAR = 0.15  # issue 18: the prediction within 15 % of the measured ratio
RATE_STEP = math.sqrt(2)


def held_out_loss(workload, examples: int):
    """`loss() -> float`: the model's mean loss on `examples` fixed fresh inputs of the teacher."""
    x = tf.random.stateless_normal([examples, *workload.input_spec.shape.as_list()], tf.constant([99, 99], tf.int64))
    y = teacher(workload, TEACHER_SEED)(x)
    loss = tf.function(lambda: tf.reduce_mean(workload.loss(y, workload.model(x, training=False))))
    return lambda: float(loss())


def run(strategy, global_batch: int, lr: float, seed: int, args) -> tuple:
    """(steps until the held-out loss is <= target, or None; the noise windows: (|G|^2 sum, tr(Sigma) sum, steps) per
    `--window` steps) of one training run."""
    keras.utils.set_random_seed(seed)
    with strategy.scope():
        workload = mlp("tiny")
        optimizer = keras.optimizers.SGD(lr, momentum=args.momentum)
        optimizer.build(workload.model.trainable_variables)
    variables = workload.model.trainable_variables
    replicas = strategy.num_replicas_in_sync
    gradients = make_gradients(workload, global_batch, jit=False)
    probed = make_probed_replica_step(gradients, optimizer, variables, NoiseProbe(optimizer))
    noise = NoiseAccumulator(replicas, global_batch)
    batch = global_batch // replicas
    draw = 5 + seed  # the seed's own training inputs; the held-out set is drawn apart from every stream
    dataset = strategy.distribute_datasets_from_function(
        lambda c: teacher_stream(workload, batch, TEACHER_SEED, c, draw=draw)
    )
    step = build_probed_train_step(strategy, probed, iter(dataset), noise)
    evaluate = held_out_loss(workload, args.eval)
    every = args.every if global_batch == args.small else 1  # a large batch takes few steps: count each
    noise.start()
    reached = None
    for n in range(1, args.limit + 1):
        loss = step()
        if n % args.window == 0:
            noise.after_window()
        if n % every == 0:
            if not np.isfinite(float(loss)):
                break
            if evaluate() <= args.target:
                reached = n
                break
    noise.after_window()
    return reached, noise.windows


def tuned(strategy, global_batch: int, first_lr: float, seed: int, args) -> dict:
    """The best rate of a sqrt(2) grid around `first_lr`, widened until the best is not at an end."""
    runs = {}

    def at(k: int):
        if k not in runs:
            runs[k] = run(strategy, global_batch, first_lr * RATE_STEP**k, seed, args)
        return runs[k]

    def steps(k: int) -> float:
        return at(k)[0] or math.inf

    for k in (-1, 0, 1):
        at(k)
    while True:
        best = min(runs, key=steps)
        if steps(best) == math.inf:
            raise SystemExit(f"batch {global_batch}: no rate of {sorted(runs)} reached {args.target}")
        if best == min(runs) and min(runs) > -8:
            at(best - 1)
        elif best == max(runs) and max(runs) < 8:
            at(best + 1)
        else:
            break
    steps_best, windows = runs[best]
    grad_sq, trace = sum(w[0] for w in windows), sum(w[1] for w in windows)
    return {
        "seed": seed,
        "lr": first_lr * RATE_STEP**best,
        "steps": steps_best,
        "grad_sq_sum": grad_sq,
        "trace_sum": trace,
        "noise_scale": trace / grad_sq,
        "windows": windows,
        "grid": {f"{first_lr * RATE_STEP**k:.4g}": runs[k][0] for k in sorted(runs)},
    }


def along_the_way(runs: list[dict], batch: int) -> float:
    """B_noise averaged over the runs' way as McCandlish et al.'s relation counts it: a step at batch B with noise
    scale B_t makes the progress of 1 / (1 + B_t/B) steps at an infinite batch, so S_min = sum of those over the
    steps, and S = S_min (1 + B/batch) gives B = batch (S / S_min - 1). B_t per window of `--window` steps, the runs'
    windows pooled by position (a window whose |G|^2 estimate is <= 0 makes no progress)."""
    positions = max(len(r["windows"]) for r in runs)
    steps = s_min = 0.0
    for k in range(positions):
        at_k = [r["windows"][k] for r in runs if k < len(r["windows"])]
        grad_sq, trace, n = (sum(w[i] for w in at_k) for i in range(3))
        progress = 1 / (1 + trace / grad_sq / batch) if grad_sq > 0 else 0.0
        steps += n
        s_min += n * progress
    return batch * (steps / s_min - 1)


def predicted_ratio(noise: float, small: int, large: int) -> float:
    """S_small / S_large from S = S_min (1 + B_noise / B)."""
    return (1 + noise / small) / (1 + noise / large)


def implied_noise_scale(ratio: float, small: int, large: int) -> float | None:
    """The B_noise for which (1 + B/small) / (1 + B/large) = ratio (None when no B gives it)."""
    slope = 1 / small - ratio / large
    return (ratio - 1) / slope if slope > 0 and ratio >= 1 else None


def error_interval(small: list[dict], large: list[dict], args) -> list[float]:
    """95 % percentile-bootstrap CI of the prediction's error (predicted / measured - 1): the seeds' runs resampled,
    each batch size's apart, and B_noise and the step counts recomputed from each resample (between-seed spread, the
    larger part; with 3 seeds a resample has only 10 distinct draws per batch)."""
    rng = np.random.default_rng(0)
    errors = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        s = [small[i] for i in rng.integers(0, len(small), len(small))]
        b = [large[i] for i in rng.integers(0, len(large), len(large))]
        measured = np.mean([r["steps"] for r in s]) / np.mean([r["steps"] for r in b])
        predicted = predicted_ratio(along_the_way(b, args.large), args.small, args.large)
        errors.append(predicted / measured - 1)
    tail = (1 - CONFIDENCE) / 2 * 100
    return [float(v) for v in np.percentile(errors, [tail, 100 - tail])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", type=int, default=32)
    parser.add_argument("--large", type=int, default=512)
    parser.add_argument("--target", type=float, default=1.0)
    parser.add_argument("--seeds", default=",".join(str(s) for s in range(10)))
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--window", type=int, default=10, help="steps per noise window")
    parser.add_argument("--eval", type=int, default=4096)
    parser.add_argument("--limit", type=int, default=6000)
    parser.add_argument("--momentum", type=float, default=0.0)
    parser.add_argument("--lr-small", type=float, help="centre of the small batch's first grid (default 0.1 x (1 - m))")
    parser.add_argument("--lr-large", type=float, help="centre of the large batch's first grid (default 0.8 x (1 - m))")
    args = parser.parse_args()
    args.lr_small = args.lr_small or 0.1 * (1 - args.momentum)  # the same step per gradient whatever the momentum
    args.lr_large = args.lr_large or 0.8 * (1 - args.momentum)
    seeds = [int(s) for s in args.seeds.split(",")]
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    small = [tuned(strategy, args.small, args.lr_small, s, args) for s in seeds]
    large = [tuned(strategy, args.large, args.lr_large, s, args) for s in seeds]
    pooled = sum(r["trace_sum"] for r in large) / sum(r["grad_sq_sum"] for r in large)
    noise = along_the_way(large, args.large)
    predicted = predicted_ratio(noise, args.small, args.large)
    small_way = along_the_way(small, args.small)
    measured = np.mean([r["steps"] for r in small]) / np.mean([r["steps"] for r in large])
    per_seed = [a["steps"] / b["steps"] for a, b in zip(small, large, strict=True)]
    error = float(predicted / measured - 1)
    interval = error_interval(small, large, args)
    print(
        json.dumps(
            {
                "target": args.target,
                "momentum": args.momentum,
                "small": small,
                "large": large,
                "noise_scale": noise,
                "noise_scale_pooled": pooled,
                "predicted_ratio_pooled": predicted_ratio(pooled, args.small, args.large),
                "noise_scale_small_runs": small_way,
                "predicted_ratio_small_runs": predicted_ratio(small_way, args.small, args.large),
                "noise_scale_per_seed": [r["noise_scale"] for r in large],
                "predicted_ratio": predicted,
                "measured_ratio": measured,
                "measured_ratio_per_seed": per_seed,
                "implied_noise_scale": implied_noise_scale(measured, args.small, args.large),
                "error": error,
                "error_ci95": interval,
                "within_bar": abs(error) <= BAR,
                "ci_within_bar": interval[0] >= -BAR and interval[1] <= BAR,
            }
        )
    )


main()
sys.stdout.flush()
# Skip the interpreter's and TensorFlow's teardown: after its JSON line this process stayed alive 7 to 8 minutes
# here, its threads waiting on futexes, with the runs' distributed input iterators still open (as tfscale's worker).
os._exit(0)
