"""What TensorFlow knows about this host: version, build (CUDA/cuDNN), physical devices and GPU details."""

from __future__ import annotations

from typing import Any

import tensorflow as tf


def tensorflow_env() -> dict[str, Any]:
    gpus = tf.config.list_physical_devices("GPU")
    details = []
    for gpu in gpus:
        try:
            details.append({"name": gpu.name, **tf.config.experimental.get_device_details(gpu)})
        except (ValueError, RuntimeError) as e:
            details.append({"name": gpu.name, "error": str(e)})
    return {
        "version": tf.version.VERSION,
        "git_version": tf.version.GIT_VERSION,
        "build_info": {k: v for k, v in tf.sysconfig.get_build_info().items()},
        "built_with_cuda": tf.test.is_built_with_cuda(),
        "physical_devices": [d.name for d in tf.config.list_physical_devices()],
        "gpu_details": details,
    }
