"""Benchmark: what measuring the gradient noise scale in the step costs (issue 18: at most 1 %).

In one process, per zoo model (tiny, teacher task, MirroredStrategy on 2 logical CPU devices, and on 1 where the
estimate splits the step's batch in two halves): tfscale's training step with the noise probe (tfscale.worker.noise) in
one step of every --every (grad_noise_every, as tfscale runs it: a count over all steps; 1: every step) and the plain
one (tfscale.worker.loop.build_train_step), built on one model and one input stream, timed in alternating windows (A B B
A A B ...: whatever the machine does falls on both, and neither always runs first) after a warm-up; prints each one's
median step, the overhead with a bootstrap 95 % CI: the median of the ratios of each probed window to the plain window
beside it, minus 1 (pairs cancel the machine's drift, which a ratio of the two medians keeps in its CI), and the noise
scale the probed steps measured; with 2+ replicas and N > 1, also the probe in every step, whose cost divided by N (with
its CI) estimates the cost at one step in N more finely than the direct pairs resolve here (their mlp control reads a
few %); last, the largest such CI high end against the 1 % bar. A window of 20 steps holds the floor or ceiling of 20 /
every probed steps, so its ratio is the probe's cost over the run, not a median that skips the probed steps. Separate
processes per setting were tried first: their spread between processes (+-30 % per round for the mlp here) hides a 1 %
effect.

    python tests/benchmarks/bench_goodput.py [--windows 60] [--window-steps 20] [--models mlp,cnn,transformer]
        [--replicas 2,1] [--size tiny] [--every N] [--control]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402

from tfscale import formatting as fmt  # noqa: E402
from tfscale.axes import GRAD_NOISE_EVERY  # noqa: E402
from tfscale.measures.goodput import ProbeSchedule  # noqa: E402
from tfscale.stats.uncertainty import of_median  # noqa: E402
from tfscale.worker.loop import build_train_step, make_gradients, make_replica_step  # noqa: E402
from tfscale.worker.models import ZOO  # noqa: E402
from tfscale.worker.noise import (  # noqa: E402
    NoiseAccumulator,
    NoiseProbe,
    build_probed_train_step,
    make_halves_replica_step,
    make_probed_replica_step,
    scheduled_step,
)
from tfscale.worker.teacher import teacher_stream  # noqa: E402

BATCH = 32  # per replica
BAR = 0.01  # issue 18: the probe costs at most 1 % of the step time


def measure(
    strategy, model: str, windows: int, window_steps: int, size: str = "tiny", every: int = 1, control: bool = False
) -> dict:
    """`control`: both arms run the plain step, the second switching between two tf.functions of it on the probe's
    schedule as the probed arm does (an A/A run: the pairing's floor and the cost of the switch, without the probe)."""
    keras.utils.set_random_seed(0)
    with strategy.scope():
        workload = ZOO[model](size)
        optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
        optimizer.build(workload.model.trainable_variables)
    variables = workload.model.trainable_variables
    replicas = strategy.num_replicas_in_sync
    gradients = make_gradients(workload, BATCH * replicas, jit=False)
    plain_replica = make_replica_step(gradients, optimizer, variables)
    if replicas == 1:
        probed_replica = make_halves_replica_step(gradients, optimizer, variables)
        noise = NoiseAccumulator(2, BATCH)
    else:
        probed_replica = make_probed_replica_step(gradients, optimizer, variables, NoiseProbe(optimizer))
        noise = NoiseAccumulator(replicas, BATCH * replicas)
    iterator = iter(strategy.distribute_datasets_from_function(lambda c: teacher_stream(workload, BATCH, 0, c)))
    plain = build_train_step(strategy, plain_replica, iterator)
    # As tfscale runs it: the probe in one step of every `every` (a count over all steps), the plain step between
    probed = scheduled_step(
        ProbeSchedule(every), build_probed_train_step(strategy, probed_replica, iterator, noise), plain
    )
    if control:
        probed = scheduled_step(ProbeSchedule(every), build_train_step(strategy, plain_replica, iterator), plain)
    steps = {"plain": plain, "probed": probed}
    samples: dict[str, list[float]] = {"plain": [], "probed": []}
    for step in steps.values():  # trace and warm up both
        for _ in range(3 * window_steps):
            step().numpy()
    noise.start()
    for window in range(windows):
        # A B B A A B ...: which arm runs first alternates, so that an order effect cancels. The floor of these pairs
        # here: --control read -1.5 and -0.8 % for the mlp (before it switched functions: -3.1 %; docs/goodput.md)
        for name in ("plain", "probed") if window % 2 == 0 else ("probed", "plain"):
            step = steps[name]
            start = time.perf_counter()
            for _ in range(window_steps - 1):
                step()
            step().numpy()
            samples[name].append((time.perf_counter() - start) / window_steps)
            if name == "probed":
                noise.after_window()
    pairs = [probed / plain for probed, plain in zip(samples["probed"], samples["plain"], strict=True)]
    ratio = of_median(pairs)
    grad_sq = sum(w[0] for w in noise.windows)
    trace = sum(w[1] for w in noise.windows)
    return {
        "plain": statistics.median(samples["plain"]),
        "probed": statistics.median(samples["probed"]),
        "overhead": statistics.median(pairs) - 1,
        "low": ratio.low - 1,
        "high": ratio.high - 1,
        "noise": trace / grad_sq if grad_sq else float("nan"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=60, help="timing windows of each step")
    parser.add_argument("--window-steps", type=int, default=20)
    parser.add_argument("--models", default="mlp,cnn,transformer")
    parser.add_argument("--replicas", default="2,1", help="1: the estimate from the step's two half batches")
    parser.add_argument("--size", default="tiny", help="model size: the probe's cost is per variable, not per example")
    parser.add_argument("--every", type=int, default=GRAD_NOISE_EVERY, help="grad_noise_every: one probed step in N")
    parser.add_argument("--control", action="store_true", help="no probe: the floor of 0 %% and the switch's cost")
    args = parser.parse_args()
    arms = "plain vs plain (control)" if args.control else f"the probe in one step of {args.every} vs none"
    print(f"grad_noise_every {args.every}: {arms}")
    header = f"{'model (' + args.size + ')':<14} {'replicas':>8} {'plain':>10} {'probed':>10} {'overhead':>10}  95 % CI"
    print(f"{header}            noise scale")
    scaled = []  # 2+ replicas (the probe tfscale runs by default; one replica's halves are opt-in): every step / N
    for replicas in [int(r) for r in args.replicas.split(",")]:
        strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
        for model in args.models.split(","):
            r = measure(strategy, model, args.windows, args.window_steps, args.size, args.every, args.control)
            print(
                f"{model:<14} {replicas:>8} {fmt.ms(r['plain']):>10} {fmt.ms(r['probed']):>10} "
                f"{fmt.change(r['overhead']):>10}  {fmt.change(r['low'])} to {fmt.change(r['high'])}    "
                f"{r['noise']:,.0f}"
            )
            if replicas > 1 and args.every > 1 and not args.control:
                # At one step in N the cost is below what these pairs resolve here (the control reads a few %): the
                # probe in every step, whose cost is N times larger, divided by N estimates it with its CI.
                r1 = measure(strategy, model, args.windows, args.window_steps, args.size, 1)
                scaled.append({k: r1[k] / args.every for k in ("overhead", "low", "high")})
                print(
                    f"{'':<14} {'':>8} {'every step':>21} {fmt.change(r1['overhead']):>10}  "
                    f"{fmt.change(r1['low'])} to {fmt.change(r1['high'])};  / {args.every}: "
                    f"{fmt.change(scaled[-1]['overhead'])} ({fmt.change(scaled[-1]['low'])} to "
                    f"{fmt.change(scaled[-1]['high'])})"
                )
    if scaled:
        worst = max(scaled, key=lambda r: r["high"])
        verdict = "met" if worst["high"] <= BAR else "not met"
        print(
            f"the probe's cost at one step in {args.every} with 2+ replicas (every step's / {args.every}), the "
            f"largest CI high end: {fmt.change(worst['high'])}; issue 18's bar of {BAR:.0%}: {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
