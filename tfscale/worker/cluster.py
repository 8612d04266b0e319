"""This process's place in a TF cluster (from TF_CONFIG, read by TF's own resolver), progress reports to the
parent, and the server loop of parameter-server jobs."""

from __future__ import annotations

import os
import time

from tfscale import contract
from tfscale.contract import PORT_BASE_ENV, PROGRESS_ENV
from tfscale.suite.spec import RunSpec

STOP_POLL_S = 1.0
SERVER_INTER_OP_THREADS = 4  # fewer and a ParameterServer cluster hangs on a 2-core host (seen with TF 2.21)


_TASK_NAME = [contract.SINGLE.name]  # this process's task, once set_task knows it


def set_task(task_name: str) -> None:
    """This process's task, once known: a progress-file template from the launcher gets its name filled in."""
    _TASK_NAME[0] = task_name
    if os.environ.get(PROGRESS_ENV):
        os.environ[PROGRESS_ENV] = contract.fill_task(os.environ[PROGRESS_ENV], task_name)


def task_devices(spec: RunSpec) -> int:
    """Devices this process computes on: on CPU the config's logical devices (every task makes them); on GPU its
    task's share (contract.gpus_of: none for parameter servers and the ParameterServer chief)."""
    if spec.device != "gpu":
        return spec.devices_per_node
    task = next((t for t in contract.tasks_of(spec) if t.name == _TASK_NAME[0]), contract.SINGLE)
    return contract.gpus_of(spec.strategy, task, spec.devices_per_node)


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


def slurm_environment(spec: RunSpec, environ: dict[str, str], node_gpus: list[str] | None) -> dict[str, str]:
    """What a rank started by srun sets before TensorFlow starts: TF_CONFIG of its cluster in Slurm's own task order
    (contract.slurm_cluster; TF's SlurmClusterResolver disagrees with Slurm on nodes like gpu9,gpu10) and, for GPU
    suites, CUDA_VISIBLE_DEVICES with its own share of the GPUs Slurm bound to the step on its node (`node_gpus`,
    from Slurm's CUDA_VISIBLE_DEVICES, or every GPU of the node where Slurm binds none). Pure."""
    tasks = contract.tasks_of(spec)
    port_base = int(environ.get(PORT_BASE_ENV, contract.DEFAULT_PORT_BASE))
    cluster, ranks = contract.slurm_cluster(
        environ["SLURM_STEP_NODELIST"], environ["SLURM_STEP_TASKS_PER_NODE"], tasks, port_base
    )
    me = ranks[int(environ["SLURM_PROCID"])]
    env = {contract.TF_CONFIG_ENV: contract.tf_config(cluster, me.task)} if spec.cluster else {}
    if spec.device == "gpu":
        placed = contract.place_on_host(spec, node_gpus or [], [r.task for r in ranks if r.node == me.node])
        env[contract.VISIBLE_GPUS_ENV] = contract.visible_gpus_value(placed[me.task.name])
    return env


def cluster_resolver(spec: RunSpec):
    """TF's resolver of the cluster in TF_CONFIG (set by the local launcher, by TFJob, or under Slurm by
    slurm_environment before TF started)."""
    import tensorflow as tf

    return tf.distribute.cluster_resolver.TFConfigClusterResolver()


def cluster_task(spec: RunSpec) -> tuple[str, int] | None:
    """(job, index) of this process in its cluster, or None outside one."""
    if not spec.cluster:
        return None
    resolver = cluster_resolver(spec)
    resolver.cluster_spec()
    return resolver.task_type, int(resolver.task_id)


def is_server(spec: RunSpec, task: tuple[str, int] | None) -> bool:
    """ParameterServer jobs: "ps" and "worker" tasks only serve; the "chief" runs the coordinator."""
    return spec.strategy == "parameter_server" and task is not None and task[0] in ("ps", "worker")


def server_config(device: str, devices: int):
    """The ConfigProto of a task's gRPC server: SERVER_INTER_OP_THREADS, and on GPUs at most `devices` GPUs (none
    for a parameter server). The server builds its own devices from this config, not from tf.config's visible
    devices (tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc: GrpcServer::Init -> DeviceFactory::
    AddDevices with the server's session options, whose ConfigProto.device_count caps each type): without the cap a
    ParameterServer worker offered every GPU its process could see, and the coordinator counted them all as that
    worker's replicas."""
    import tensorflow as tf

    config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=SERVER_INTER_OP_THREADS)
    if device == "gpu":
        config.device_count["GPU"] = devices
    return config


def serve(spec: RunSpec, stop_file: str) -> None:
    """Run this task's gRPC server until `stop_file` exists (the chief's result on a shared filesystem, under
    Slurm or Kubernetes) or the parent stops this process (local launcher)."""
    import tensorflow as tf

    from tfscale.worker.devices import setup_devices

    setup_devices(spec.device, task_devices(spec))
    resolver = cluster_resolver(spec)
    config = server_config(spec.device, task_devices(spec))
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
