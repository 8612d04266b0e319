"""Strategy registry: axis name → builder. Its keys match `tfscale.axes.STRATEGIES` (a test checks)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import tensorflow as tf

from tfscale.axes import collective_of
from tfscale.suite.spec import RunSpec
from tfscale.worker.cluster import cluster_resolver

_CROSS_DEVICE_OPS: dict[str, Callable[[], tf.distribute.CrossDeviceOps]] = {
    "nccl": tf.distribute.NcclAllReduce,
    "hierarchical_copy": tf.distribute.HierarchicalCopyAllReduce,
    "reduction_to_one_device": tf.distribute.ReductionToOneDevice,
}


def _one_device(spec: RunSpec, devices: list[str]) -> tf.distribute.Strategy:
    return tf.distribute.OneDeviceStrategy(devices[0])


def _mirrored(spec: RunSpec, devices: list[str]) -> tf.distribute.Strategy:
    ops = _CROSS_DEVICE_OPS[spec.cross_device_ops]() if spec.cross_device_ops else None
    return tf.distribute.MirroredStrategy(devices, cross_device_ops=ops)


def _central_storage(spec: RunSpec, devices: list[str]) -> tf.distribute.Strategy:
    return tf.distribute.experimental.CentralStorageStrategy(compute_devices=devices)


def _multi_worker_mirrored(spec: RunSpec, devices: list[str]) -> tf.distribute.Strategy:
    # No timeout_seconds: TF documents it as a debugging aid that starts a thread per collective, inside the timed
    # steps; a hung collective is caught by the launcher's stall watchdog instead.
    options = tf.distribute.experimental.CommunicationOptions(
        bytes_per_pack=spec.bytes_per_pack or 0,
        implementation=tf.distribute.experimental.CommunicationImplementation[
            collective_of(spec.device, spec.collective)
        ],
    )
    return tf.distribute.MultiWorkerMirroredStrategy(
        cluster_resolver=cluster_resolver(spec), communication_options=options
    )


def collective_implementation(strategy: tf.distribute.Strategy) -> str | None:
    """The all-reduce implementation a MultiWorkerMirroredStrategy's collectives run with ("NCCL", "RING"; None for
    other strategies): what it was asked for (read back from the strategy) under TF's own rule,
    tensorflow/core/common_runtime/collective_param_resolver_local.cc: AssignCollectiveType uses NCCL where the
    hint is NCCL (or the context enables NCCL, which tfscale never does for MultiWorkerMirrored), the group's
    devices are GPUs and NcclReduce is registered (TF built with CUDA); ring otherwise. Asked NCCL on CPUs, it ran
    ring and the record said NCCL."""
    options = getattr(strategy.extended, "_communication_options", None)
    asked = getattr(getattr(options, "implementation", None), "value", None)
    if asked is None:
        return None
    on_gpus = getattr(strategy.extended, "_local_device_type", None) == "GPU"
    nccl_built = bool(tf.sysconfig.get_build_info().get("is_cuda_build"))
    return "NCCL" if asked == "NCCL" and on_gpus and nccl_built else "RING"


def _partitioner(spec: RunSpec):
    partitioners = tf.distribute.experimental.partitioners
    if spec.partitioner == "min_size":
        return partitioners.MinSizePartitioner(min_shard_bytes=256 << 10, max_shards=spec.num_ps)
    if spec.partitioner == "fixed_shards":
        return partitioners.FixedShardsPartitioner(num_shards=spec.num_ps)
    return None


def _parameter_server(spec: RunSpec, devices: list[str]) -> tf.distribute.Strategy:
    return tf.distribute.ParameterServerStrategy(cluster_resolver(spec), variable_partitioner=_partitioner(spec))


BUILDERS: dict[str, Callable[[RunSpec, list[str]], tf.distribute.Strategy]] = {
    "one_device": _one_device,
    "mirrored": _mirrored,
    "central_storage": _central_storage,
    "multi_worker_mirrored": _multi_worker_mirrored,
    "parameter_server": _parameter_server,
}


def build_strategy(spec: RunSpec, devices: list[str]) -> tf.distribute.Strategy:
    return BUILDERS[spec.strategy](spec, devices)


def _first_replica_aggregation(next_creator, **kwargs):
    if not kwargs.get("trainable", True) and kwargs.get("aggregation") in (None, tf.VariableAggregation.NONE):
        kwargs["aggregation"] = tf.VariableAggregation.ONLY_FIRST_REPLICA
    return next_creator(**kwargs)


def variable_policy(spec: RunSpec) -> contextlib.AbstractContextManager:
    """Variable-creation fixes a strategy needs, entered inside its scope while the model is built.

    CentralStorageStrategy: Keras 3 creates non-trainable variables (BatchNormalization's moving statistics)
    with aggregation NONE, which CentralStorage cannot assign in replica context ("You must specify an
    aggregation method"). They get ONLY_FIRST_REPLICA: replica 0's statistics are kept, with no extra
    communication.
    """
    if spec.strategy == "central_storage":
        return tf.variable_creator_scope(_first_replica_aggregation)
    return contextlib.nullcontext()
