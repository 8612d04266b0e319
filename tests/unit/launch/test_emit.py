"""What `tfscale launch` writes, checked for structure (no cluster needed)."""

import json
import os
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from tfscale.cli import cli
from tfscale.launch.emit import LaunchOptions, emit
from tfscale.suite.planner import expand
from tfscale.suite.spec import RunSpec
from tfscale.suite.suitefile import parse_suite

SUITE = """
name: lt
defaults: {model_size: tiny, timeout_s: 300, repeats: 1}
matrix:
  strategy: [multi_worker_mirrored, parameter_server]
  nodes: [2]
include: [{strategy: mirrored, devices_per_node: 2}]
"""
GPU_SUITE = """
name: lt
device: gpu
defaults: {model_size: tiny, timeout_s: 300, repeats: 1}
matrix:
  strategy: [multi_worker_mirrored]
  nodes: [2]
  devices_per_node: [4]
include:
  - {strategy: parameter_server, nodes: 2}
  - {strategy: mirrored, devices_per_node: 2}
  - {strategy: multi_worker_mirrored, nodes: 2, network_link: 1gbit}
"""


def plan(text=SUITE):
    return expand(parse_suite(text, "lt.yaml"))


def test_slurm_script_has_one_job_step_per_config(tmp_path):
    [script] = emit(plan(), "slurm", tmp_path, LaunchOptions(partition="p1", account="a1", python="python"))
    text = script.read_text()
    assert text.startswith("#!/bin/bash\n")
    for line in (
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks=4",
        "#SBATCH --partition=p1",
        "#SBATCH --account=a1",
        "export TFSCALE_RESOLVER=slurm",
        "export TFSCALE_PORT_BASE=8888",
    ):
        assert line in text.splitlines()
    assert "--gpus-per-node" not in text
    steps = [line for line in text.splitlines() if line.startswith("srun ")]
    assert len(steps) == 3
    # the same srun line as `tfscale run --launcher slurm` (tfscale.launch.srun.srun_argv), inside the job
    assert steps[0].startswith("srun --nodes=2 --ntasks=2 --overcommit ")  # MWMS: 2 workers
    assert "--kill-on-bad-exit=1 --time=5 --export=ALL python -m tfscale.worker" in steps[0]
    assert steps[1].startswith("srun --nodes=2 --ntasks=4 ")  # PS: chief + 2 workers + 1 ps
    assert steps[2].startswith("srun --nodes=1 --ntasks=1 ")  # mirrored on one node
    for step, spec in zip(steps, plan().specs, strict=True):
        argv = shlex.split(step)
        assert argv[argv.index("--spec") + 1] == f"specs/{spec.config_id}.json"
        assert argv[argv.index("--result") + 1] == f"results/{spec.config_id}.{{task}}.result.json"
        written = RunSpec.from_dict(json.loads((tmp_path / "specs" / f"{spec.config_id}.json").read_text()))
        assert written.config_id == spec.config_id and written.suite_dir == "."


def test_slurm_script_asks_for_gpus_on_gpu_suites(tmp_path):
    [script] = emit(plan(GPU_SUITE), "slurm", tmp_path, LaunchOptions())
    lines = script.read_text().splitlines()
    assert "#SBATCH --gpus-per-node=4" in lines and "#SBATCH --exclusive" in lines
    steps = [line for line in lines if line.startswith("srun ")]
    assert len(steps) == 3  # the simulated-hosts config is not emitted
    assert "--gpus-per-node=4 --cpus-per-task=$(( SLURM_CPUS_ON_NODE / 1 ))" in steps[0]
    assert "--gpus-per-node=1 --cpus-per-task=$(( SLURM_CPUS_ON_NODE / 2 ))" in steps[1]  # PS: one worker a node


