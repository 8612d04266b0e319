"""Run as a script (it configures logical devices, so it needs a fresh process): train the same model 3 steps with
the fused step and 3 steps with compute-only + split steps; print whether the SGD weights are bit-identical."""

import json
import os
import sys

os.environ["CUDA_VISIBLE_DEVICES"] = "-1"

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from tfscale.worker import comm  # noqa: E402
from tfscale.worker.data import synthetic_dataset  # noqa: E402
from tfscale.worker.devices import setup_devices  # noqa: E402
from tfscale.worker.loop import build_train_step, make_gradients, make_replica_step  # noqa: E402
from tfscale.worker.models import ZOO  # noqa: E402

devices = setup_devices("cpu", int(sys.argv[1]))
strategy = tf.distribute.MirroredStrategy(devices)
global_batch = 16 * len(devices)


def fresh():
    keras.utils.set_random_seed(7)
    with strategy.scope():
        workload = ZOO["mlp"]("tiny")
        optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
        optimizer.build(workload.model.trainable_variables)
    iterator = iter(strategy.experimental_distribute_dataset(synthetic_dataset(workload, global_batch, 0)))
    return workload, optimizer, iterator


w1, o1, it1 = fresh()
w2, o2, it2 = fresh()
fused = build_train_step(
    strategy, make_replica_step(make_gradients(w1, global_batch, False), o1, w1.model.trainable_variables), it1
)
compute = comm.compute_only_step(strategy, make_gradients(w2, global_batch, False), it2)
split = comm.reduce_and_update_step(strategy, o2, w2.model.trainable_variables)
for _ in range(3):
    fused()
    split(compute()[1])
pairs = zip(w1.model.trainable_variables, w2.model.trainable_variables, strict=True)
print(
    json.dumps(
        {
            "identical": all(np.array_equal(a.numpy(), b.numpy()) for a, b in pairs),
            "iterations": [int(o1.iterations.numpy()), int(o2.iterations.numpy())],
            "changed": bool(np.any(w1.model.trainable_variables[0].numpy() != 0)),
        }
    )
)
