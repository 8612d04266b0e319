"""Kubernetes (Kubeflow's training operator): for now a launcher that writes, per config, a ConfigMap with its spec
and a TFJob, which `tfscale launch --target kubernetes` emits (a single-process config is a TFJob of one Worker).
Running them from `tfscale run` (apply, watch the pods, collect the parts from the results volume) is what `run`
would add.

Each pod asks for CPU and memory; GPU configs give `nvidia.com/gpu` only to the replica types that compute
(contract.gpus_of: not parameter servers nor the ParameterServer chief) and mount a memory-backed /dev/shm (NCCL's
shared-memory transport fails in a container's default 64 MiB, NVIDIA/nccl#525)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tfscale import contract
from tfscale.errors import TfscaleError
from tfscale.launch.base import (
    LaunchedProcess,
    Launcher,
    launched_processes,
    local_only,
    result_template,
    worker_python,
)

TFJOB_REPLICA_TYPES = {"chief": "Chief", "worker": "Worker", "ps": "PS"}
SHM_MOUNT = "/dev/shm"
SPEC_MOUNT = "/tfscale/spec"
RESULTS_MOUNT = "/tfscale/results"
RESULTS_CLAIM = "tfscale-results"
IMAGE_PYTHON = "python"  # the image's interpreter, found on its PATH
# A pod that asks for no GPU (a CPU suite's; a GPU suite's parameter servers and chief) sees none: NVIDIA's
# container runtime otherwise exposes every GPU of the node where the image sets NVIDIA_VISIBLE_DEVICES=all (TF's
# GPU images do), "void" makes it behave as runc; CUDA_VISIBLE_DEVICES hides them from TF should a runtime not.
NO_GPU_ENV = [
    {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"},
    {"name": contract.VISIBLE_GPUS_ENV, "value": contract.NO_GPUS},
]


class KubernetesLauncher(Launcher):
    name = "kubernetes"

    @classmethod
    def not_emitted(cls, plan, options) -> dict[str, str]:
        """config_id -> why no TFJob is written for it."""
        return {s.config_id: local_only("a Kubernetes cluster") for s in plan.specs if s.network_link is not None}

    @classmethod
    def script(cls, plan, out: Path, options) -> dict[str, str]:
        """File name -> YAML text: a ConfigMap with the spec and a TFJob, for each config (not_emitted: none)."""
        import yaml  # late: only this target writes YAML

        if options.image is None:
            raise TfscaleError(
                "--target kubernetes needs --image: an image with tfscale installed (docker/Dockerfile builds one on "
                "TensorFlow's image; see docs/multi-node.md)"
            )

        files = {}
        for process in launched_processes(plan.specs, cls.not_emitted(plan, options)):
            spec = process.spec
            name = f"tfscale-{process.name}"  # a config of `repeats: N` is N TFJobs, each a fresh set of processes
            portable = dataclasses.replace(spec, suite_dir=".")
            config_map = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{name}-spec"},
                "data": {"spec.json": json.dumps(portable.to_dict())},
            }
            replicas = {}
            tasks = contract.tasks_of(spec)
            for job, count in contract.job_counts(tasks).items():
                first = next(t for t in tasks if t.job == job)
                gpus = contract.gpu_needs(spec, [first])[0]
                replicas[TFJOB_REPLICA_TYPES[job]] = {
                    "replicas": count,
                    "restartPolicy": "Never",
                    "template": {"spec": _pod(process, name, gpus, options)},
                }
            tfjob = {
                "apiVersion": "kubeflow.org/v1",
                "kind": "TFJob",
                "metadata": {"name": name},
                "spec": {
                    "runPolicy": {"cleanPodPolicy": "All", "activeDeadlineSeconds": int(spec.timeout_s)},
                    "tfReplicaSpecs": replicas,
                },
            }
            files[f"{name}.yaml"] = yaml.safe_dump_all([config_map, tfjob], sort_keys=False)
        return files


def _pod(process: LaunchedProcess, name: str, gpus: int, options) -> dict:
    """The pod of one replica type: the worker command (the TFJob operator sets TF_CONFIG; the worker names its
    result part after its process and task), the spec and results volumes, its resources, /dev/shm for GPU pods."""
    spec = process.spec
    command = contract.worker_argv(
        f"/tfscale/{result_template(process.name)}",
        contract.TRAIN,
        f"{SPEC_MOUNT}/spec.json",
        worker_python(options, IMAGE_PYTHON),
    )
    resources = {
        "requests": {"cpu": str(options.pod_cpus), "memory": options.pod_memory},
        "limits": {"memory": options.pod_memory},
    }
    if gpus:
        resources["limits"]["nvidia.com/gpu"] = str(gpus)  # a quantity: text in the Kubernetes API's model
    mounts = [{"name": "spec", "mountPath": SPEC_MOUNT}, {"name": "results", "mountPath": RESULTS_MOUNT}]
    volumes = [
        {"name": "spec", "configMap": {"name": f"{name}-spec"}},
        {"name": "results", "persistentVolumeClaim": {"claimName": RESULTS_CLAIM}},
    ]
    if spec.device == "gpu":
        mounts.append({"name": "shm", "mountPath": SHM_MOUNT})
        volumes.append({"name": "shm", "emptyDir": {"medium": "Memory"}})
    container = {
        "name": "tensorflow",
        "image": options.image,
        "command": command,
        "resources": resources,
        "volumeMounts": mounts,
    }
    if not gpus:
        container["env"] = [dict(item) for item in NO_GPU_ENV]  # copies: one list in two places is a YAML alias
    return {"containers": [container], "volumes": volumes}