def test_tfjob_manifests_are_configmap_plus_tfjob_per_cluster_config(tmp_path):
    files = emit(plan(GPU_SUITE), "kubernetes", tmp_path, LaunchOptions(image="img:1"))
    assert len(files) == 3  # every config but the one with simulated hosts
    by_strategy = {}
    for path in files:
        config_map, job = yaml.safe_load_all(path.read_text())
        assert (config_map["apiVersion"], config_map["kind"]) == ("v1", "ConfigMap")
        assert (job["apiVersion"], job["kind"]) == ("kubeflow.org/v1", "TFJob")
        spec = json.loads(config_map["data"]["spec.json"])
        assert job["metadata"]["name"] == f"tfscale-{spec['config_id']}"
        assert job["spec"]["runPolicy"]["activeDeadlineSeconds"] == 300
        for replica in job["spec"]["tfReplicaSpecs"].values():
            assert replica["restartPolicy"] == "Never"
            pod = replica["template"]["spec"]
            [container] = pod["containers"]
            assert container["image"] == "img:1"
            assert container["command"][:3] == ["python", "-m", "tfscale.worker"]
            assert {v["name"] for v in pod["volumes"]} == {"spec", "results", "shm"}
            assert {"name": "shm", "emptyDir": {"medium": "Memory"}} in pod["volumes"]
            assert {"name": "shm", "mountPath": "/dev/shm"} in container["volumeMounts"]
            assert container["resources"]["requests"] == {"cpu": "8", "memory": "32Gi"}
            assert pod["volumes"][0]["configMap"]["name"] == config_map["metadata"]["name"]
        by_strategy[spec["strategy"]] = job["spec"]["tfReplicaSpecs"]

    def limits(replica):
        return replica["template"]["spec"]["containers"][0]["resources"]["limits"]

    mwms = by_strategy["multi_worker_mirrored"]
    assert list(mwms) == ["Worker"] and mwms["Worker"]["replicas"] == 2
    assert limits(mwms["Worker"]) == {"memory": "32Gi", "nvidia.com/gpu": "4"}
    ps = by_strategy["parameter_server"]
    assert {k: v["replicas"] for k, v in ps.items()} == {"Chief": 1, "Worker": 2, "PS": 1}
    assert [limits(ps[k]).get("nvidia.com/gpu") for k in ("Chief", "Worker", "PS")] == [None, "1", None]
    mirrored = by_strategy["mirrored"]
    assert list(mirrored) == ["Worker"] and mirrored["Worker"]["replicas"] == 1
    assert limits(mirrored["Worker"])["nvidia.com/gpu"] == "2"


def test_launch_names_the_configs_it_does_not_emit(runner, tmp_path):
    suite = tmp_path / "lt.yaml"
    suite.write_text(GPU_SUITE)
    [link] = [s for s in plan(GPU_SUITE).specs if s.network_link]
    for target in ("kubernetes", "slurm"):
        image = ["--image", "img:1"] * (target == "kubernetes")
        result = runner.invoke(cli, ["launch", str(suite), "--target", target, "-o", str(tmp_path / target), *image])
        assert result.exit_code == 0, result.output
        assert f"not emitted: config {link.config_id}: simulated hosts (network_link) run with the local launcher" in (
            result.output
        )


def test_host_commands_carry_each_task_tf_config(tmp_path):
    [path] = emit(plan(), "hosts", tmp_path, LaunchOptions(hosts=("h1", "h2", "h3"), port_base=9000))
    lines = path.read_text().splitlines()
    mwms = [line for line in lines if "multi_worker" not in line and line.startswith(("h1:", "h2:"))][:2]
    configs = [json.loads(shlex.split(re.sub(r"^\w+: TF_CONFIG=", "", line))[0]) for line in mwms]
    assert configs == [
        {"cluster": {"worker": ["h1:9000", "h2:9000"]}, "task": {"type": "worker", "index": i}} for i in (0, 1)
    ]
    assert any(line.endswith(": not emitted: needs 4 hosts (one per task), 3 given") for line in lines)
    # host entries may name their port, so that several tasks share a host
    [path] = emit(plan(), "hosts", tmp_path, LaunchOptions(hosts=("127.0.0.1:9001", "127.0.0.1:9002")))
    first = next(line for line in path.read_text().splitlines() if line.startswith("127.0.0.1:9001: "))
    assert json.loads(shlex.split(first.split(": ", 1)[1].removeprefix("TF_CONFIG="))[0])["cluster"] == {
        "worker": ["127.0.0.1:9001", "127.0.0.1:9002"]
    }


