"""The manifests `tfscale launch --target kubernetes` writes, loaded into the Kubeflow training SDK's TFJob model
(kubeflow-training: KubeflowOrgV1TFJob, the V1TFJob of older SDKs) and the Kubernetes client's ConfigMap model.

A key the models do not know, or one at the wrong place, is dropped when loading: each manifest must come back
from the model unchanged, so every key is a field of the operator's API where it stands. Then the replica specs,
the ConfigMap wiring and the GPU resources are checked on the typed objects."""

import json

import pytest
import yaml

from tfscale.launch.emit import LaunchOptions, emit
from tfscale.launch.kubernetes import RESULTS_CLAIM, RESULTS_MOUNT, SHM_MOUNT, SPEC_MOUNT
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

kubeflow_training = pytest.importorskip("kubeflow.training", reason="the test extra installs kubeflow-training")
kubernetes_client = pytest.importorskip("kubernetes.client")

SUITE = """
name: k8s
device: {device}
defaults: {{model_size: tiny, timeout_s: 300, repeats: 1}}
matrix:
  strategy: [multi_worker_mirrored]
  nodes: [2]
  devices_per_node: [{devices}]
include:
  - {{strategy: parameter_server, nodes: 2, num_ps: 2}}
  - {{strategy: mirrored, devices_per_node: 2}}
  - {{strategy: one_device}}
"""


def load(text: str):
    """(ConfigMap model, TFJob model) of one manifest file, each checked to round-trip unchanged."""
    config_map, job = yaml.safe_load_all(text)
    models = []
    for data, client, kind in (
        (config_map, kubernetes_client.ApiClient(), "V1ConfigMap"),
        (job, kubeflow_training.ApiClient(), "KubeflowOrgV1TFJob"),
    ):
        model = client._ApiClient__deserialize(data, kind)  # what the SDK does with an API server's answer
        assert client.sanitize_for_serialization(model) == data, f"{kind}: a key the model does not know"
        models.append(model)
    return models


@pytest.mark.parametrize(("device", "devices"), [("gpu", 4), ("cpu", 1)])
def test_tfjob_manifests_load_into_the_sdk_models(tmp_path, device, devices):
    plan = expand(parse_suite(SUITE.format(device=device, devices=devices), "k8s.yaml"))
    files = emit(plan, "kubernetes", tmp_path, LaunchOptions(image="registry/tfscale:1"))
    assert len(files) == 4
    replicas_of = {}
    for path, spec in zip(sorted(files), sorted(plan.specs, key=lambda s: s.config_id), strict=True):
        config_map, job = load(path.read_text())
        assert isinstance(job, kubeflow_training.KubeflowOrgV1TFJob)
        assert (job.api_version, job.kind, job.metadata.name) == (
            "kubeflow.org/v1",
            "TFJob",
            f"tfscale-{spec.config_id}",
        )
        assert job.spec.run_policy.clean_pod_policy == "All" and job.spec.run_policy.active_deadline_seconds == 300
        assert json.loads(config_map.data["spec.json"])["config_id"] == spec.config_id
        gpus = {}
        for replica_type, replica in job.spec.tf_replica_specs.items():
            assert replica.restart_policy == "Never"
            pod = replica.template.spec
            [container] = pod.containers
            assert container.image == "registry/tfscale:1"
            assert container.command[container.command.index("--spec") + 1] == f"{SPEC_MOUNT}/spec.json"
            volumes = {v.name: v for v in pod.volumes}
            assert volumes["spec"].config_map.name == config_map.metadata.name  # the ConfigMap of this config
            assert volumes["results"].persistent_volume_claim.claim_name == RESULTS_CLAIM
            mounts = {m.name: m.mount_path for m in container.volume_mounts}
            assert mounts["spec"] == SPEC_MOUNT and mounts["results"] == RESULTS_MOUNT
            assert container.resources.requests == {"cpu": "8", "memory": "32Gi"}
            gpus[replica_type] = (container.resources.limits or {}).get("nvidia.com/gpu")
            if device == "gpu":
                assert volumes["shm"].empty_dir.medium == "Memory" and mounts["shm"] == SHM_MOUNT
            else:
                assert "shm" not in volumes
        replicas_of[(spec.strategy, spec.nodes * spec.devices_per_node)] = (
            {k: r.replicas for k, r in job.spec.tf_replica_specs.items()},
            gpus,
        )
    on = (lambda n: str(n)) if device == "gpu" else (lambda n: None)
    assert replicas_of == {
        ("multi_worker_mirrored", 2 * devices): ({"Worker": 2}, {"Worker": on(devices)}),
        ("parameter_server", 2): ({"Chief": 1, "Worker": 2, "PS": 2}, {"Chief": None, "Worker": on(1), "PS": None}),
        ("mirrored", 2): ({"Worker": 1}, {"Worker": on(2)}),
        ("one_device", 1): ({"Worker": 1}, {"Worker": on(1)}),
    }
