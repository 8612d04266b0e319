"""Does the gradient noise scale predict what a bigger batch costs in steps? The zoo mlp on the teacher task, trained
to a target loss at two global batch sizes, against McCandlish et al.'s S = S_min (1 + B_noise / B).

Both batch sizes train under MirroredStrategy on 2 logical CPU devices with tfscale's own probed step
(tfscale.worker.noise), SGD with momentum 0.9, each at the best learning rate of a grid (the relation assumes a
tuned learning rate per batch size), until the training loss (mean over the last `--every` steps) reaches
`--target`. B_noise is tfscale's in-step estimate over the large batch's run (ratio of the sums of the estimates
over all its steps). The predicted ratio of steps, S_small / S_large = (1 + B_noise/B_small) / (1 + B_noise/B_large),
is compared with the measured one. Prints one JSON line.

    python tests/e2e/support/convergence_check.py [--small 32] [--large 512] [--target 0.6]
"""

import argparse
import json

import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402
import numpy as np  # noqa: E402

from tfscale.worker.loop import make_gradients  # noqa: E402
from tfscale.worker.models import mlp  # noqa: E402
from tfscale.worker.noise import (  # noqa: E402
    NoiseAccumulator,
    NoiseProbe,
    build_probed_train_step,
    make_probed_replica_step,
)
from tfscale.worker.teacher import teacher_stream  # noqa: E402

SEED = 0


def steps_to_target(strategy, global_batch: int, lr: float, target: float, every: int, limit: int) -> tuple:
    """(steps until the mean loss of the last `every` steps is <= target, or None; the run's noise scale)."""
    keras.utils.set_random_seed(SEED)
    with strategy.scope():
        workload = mlp("tiny")
        optimizer = keras.optimizers.SGD(lr, momentum=0.9)
        optimizer.build(workload.model.trainable_variables)
    variables = workload.model.trainable_variables
    replicas = strategy.num_replicas_in_sync
    gradients = make_gradients(workload, global_batch, jit=False)
    probed = make_probed_replica_step(gradients, optimizer, variables, NoiseProbe(optimizer))
    noise = NoiseAccumulator(replicas, global_batch)
    batch = global_batch // replicas
    dataset = strategy.distribute_datasets_from_function(lambda c: teacher_stream(workload, batch, SEED, c, draw=5))
    step = build_probed_train_step(strategy, probed, iter(dataset), noise)
    noise.start()
    losses = []
    for n in range(1, limit + 1):
        losses.append(float(step()))
        if not np.isfinite(losses[-1]):
            break
        if n % every == 0 and np.mean(losses[-every:]) <= target:
            noise.after_window()
            return n, noise.windows[0][1] / noise.windows[0][0]
    noise.after_window()
    return None, noise.windows[0][1] / noise.windows[0][0]


def best(strategy, global_batch: int, rates: list[float], target: float, every: int, limit: int) -> dict:
    runs = {lr: steps_to_target(strategy, global_batch, lr, target, every, limit) for lr in rates}
    reached = {lr: r for lr, r in runs.items() if r[0] is not None}
    if not reached:
        raise SystemExit(f"batch {global_batch}: no learning rate of {rates} reached loss {target} in {limit} steps")
    lr = min(reached, key=lambda k: reached[k][0])
    return {
        "lr": lr,
        "steps": reached[lr][0],
        "noise_scale": reached[lr][1],
        "grid": {k: v[0] for k, v in runs.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", type=int, default=32)
    parser.add_argument("--large", type=int, default=512)
    parser.add_argument("--target", type=float, default=0.6)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--limit", type=int, default=4000)
    parser.add_argument("--rates", default="0.003,0.01,0.03,0.1,0.3")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    small = best(strategy, args.small, rates, args.target, args.every, args.limit)
    large = best(strategy, args.large, rates, args.target, args.every, args.limit)
    noise = large["noise_scale"]
    predicted = (1 + noise / args.small) / (1 + noise / args.large)
    measured = small["steps"] / large["steps"]
    print(
        json.dumps(
            {
                "small": small,
                "large": large,
                "noise_scale": noise,
                "predicted_ratio": predicted,
                "measured_ratio": measured,
                "error": predicted / measured - 1,
            }
        )
    )


main()