def test_launch_command(runner, tmp_path):
    suite = tmp_path / "lt.yaml"
    suite.write_text(SUITE)
    result = runner.invoke(cli, ["launch", str(suite), "--target", "slurm", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == f"wrote {tmp_path / 'out' / 'slurm.sbatch'}"
    result = runner.invoke(cli, ["launch", str(suite), "--target", "hosts"])
    assert result.exit_code == 2
    assert result.output == "tfscale: error: --target hosts needs --hosts h1,h2,...\n"


def test_emitted_commands_name_the_nodes_python_and_the_image_s_never_a_host_path(runner, tmp_path):
    # kubernetes took the submitting host's interpreter (a virtualenv path no image has) and a default image
    # without tfscale; now --image is required and the pods run `python` from the image's PATH
    suite = tmp_path / "lt.yaml"
    suite.write_text(GPU_SUITE)
    result = runner.invoke(cli, ["launch", str(suite), "--target", "kubernetes", "-o", str(tmp_path / "k")])
    assert result.exit_code == 2
    assert result.output.startswith("tfscale: error: --target kubernetes needs --image: an image with tfscale")
    assert not (tmp_path / "k").exists()
    args = ["launch", str(suite), "-o", str(tmp_path / "k"), "--target", "kubernetes", "--image", "reg/tfscale:gpu"]
    assert runner.invoke(cli, args).exit_code == 0
    for path in (tmp_path / "k").glob("*.yaml"):
        _, job = yaml.safe_load_all(path.read_text())
        for replica in job["spec"]["tfReplicaSpecs"].values():
            [container] = replica["template"]["spec"]["containers"]
            assert (
                container["command"][:3] == ["python", "-m", "tfscale.worker"]
                and sys.executable not in path.read_text()
            )
    # slurm and hosts run on a shared filesystem: the interpreter running tfscale launch, or --python
    assert runner.invoke(cli, ["launch", str(suite), "--target", "slurm", "-o", str(tmp_path / "s")]).exit_code == 0
    assert f" {sys.executable} -m tfscale.worker " in (tmp_path / "s" / "slurm.sbatch").read_text()
    args = ["launch", str(suite), "--target", "slurm", "-o", str(tmp_path / "p"), "--python", "/opt/venv/bin/python"]
    assert runner.invoke(cli, args).exit_code == 0
    assert " /opt/venv/bin/python -m tfscale.worker " in (tmp_path / "p" / "slurm.sbatch").read_text()


def test_host_commands_give_tasks_on_one_host_their_own_gpus(tmp_path):
    # Several tasks on one host all saw GPUs 0..k-1 (NCCL's duplicate-GPU error for MultiWorkerMirrored)
    suite = GPU_SUITE.replace("  - {strategy: mirrored, devices_per_node: 2}\n", "")
    hosts = ("h1:9001", "h1:9002", "h2:9001", "h2:9002")
    [path] = emit(plan(suite), "hosts", tmp_path, LaunchOptions(hosts=hosts, python="python"))
    visible = [
        (line.split(": ", 1)[0], re.search(r"CUDA_VISIBLE_DEVICES=(\S+) TF_CONFIG='(.+?)'", line))
        for line in path.read_text().splitlines()
        if not line.startswith("#")
    ]
    tasks = [(host, m.group(1), json.loads(m.group(2))["task"]["type"]) for host, m in visible]
    assert tasks == [
        ("h1:9001", "0,1,2,3", "worker"),  # MultiWorkerMirrored x 4 GPUs: two tasks on h1
        ("h1:9002", "4,5,6,7", "worker"),
        ("h1:9001", "-1", "chief"),  # ParameterServer: the chief and the PS compute on no GPU
        ("h1:9002", "0", "worker"),
        ("h2:9001", "0", "worker"),
        ("h2:9002", "-1", "ps"),
    ]
    [cpu] = emit(plan(), "hosts", tmp_path / "cpu", LaunchOptions(hosts=hosts, python="python"))
    assert "CUDA_VISIBLE_DEVICES" not in cpu.read_text()  # CPU suites: the worker hides GPUs itself


def test_pods_that_ask_for_no_gpu_see_none(tmp_path):
    # NVIDIA's runtime shows every GPU of the node to a pod of an image with NVIDIA_VISIBLE_DEVICES=all
    no_gpus = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}, {"name": "CUDA_VISIBLE_DEVICES", "value": "-1"}]
    for suite, expected in ((GPU_SUITE, {"Chief": no_gpus, "PS": no_gpus, "Worker": None}), (SUITE, None)):
        for path in emit(plan(suite), "kubernetes", tmp_path / suite[-9:-1], LaunchOptions(image="img:1")):
            _, job = yaml.safe_load_all(path.read_text())
            for kind, replica in job["spec"]["tfReplicaSpecs"].items():
                [container] = replica["template"]["spec"]["containers"]
                want = no_gpus if expected is None else expected[kind]
                assert container.get("env") == want, (path.name, kind)


def test_the_dockerfile_installs_tfscale_on_tensorflow_s_image():
    text = (Path(__file__).resolve().parents[3] / "docker" / "Dockerfile").read_text()
    assert "ARG BASE=tensorflow/tensorflow:2.21.0\n" in text and "FROM ${BASE}" in text
    assert "pip install --no-cache-dir /src/tfscale" in text


GOLDEN = Path(__file__).resolve().parents[2] / "data" / "golden" / "launch"


