"""The gradient noise scale of the zoo mlp on the teacher task, two ways, at the same weights:

- in the step: tfscale's own probed training step (tfscale.worker.noise) under MirroredStrategy on 2 logical CPU
  devices, with SGD at learning rate 0 (the weights do not move), over many steps;
- the reference: exact per-example gradients of many other fresh examples of the same teacher
  (tf.GradientTape.jacobian of the per-example losses), their mean G and covariance trace tr(Sigma),
  B_simple = tr(Sigma) / (|G|^2 - tr(Sigma)/N).

Prints one JSON line: {"in_step": ..., "reference": ..., "ratio": ..., ...}.

    python tests/e2e/support/noise_reference.py [--steps 400] [--examples 8192] [--batch 32] [--warm 200]

`--warm N` first trains the model N steps (Adam, one device) so the weights are not at their initialisation.
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


def warm_up(workload, steps: int) -> None:
    """Train the model a little (Adam, one device) so the check does not sit at the initialisation."""
    optimizer = keras.optimizers.Adam(1e-3)
    iterator = iter(teacher_stream(workload, 64, SEED, tf.distribute.InputContext(), draw=1))

    @tf.function
    def step():
        x, y = next(iterator)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(workload.loss(y, workload.model(x, training=True)))
        grads = tape.gradient(loss, workload.model.trainable_variables)
        optimizer.apply_gradients(zip(grads, workload.model.trainable_variables, strict=True))
        return loss

    for _ in range(steps):
        step()


def in_step(strategy, workload, batch: int, steps: int) -> float:
    variables = workload.model.trainable_variables
    with strategy.scope():
        optimizer = keras.optimizers.SGD(0.0)  # the weights stay where they are
        optimizer.build(variables)
    replicas = strategy.num_replicas_in_sync
    gradients = make_gradients(workload, batch * replicas, jit=False)
    probed = make_probed_replica_step(gradients, optimizer, variables, NoiseProbe(optimizer))
    noise = NoiseAccumulator(replicas, batch * replicas)
    dataset = strategy.distribute_datasets_from_function(lambda c: teacher_stream(workload, batch, SEED, c, draw=2))
    step = build_probed_train_step(strategy, probed, iter(dataset), noise)
    step()  # traces
    noise.start()
    for _ in range(steps):
        step()
    noise.after_window()
    grad_sq, trace, _ = noise.windows[0]
    return trace / grad_sq


def reference(workload, examples: int, chunk: int = 512) -> tuple[float, float, float]:
    """(B_simple, tr(Sigma), |G|^2) from exact per-example gradients of `examples` fresh examples."""
    variables = workload.model.trainable_variables
    stream = iter(teacher_stream(workload, chunk, SEED, tf.distribute.InputContext(), draw=3))

    @tf.function
    def per_example():
        x, y = next(stream)
        with tf.GradientTape() as tape:
            losses = workload.loss(y, workload.model(x, training=True))
        jacobians = tape.jacobian(losses, variables)
        return tf.concat([tf.reshape(j, [chunk, -1]) for j in jacobians], axis=1)

    total, total_sq, count = None, 0.0, 0
    for _ in range(examples // chunk):
        g = per_example().numpy().astype(np.float64)
        total = g.sum(axis=0) if total is None else total + g.sum(axis=0)
        total_sq += float((g * g).sum())
        count += len(g)
    mean = total / count
    trace = (total_sq - count * float(mean @ mean)) / (count - 1)  # sum over parameters of the variances
    grad_sq = float(mean @ mean) - trace / count  # |mean|^2 is biased up by tr(Sigma)/N
    return trace / grad_sq, trace, grad_sq


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--examples", type=int, default=8192)
    parser.add_argument("--batch", type=int, default=32, help="per replica")
    parser.add_argument("--warm", type=int, default=200)
    args = parser.parse_args()
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    keras.utils.set_random_seed(SEED)
    trained = mlp("tiny")  # outside the strategy: a plain Keras optimizer trains it
    warm_up(trained, args.warm)
    with strategy.scope():
        workload = mlp("tiny")
    workload.model.set_weights(trained.model.get_weights())
    estimate = in_step(strategy, workload, args.batch, args.steps)
    exact, trace, grad_sq = reference(workload, args.examples)
    print(
        json.dumps(
            {
                "in_step": estimate,
                "reference": exact,
                "ratio": estimate / exact,
                "trace": trace,
                "grad_sq": grad_sq,
                "steps": args.steps,
                "examples": args.examples,
            }
        )
    )


main()
