"""What every worker mode gives the one training flow (tfscale.worker.modes.run_training): a `Trainer`; and the
set-up the model-parallel modes share."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tfscale.suite.spec import RunSpec
from tfscale.worker.cluster import report_progress
from tfscale.worker.loop import Agree, LoopResult


@dataclass
class Trainer:
    """One step to time, how to end a timing window, and what the mode adds to the record."""

    step: Callable[[], Any]  # one training step (returns what `sync` takes)
    sync: Callable[[Any], Any]  # blocks until the step's work is done; returns the loss (or None)
    how: str  # what `sync` does, one sentence
    workload: Any
    devices: list[str]
    replicas: int  # data-parallel model copies
    collectives: bool = True  # its steps run collectives: a profile reads comm_time_trace_s from its trace
    start_timing: Callable[[], None] | None = None  # between warm-up and the timed windows
    columns: Callable[[LoopResult], dict[str, Any]] | None = None  # mode's record columns once timed
    agree: Agree | None = None  # several trainers in lockstep (MultiWorkerMirrored): the loop's shared decisions
    after_window: Callable[[], None] | None = None  # after each timed window, outside its span


def variable_bytes(variables) -> int:
    """Bytes of a set of variables: each one's size x its dtype's size (for trainable ones, the gradient bytes)."""
    import tensorflow as tf

    return int(sum(math.prod(v.shape) * tf.as_dtype(v.dtype).size for v in variables))


HOST_DEVICE = "/CPU:0"


def model_parallel_start(spec: RunSpec, before_start: Callable[[], None] | None = None) -> tuple[list[str], Any]:
    """Pipeline, tensor and hybrid configs: one process, no tf.distribute strategy. Its devices and the model.
    `before_start`: called once the devices are configured, before TensorFlow's runtime starts.

    The Keras model is built on the host CPU (HOST_DEVICE): the modes copy its weights onto their devices, stage
    by stage or shard by shard. Built without a device scope it went to GPU:0, a whole unsharded copy of the
    model there: in peak_memory_bytes, and out of memory for a model that only fits sharded."""
    import keras
    import tensorflow as tf

    from tfscale.worker.devices import setup_devices
    from tfscale.worker.models import build_workload

    devices = setup_devices(spec.device, spec.devices_per_node, before_start)
    report_progress("devices ready")
    keras.utils.set_random_seed(spec.seed)
    with tf.device(HOST_DEVICE):
        workload = build_workload(spec)
    report_progress("model built")
    return devices, workload