@pytest.mark.parametrize(
    ("target", "options"),
    [
        ("slurm", LaunchOptions(partition="p1", account="a1", python="python")),
        ("kubernetes", LaunchOptions(image="img:1")),
        ("hosts", LaunchOptions(hosts=("h1", "h2", "h3"), port_base=9000, python="python")),
    ],
)
def test_scripts_match_their_golden_files(tmp_path, target, options):
    """What `tfscale launch` writes, byte for byte (UPDATE_GOLDEN=1 rewrites the files after a deliberate change)."""
    suite = GPU_SUITE if target == "kubernetes" else SUITE
    written = emit(plan(suite), target, tmp_path, options)
    folder = GOLDEN / target
    if os.environ.get("UPDATE_GOLDEN"):
        folder.mkdir(parents=True, exist_ok=True)
        for path in written:
            (folder / path.name).write_text(path.read_text())
    assert sorted(p.name for p in written) == sorted(p.name for p in folder.iterdir())
    for path in written:
        assert path.read_text() == (folder / path.name).read_text(), path.name


def test_the_slurm_port_base_leaves_a_port_for_every_task(tmp_path):
    from tfscale.errors import TfscaleError

    with pytest.raises(TfscaleError, match=r"^--port-base 65534: 4 port\(s\) from it must lie in 1\.\.65535"):
        emit(plan(), "slurm", tmp_path / "s", LaunchOptions(port_base=65534))
    assert not (tmp_path / "s").exists()  # refused before anything is written
    emit(plan(), "slurm", tmp_path / "s", LaunchOptions(port_base=65532))


REPEATS_SUITE = """
name: lt
defaults: {model_size: tiny, timeout_s: 300, repeats: 3}
matrix: {strategy: [multi_worker_mirrored], nodes: [2]}
"""


def test_every_target_starts_a_config_of_repeats_n_n_times_each_with_its_own_parts(tmp_path):
    [spec] = plan(REPEATS_SUITE).specs
    names = [spec.config_id, f"{spec.config_id}-r1", f"{spec.config_id}-r2"]
    [script] = emit(plan(REPEATS_SUITE), "slurm", tmp_path / "s", LaunchOptions())
    lines = script.read_text().splitlines()
    steps = [shlex.split(line) for line in lines if line.startswith("srun ")]
    assert [argv[argv.index("--result") + 1] for argv in steps] == [f"results/{n}.{{task}}.result.json" for n in names]
    assert {argv[argv.index("--spec") + 1] for argv in steps} == {f"specs/{spec.config_id}.json"}
    assert sum(line.endswith("process 2 of 3") for line in lines) == 1
    assert "#SBATCH --time=0:15:00" in lines  # 3 steps of 300 s, one after another
    manifests = emit(plan(REPEATS_SUITE), "kubernetes", tmp_path / "k", LaunchOptions(image="img:1"))
    assert sorted(path.name for path in manifests) == sorted(f"tfscale-{n}.yaml" for n in names)
    for name in names:
        _, job = yaml.safe_load_all((tmp_path / "k" / f"tfscale-{name}.yaml").read_text())
        command = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"]
        assert command[command.index("--result") + 1] == f"/tfscale/results/{name}.{{task}}.result.json"
    [hosts] = emit(plan(REPEATS_SUITE), "hosts", tmp_path / "h", LaunchOptions(hosts=("h1", "h2")))
    commands = [shlex.split(line.split("TF_CONFIG=", 1)[1]) for line in hosts.read_text().splitlines() if "=" in line]
    assert [argv[argv.index("--result") + 1] for argv in commands] == [
        f"results/{n}.{{task}}.result.json" for n in names for _ in range(2)
    ]


def test_gpu_configs_on_simulated_hosts_keep_nccl_on_the_link(runner, tmp_path):
    # Namespaces of one machine share its hostname and /dev/shm: NCCL would use P2P or shared memory, never the
    # shaped veth. Each task gets the settings that leave it the socket transport, its node as NCCL's host.
    from tfscale import contract
    from tfscale.launch.local import link_nccl_env

    [linked] = [s for s in plan(GPU_SUITE).specs if s.network_link]
    env = link_nccl_env(linked, contract.tasks_of(linked))
    base = {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1", "NCCL_IB_DISABLE": "1"}
    assert env == {
        "worker-0": {**base, "NCCL_HOSTID": "tfscale-node0"},
        "worker-1": {**base, "NCCL_HOSTID": "tfscale-node1"},
    }
    [loopback] = [s for s in plan(GPU_SUITE).specs if s.strategy == "mirrored"]
    assert link_nccl_env(loopback, contract.tasks_of(loopback)) == {}
    cpu = plan(GPU_SUITE.replace("device: gpu", "device: cpu").replace("  devices_per_node: [4]\n", ""))
    assert all(link_nccl_env(s, contract.tasks_of(s)) == {} for s in cpu.specs)
    suite = tmp_path / "lt.yaml"
    suite.write_text(GPU_SUITE)
    result = runner.invoke(cli, ["plan", str(suite)])
    assert (
        "note: 1 GPU config(s) with network_link run NCCL with NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 "
        "NCCL_IB_DISABLE=1, NCCL_HOSTID per node: NCCL's socket transport over the simulated link"
    ) in result.output
