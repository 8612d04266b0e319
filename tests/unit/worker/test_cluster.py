"""A rank started by srun finds its TF task and its GPUs from Slurm's variables (worker.cluster.slurm_environment),
and each process computes on its task's share of devices (task_devices). Pure: no TensorFlow."""

import json

import pytest

from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite
from tfscale.worker import cluster


def spec(text):
    [only] = expand(parse_suite(text, "s.yaml")).specs
    return only


MWMS = "name: s\ndevice: gpu\ninclude: [{strategy: multi_worker_mirrored, nodes: 4, devices_per_node: 2}]\n"
PS = "name: s\ndevice: gpu\ninclude: [{strategy: parameter_server, nodes: 2, devices_per_node: 1, num_ps: 1}]\n"


def slurm(procid, nodelist="gpu[9-10]", per_node="2(x2)", visible="0,1,2,3"):
    environ = {"SLURM_STEP_NODELIST": nodelist, "SLURM_STEP_TASKS_PER_NODE": per_node, "SLURM_PROCID": str(procid)}
    return environ | ({"CUDA_VISIBLE_DEVICES": visible} if visible is not None else {})


def test_ranks_get_their_task_in_slurm_order_and_their_share_of_the_node_s_gpus():
    config = spec(MWMS)
    seen = []
    for procid in range(4):
        env = cluster.slurm_environment(config, slurm(procid), ["0", "1", "2", "3"])
        tf_config = json.loads(env["TF_CONFIG"])
        seen.append((tf_config["task"]["index"], env["CUDA_VISIBLE_DEVICES"]))
        assert tf_config["cluster"] == {"worker": ["gpu9:8888", "gpu9:8889", "gpu10:8888", "gpu10:8889"]}
    assert seen == [(0, "0,1"), (1, "2,3"), (2, "0,1"), (3, "2,3")]


def test_parameter_server_ranks_on_gpus_only_for_workers():
    config = spec(PS)
    visible = [cluster.slurm_environment(config, slurm(r), ["0", "1"])["CUDA_VISIBLE_DEVICES"] for r in range(4)]
    assert visible == ["-1", "0", "0", "-1"]  # chief, worker-0 | worker-1, ps-0


def test_a_node_with_fewer_gpus_than_its_ranks_need_is_refused():
    with pytest.raises(ValueError, match=r"4 GPUs needed on host 0 by worker-0, worker-1; it has 2 \(0,1\)"):
        cluster.slurm_environment(spec(MWMS), slurm(0), ["0", "1"])


def test_task_devices():
    ps = spec(PS)
    for name, expected in (("chief-0", 0), ("worker-1", 1), ("ps-0", 0)):
        cluster.set_task(name)
        assert cluster.task_devices(ps) == expected
    cluster.set_task("worker-0")
    assert cluster.task_devices(spec(MWMS)) == 2
    cpu = spec(PS.replace("device: gpu", "device: cpu"))
    cluster.set_task("ps-0")
    assert cluster.task_devices(cpu) == 1  # on CPU every task makes the config's logical devices
    cluster.set_task("worker-0")  # this process's task as it started
