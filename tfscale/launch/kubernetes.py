"""Kubernetes (Kubeflow's training operator): for now a launcher that writes, per cluster config, a ConfigMap with
its spec and a TFJob, which `tfscale launch --target kubernetes` emits. Running them from `tfscale run` (apply,
watch the pods, collect the parts from the results volume) is what `run` would add."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tfscale import contract
from tfscale.launch.base import Launcher, result_template

TFJOB_REPLICA_TYPES = {"chief": "Chief", "worker": "Worker", "ps": "PS"}
SPEC_MOUNT = "/tfscale/spec"
RESULTS_MOUNT = "/tfscale/results"
RESULTS_CLAIM = "tfscale-results"


class KubernetesLauncher(Launcher):
    name = "kubernetes"

    @classmethod
    def script(cls, plan, out: Path, options) -> dict[str, str]:
        """File name -> YAML text: a ConfigMap with the spec and a TFJob, for each cluster config."""
        import yaml  # late: only this target writes YAML

        files = {}
        for spec in (s for s in plan.specs if s.cluster):
            name = f"tfscale-{spec.config_id}"
            portable = dataclasses.replace(spec, suite_dir=".")
            config_map = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{name}-spec"},
                "data": {"spec.json": json.dumps(portable.to_dict())},
            }
            # The TFJob operator sets TF_CONFIG; the worker names its result part after its task.
            command = contract.worker_argv(
                f"/tfscale/{result_template(spec)}", contract.TRAIN, f"{SPEC_MOUNT}/spec.json", options.python
            )
            replicas = {}
            for job, count in contract.job_counts(contract.tasks_of(spec)).items():
                container = {
                    "name": "tensorflow",
                    "image": options.image,
                    "command": command,
                    "volumeMounts": [
                        {"name": "spec", "mountPath": SPEC_MOUNT},
                        {"name": "results", "mountPath": RESULTS_MOUNT},
                    ],
                }
                if spec.device == "gpu" and job != "ps":
                    container["resources"] = {"limits": {"nvidia.com/gpu": spec.devices_per_node}}
                replicas[TFJOB_REPLICA_TYPES[job]] = {
                    "replicas": count,
                    "restartPolicy": "Never",
                    "template": {
                        "spec": {
                            "containers": [container],
                            "volumes": [
                                {"name": "spec", "configMap": {"name": f"{name}-spec"}},
                                {"name": "results", "persistentVolumeClaim": {"claimName": RESULTS_CLAIM}},
                            ],
                        }
                    },
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
