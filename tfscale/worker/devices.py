"""Device set-up, done before TensorFlow initialises its devices (it cannot be changed afterwards)."""

from __future__ import annotations

import tensorflow as tf


class DeviceError(RuntimeError):
    """The host has fewer devices than the config asks for."""


def configure_devices(device: str, count: int) -> None:
    """Make `count` devices of the suite's kind visible, without initialising TF's runtime (MultiWorkerMirrored
    must be created before it is: "Collective ops must be configured at program startup").

    cpu: the host CPU split into `count` logical devices (they share the same cores and thread pools).
    gpu: the first `count` GPUs, with memory growth on so that TF's allocator peak means real use.
    """
    if device == "cpu":
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_visible_devices([cpu])
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * count)
        return
    gpus = tf.config.list_physical_devices("GPU")
    if len(gpus) < count:
        raise DeviceError(f"devices_per_node={count} GPUs asked for, this host has {len(gpus)}")
    tf.config.set_visible_devices(gpus[:count], "GPU")
    for gpu in gpus[:count]:
        tf.config.experimental.set_memory_growth(gpu, True)


def device_names(device: str) -> list[str]:
    """Logical device names of the suite's kind (initialises TF's runtime)."""
    return [d.name for d in tf.config.list_logical_devices("CPU" if device == "cpu" else "GPU")]


def setup_devices(device: str, count: int) -> list[str]:
    configure_devices(device, count)
    return device_names(device)
