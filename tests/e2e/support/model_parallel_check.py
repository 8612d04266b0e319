"""Run as `python model_parallel_check.py MODEL SIZE MODE DEVICES`: builds the zoo model once, then its pipeline
or DTensor version from the same weights, and prints JSON: the Keras model's loss on a fixed batch, the
model-parallel first-step loss on it, the losses of a few training steps, and parameter bytes (whole model, most
loaded device). A fresh process: logical devices must be set before TensorFlow starts."""

import json
import os
import sys

os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main(model: str, size: str, mode: str, devices: int) -> dict:
    from tfscale.worker.devices import setup_devices

    names = setup_devices("cpu", devices)
    import keras
    import tensorflow as tf

    from tfscale.suite.planner import expand
    from tfscale.suite.suitefile import parse_suite
    from tfscale.worker.data import synthetic_batch
    from tfscale.worker.models import build_workload
    from tfscale.worker.trainer import variable_bytes

    suite = (
        f"name: c\ndefaults: {{model: {model}, model_size: {size}, parallelism: {mode}, "
        f"devices_per_node: {devices}, batch_size: 16, micro_batches: 4}}\nmatrix: {{seed: [0]}}\n"
    )
    suite = suite.replace("matrix: {seed: [0]}", "matrix: {jit: [false]}")
    spec = expand(parse_suite(suite, "c.yaml")).specs[0]
    keras.utils.set_random_seed(0)
    workload = build_workload(spec)
    x, y = synthetic_batch(workload, spec.global_batch_size, 0)
    reference = float(tf.reduce_mean(workload.loss(y, workload.model(x, training=False))))
    whole = variable_bytes(workload.model.weights)
    if mode == "pipeline":
        from tfscale.worker.pipeline import make_step, place, stage_optimizers

        pipeline = place(workload, names, spec.stages)
        first = float(pipeline.mean_loss(tf.constant(x), tf.constant(y), spec.micro_batches))
        step = make_step(
            pipeline, stage_optimizers(pipeline, lambda: keras.optimizers.SGD(0.01, momentum=0.9)), spec.micro_batches
        )
        losses = [float(step(tf.constant(x), tf.constant(y))) for _ in range(6)]
        per_device = max(pipeline.stage_bytes())
        placed = [
            sorted({v.value.device.split("device:")[-1] for layer in s for v in layer.weights}) for s in pipeline.stages
        ]
    else:
        from tensorflow.experimental import dtensor

        from tfscale.worker.tensor import build_sharded, make_loss, make_step, to_mesh

        sharded, mesh = build_sharded(spec, workload, names)
        loss = make_loss(sharded, mesh)
        xm, ym = to_mesh(x, mesh), to_mesh(y, mesh)
        first = float(dtensor.unpack(tf.function(loss)(xm, ym))[0])
        step = make_step(sharded, loss)
        losses = [float(dtensor.unpack(step(xm, ym))[0]) for _ in range(6)]
        per_device = sharded.bytes_per_device()
        placed = []
    return {
        "reference": reference,
        "first": first,
        "losses": losses,
        "whole_bytes": whole,
        "per_device_bytes": per_device,
        "placed": placed,
        "stages": spec.stages,
        "tensor_parallel": spec.tensor_parallel,
        "replicas": spec.replicas,
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))))
