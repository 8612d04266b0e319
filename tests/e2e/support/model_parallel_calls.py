"""Run as `python model_parallel_calls.py MODE`: model_parallel_start of a GPU config of that mode with fakes for
the device set-up, DTensor's start and the model builder (no GPU needed), and prints JSON: the calls in order, and
the device scope the model was built under."""

import json
import os
import sys

os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main(mode: str) -> dict:
    from tensorflow.experimental import dtensor
    from tensorflow.python.eager import context

    from tfscale.suite.planner import expand
    from tfscale.suite.suitefile import parse_suite
    from tfscale.worker import devices, models, tensor, trainer

    calls = []
    devices.configure_devices = lambda device, count: calls.append(f"configure_devices({device}, {count})")
    devices.device_names = lambda device: calls.append("device_names") or ["/GPU:0", "/GPU:1"]
    dtensor.initialize_accelerator_system = lambda kind: calls.append(f"initialize_accelerator_system({kind})")

    def build_workload(spec):
        calls.append(f"build_workload under {context.context().device_name or 'no device scope'}")

    models.build_workload = build_workload
    suite = (
        f"name: c\ndevice: gpu\ndefaults: {{model: mlp, parallelism: {mode}, devices_per_node: 2}}\n"
        "matrix: {jit: [false]}\n"
    )
    spec = expand(parse_suite(suite)).specs[0]
    before = tensor.dtensor_start(spec.device) if mode == "tensor" else None
    trainer.model_parallel_start(spec, before)
    return {"calls": calls}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
