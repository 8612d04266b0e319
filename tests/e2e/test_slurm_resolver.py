"""A rank's cluster and GPUs from the variables srun sets, read back by TF's own resolver, and a job step run the way
srun would start it."""

import json
import os
import shlex
import socket
import subprocess
import sys

import pytest

from tfscale.launch.emit import LaunchOptions, emit
from tfscale.launch.srun import step_env
from tfscale.measures.merge import merge_rank_parts
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

pytestmark = [pytest.mark.e2e, pytest.mark.workers, pytest.mark.tf]


def spec_of(text):
    return expand(
        parse_suite("name: s\ndefaults: {repeats: 1, model_size: tiny, steps: 3, warmup_steps: 1}\n" + text, "s")
    ).specs[0]


def srun_env(procid, tasks, nodelist, tasks_per_node):
    return {
        "SLURM_PROCID": str(procid),
        "SLURM_STEP_NUM_TASKS": str(tasks),
        "SLURM_STEP_NODELIST": nodelist,
        "SLURM_STEP_TASKS_PER_NODE": tasks_per_node,
    }


@pytest.fixture
def slurm_env(monkeypatch):
    def set_env(**values):
        monkeypatch.setenv("TFSCALE_RESOLVER", "slurm")
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        for key, value in values.items():
            monkeypatch.setenv(key, value)

    return set_env


def resolve(spec):
    """What a rank does before TF starts (worker.main), then TF's resolver of the TF_CONFIG it set."""
    from tfscale.worker.cluster import cluster_resolver
    from tfscale.worker.main import prepare_environment

    prepare_environment(spec.device, spec)
    resolver = cluster_resolver(spec)
    return resolver.cluster_spec().as_dict(), (resolver.task_type, resolver.task_id)


def test_multi_worker_mirrored_on_two_cpu_nodes(slurm_env, monkeypatch):
    slurm_env(**srun_env(1, 2, "node[01-02]", "1(x2)"))
    monkeypatch.setenv("TF_CONFIG", "")
    cluster, task = resolve(spec_of("matrix: {strategy: [multi_worker_mirrored], nodes: [2]}\n"))
    assert cluster == {"worker": ["node01:8888", "node02:8888"]}
    assert task == ("worker", 1)
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "-1"  # a CPU suite hides every GPU


def test_parameter_server_tasks_follow_slurm_ranks_and_node_order(slurm_env, monkeypatch):
    # node9 before node10, as Slurm numbers the ranks (TF's SlurmClusterResolver sorted node10 first)
    slurm_env(**srun_env(3, 4, "node[9-10]", "2(x2)"), TFSCALE_PORT_BASE="9000")
    monkeypatch.setenv("TF_CONFIG", "")
    cluster, task = resolve(spec_of("matrix: {strategy: [parameter_server], nodes: [2]}\n"))
    assert cluster == {"chief": ["node9:9000"], "worker": ["node9:9001", "node10:9000"], "ps": ["node10:9001"]}
    assert task == ("ps", 0)


def test_gpu_ranks_take_their_share_of_the_step_s_gpus(slurm_env, monkeypatch):
    slurm_env(**srun_env(1, 4, "gpu[1-2]", "2(x2)"), CUDA_VISIBLE_DEVICES="0,1,2,3")  # Slurm's binding
    monkeypatch.setenv("TF_CONFIG", "")
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "")
    spec = spec_of("device: gpu\nmatrix: {strategy: [multi_worker_mirrored], nodes: [4], devices_per_node: [2]}\n")
    cluster, task = resolve(spec)
    assert cluster == {"worker": ["gpu1:8888", "gpu1:8889", "gpu2:8888", "gpu2:8889"]}
    assert task == ("worker", 1)
    assert (os.environ["CUDA_VISIBLE_DEVICES"], os.environ["CUDA_DEVICE_ORDER"]) == ("2,3", "PCI_BUS_ID")


def free_port_pair():
    for _ in range(50):
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", 0))
            base = a.getsockname()[1]
            try:
                b.bind(("127.0.0.1", base + 1))
            except OSError:
                continue
            return base
    raise RuntimeError("no two consecutive free ports")


def test_an_emitted_job_step_trains_as_srun_would_start_it(tmp_path):
    """Two tasks on one "node" (localhost), started with the variables srun gives each rank."""
    plan = expand(
        parse_suite(
            "name: s\ndefaults: {repeats: 1, model_size: tiny, steps: 3, warmup_steps: 1, timeout_s: 120}\n"
            "matrix: {strategy: [multi_worker_mirrored], nodes: [2]}\n",
            "s",
        )
    )
    [script] = emit(plan, "slurm", tmp_path, LaunchOptions(python=sys.executable))
    spec = plan.specs[0]
    # the worker command of the script's step, as srun would start it in each rank (tfscale's own srun line)
    [step] = [shlex.split(line) for line in script.read_text().splitlines() if line.startswith("srun ")]
    worker = step[step.index("--export=ALL") + 1 :]
    assert worker[:3] == [sys.executable, "-m", "tfscale.worker"]
    base = free_port_pair()
    processes = []
    for rank in (0, 1):
        env = {**os.environ, **srun_env(rank, 2, "localhost", "2"), **step_env(base)}
        processes.append(
            subprocess.Popen(worker, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        )
    try:
        outputs = [p.communicate(timeout=120)[0].decode(errors="replace") for p in processes]
    finally:
        for p in processes:
            p.kill()
    assert [p.returncode for p in processes] == [0, 0], outputs[0][-2000:] + outputs[1][-2000:]
    parts = [
        json.loads((tmp_path / "results" / f"{spec.config_id}.worker-{i}.result.json").read_text()) for i in (0, 1)
    ]
    assert all(p["ok"] for p in parts)
    merged = merge_rank_parts([p["measurements"] for p in parts], spec.global_batch_size)
    assert merged["replicas"] == 2 and len(merged["rank_throughput_examples_per_s"]) == 2
