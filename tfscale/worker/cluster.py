"""This process's place in a TF cluster (from TF_CONFIG, read by TF's own resolver), progress reports to the
parent, and the server loop of parameter-server jobs."""

from __future__ import annotations

import os
import time

from tfscale import contract
from tfscale.contract import PORT_BASE_ENV, PROGRESS_ENV, RESOLVER_ENV
from tfscale.spec import RunSpec

STOP_POLL_S = 1.0
SERVER_INTER_OP_THREADS = 4  # fewer and a ParameterServer cluster hangs on a 2-core host (seen with TF 2.21)


def set_task(task_name: str) -> None:
    """This process's task, once known: a progress-file template from the launcher gets its name filled in."""
    if os.environ.get(PROGRESS_ENV):
        os.environ[PROGRESS_ENV] = contract.fill_task(os.environ[PROGRESS_ENV], task_name)


def report_progress(phase: str) -> None:
    """Overwrite the progress file (if the parent gave one) with the phase reached; never fails the run."""
    path = os.environ.get(PROGRESS_ENV)
    if not path:
        return
    try:
        tmp = f"{path}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(phase)
        os.replace(tmp, path)
    except OSError:
        pass


def slurm_resolver(spec: RunSpec):
    """TF's SlurmClusterResolver for this config's jobs, from the variables srun sets.

    Its GPU arguments need care: it pairs tasks with range(0, gpus_per_node, gpus_per_task), so on CPU-only nodes
    gpus_per_node=0 yields no tasks and gpus_per_task=0 crashes (range() arg 3 must not be zero). CPU jobs pass
    one pseudo-GPU per task and never set CUDA_VISIBLE_DEVICES; GPU jobs give each task devices_per_node GPUs.
    """
    import tensorflow as tf
    from tensorflow.python.distribute.cluster_resolver.slurm_cluster_resolver import expand_tasks_per_node

    tasks_per_node = max(expand_tasks_per_node(os.environ["SLURM_STEP_TASKS_PER_NODE"]))
    per_task = spec.devices_per_node if spec.device == "gpu" else 1
    return tf.distribute.cluster_resolver.SlurmClusterResolver(
        jobs=contract.job_counts(contract.tasks_of(spec)),
        port_base=int(os.environ.get(PORT_BASE_ENV, contract.DEFAULT_PORT_BASE)),
        gpus_per_node=tasks_per_node * per_task,
        gpus_per_task=per_task,
        auto_set_gpu=spec.device == "gpu",
    )


def cluster_resolver(spec: RunSpec):
    """The resolver TF's strategies read the cluster from: Slurm's when launched by srun, else TF_CONFIG's."""
    import tensorflow as tf

    if os.environ.get(RESOLVER_ENV) == contract.RESOLVER_SLURM:
        return slurm_resolver(spec)
    return tf.distribute.cluster_resolver.TFConfigClusterResolver()


def cluster_task(spec: RunSpec) -> tuple[str, int] | None:
    """(job, index) of this process in its cluster, or None outside one."""
    if not spec.cluster:
        return None
    resolver = cluster_resolver(spec)
    resolver.cluster_spec()  # resolves task_type / task_id (and, for Slurm GPU jobs, CUDA_VISIBLE_DEVICES)
    return resolver.task_type, int(resolver.task_id)


def is_server(spec: RunSpec, task: tuple[str, int] | None) -> bool:
    """ParameterServer jobs: "ps" and "worker" tasks only serve; the "chief" runs the coordinator."""
    return spec.strategy == "parameter_server" and task is not None and task[0] in ("ps", "worker")


def serve(spec: RunSpec, stop_file: str) -> None:
    """Run this task's gRPC server until `stop_file` exists (the chief's result on a shared filesystem, under
    Slurm or Kubernetes) or the parent stops this process (local launcher)."""
    import tensorflow as tf

    from tfscale.worker.devices import setup_devices

    setup_devices(spec.device, spec.devices_per_node)
    resolver = cluster_resolver(spec)
    config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=SERVER_INTER_OP_THREADS)
    tf.distribute.Server(
        resolver.cluster_spec(),
        job_name=resolver.task_type,
        task_index=resolver.task_id,
        protocol=resolver.rpc_layer or "grpc",
        config=config,
        start=True,
    )
    report_progress("serving")
    while not os.path.exists(stop_file):
        time.sleep(STOP_POLL_S)
