"""Benchmark: tfscale's step loop vs a bare hand-written `strategy.run` loop vs Keras `model.fit`.

Same model, strategy, batch and data for all three, interleaved in rounds inside one process so that machine noise
hits them alike. Prints per-round throughputs and the median ratios. Not a test: targets (tfscale >= 0.99x bare,
>= 1.05x model.fit) are read, not asserted, because shared machines are noisy.

    python tests/benchmarks/bench_step_loop.py [--devices 2] [--model mlp] [--size small] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")

import keras  # noqa: E402  (environment first)
import tensorflow as tf  # noqa: E402

from tfscale.worker.data import synthetic_dataset  # noqa: E402
from tfscale.worker.devices import setup_devices  # noqa: E402
from tfscale.worker.loop import (  # noqa: E402
    build_train_step,
    host_sync,
    make_gradients,
    make_replica_step,
    run_timed_loop,
)
from tfscale.worker.models import ZOO  # noqa: E402


def make(strategy, model_name, size, seed):
    keras.utils.set_random_seed(seed)
    with strategy.scope():
        workload = ZOO[model_name](size)
        optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
        optimizer.build(workload.model.trainable_variables)
    return workload, optimizer


def tfscale_runner(strategy, workload, optimizer, global_batch, steps):
    iterator = iter(strategy.experimental_distribute_dataset(synthetic_dataset(workload, global_batch, 0)))
    sync, how = host_sync("cpu")
    gradients = make_gradients(workload, global_batch, jit=False)
    step = build_train_step(
        strategy, make_replica_step(gradients, optimizer, workload.model.trainable_variables), iterator
    )

    def run() -> float:
        loop = run_timed_loop(step, warmup_steps=1, steps=steps, window_steps=1, sync=sync, how=how)
        return global_batch / statistics.median(loop.samples_s)

    return run


def bare_runner(strategy, workload, optimizer, global_batch, steps):
    """What a user would write by hand, from the tf.distribute custom-training-loop tutorial."""
    model, variables = workload.model, workload.model.trainable_variables
    iterator = iter(strategy.experimental_distribute_dataset(synthetic_dataset(workload, global_batch, 0)))

    def replica_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(workload.loss(y, model(x, training=True)), global_batch_size=global_batch)
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=True))
        return loss

    @tf.function
    def step():
        x, y = next(iterator)
        return strategy.reduce("SUM", strategy.run(replica_step, args=(x, y)), axis=None)

    def run() -> float:
        step().numpy()  # one untimed step, as tfscale's warm-up
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            step().numpy()
            times.append(time.perf_counter() - start)
        return global_batch / statistics.median(times)

    return run


class StepClock(keras.callbacks.Callback):
    """Times between consecutive batch ends inside fit: steady-state steps, not fit's set-up."""

    def on_train_begin(self, logs=None):
        self.ends = []

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(time.perf_counter())


def fit_runner(strategy, workload, optimizer, global_batch, steps):
    with strategy.scope():
        workload.model.compile(optimizer=optimizer, loss=workload.loss)
    dataset = synthetic_dataset(workload, global_batch, 0)
    clock = StepClock()

    def run() -> float:
        workload.model.fit(dataset, epochs=1, steps_per_epoch=steps + 1, verbose=0, callbacks=[clock])
        gaps = [b - a for a, b in zip(clock.ends, clock.ends[1:], strict=False)]
        return global_batch / statistics.median(gaps)

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--size", default="small")
    parser.add_argument("--batch", type=int, default=64, help="per replica")
    parser.add_argument("--steps", type=int, default=40, help="timed steps per round and contender")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()

    devices = setup_devices("cpu", args.devices)
    strategy = tf.distribute.MirroredStrategy(devices)
    global_batch = args.batch * strategy.num_replicas_in_sync
    runners = {
        name: build(strategy, *make(strategy, args.model, args.size, seed=1), global_batch, args.steps)
        for name, build in (("tfscale", tfscale_runner), ("bare", bare_runner), ("fit", fit_runner))
    }
    for run in runners.values():  # trace and warm every contender before the first round
        run()

    results = {name: [] for name in runners}
    print(
        f"{args.model}/{args.size}, MirroredStrategy over {args.devices} logical CPU devices, global batch "
        f"{global_batch}, {args.steps} steps x {args.rounds} rounds (examples/s, median step per round)"
    )
    for round_index in range(args.rounds):
        order = list(runners) if round_index % 2 == 0 else list(reversed(runners))  # alternate who goes first
        for name in order:
            results[name].append(runners[name]())
        print(f"round {round_index + 1}: " + "  ".join(f"{n} {results[n][-1]:8.0f}" for n in runners))

    for other, target in (("bare", 0.99), ("fit", 1.05)):
        ratios = sorted(t / o for t, o in zip(results["tfscale"], results[other], strict=True))
        print(
            f"tfscale/{other}: median of per-round ratios {statistics.median(ratios):.3f} "
            f"(rounds range {ratios[0]:.3f}-{ratios[-1]:.3f}; target >= {target})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
