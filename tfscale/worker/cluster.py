"""This process's place in a TF cluster (from TF_CONFIG, read by TF's own resolver), progress reports to the
parent, and the server loop of parameter-server jobs."""

from __future__ import annotations

import os

from tfscale.spec import RunSpec

PROGRESS_ENV = "TFSCALE_PROGRESS"  # file the parent reads to tell how far a task got
SERVER_INTER_OP_THREADS = 4  # fewer and a ParameterServer cluster hangs on a 2-core host (seen with TF 2.21)


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


def cluster_task() -> tuple[str, int] | None:
    """(job, index) of this process from TF_CONFIG, or None outside a cluster."""
    if not os.environ.get("TF_CONFIG"):
        return None
    import tensorflow as tf  # late: only cluster tasks need it here, after the environment is prepared

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    return resolver.task_type, int(resolver.task_id)


def is_server(spec: RunSpec, task: tuple[str, int] | None) -> bool:
    """ParameterServer jobs: "ps" and "worker" tasks only serve; the "chief" runs the coordinator."""
    return spec.strategy == "parameter_server" and task is not None and task[0] in ("ps", "worker")


def serve(spec: RunSpec) -> None:
    """Run this task's gRPC server until the parent stops it."""
    import tensorflow as tf

    from tfscale.worker.devices import setup_devices

    setup_devices(spec.device, spec.devices_per_node)
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=SERVER_INTER_OP_THREADS)
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                  task_index=resolver.task_id, protocol=resolver.rpc_layer or "grpc",
                                  config=config, start=True)
    report_progress("serving")
    server.join()
