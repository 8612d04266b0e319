"""Device set-up, done before TensorFlow initialises its devices (it cannot be changed afterwards)."""

from __future__ import annotations

import os
from collections.abc import Callable

import tensorflow as tf

from tfscale import contract


class DeviceError(RuntimeError):
    """The host has fewer devices than the config asks for."""


def configure_devices(device: str, count: int) -> None:
    """Make `count` devices of the suite's kind visible, without initialising TF's runtime (MultiWorkerMirrored
    must be created before it is: "Collective ops must be configured at program startup").

    cpu: the host CPU split into `count` logical devices (they share the same cores and thread pools).
    gpu: the first `count` GPUs this process sees, with memory growth on so that TF's allocator peak means real
    use. The launcher already limited what it sees to its own GPUs (CUDA_VISIBLE_DEVICES from
    contract.place_gpus); `count` 0 (parameter servers, the ParameterServer chief) hides every GPU.
    """
    if device == "cpu":
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_visible_devices([cpu])
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * count)
        return
    gpus = tf.config.list_physical_devices("GPU")
    if len(gpus) < count:
        visible = os.environ.get(contract.VISIBLE_GPUS_ENV)
        raise DeviceError(
            f"devices_per_node={count} GPUs asked for, this process sees {len(gpus)} "
            f"({contract.VISIBLE_GPUS_ENV}={visible if visible is not None else 'unset'})"
        )
    tf.config.set_visible_devices(gpus[:count], "GPU")
    for gpu in gpus[:count]:
        tf.config.experimental.set_memory_growth(gpu, True)


def device_names(device: str) -> list[str]:
    """Logical device names of the suite's kind (initialises TF's runtime)."""
    return [d.name for d in tf.config.list_logical_devices("CPU" if device == "cpu" else "GPU")]


def setup_devices(device: str, count: int, before_start: Callable[[], None] | None = None) -> list[str]:
    """configure_devices, then `before_start` (what must run before TF's runtime starts), then device_names."""
    configure_devices(device, count)
    if before_start is not None:
        before_start()
    return device_names(device)
