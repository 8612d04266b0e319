"""Which GPUs each task computes on (contract.place_gpus) and a Slurm step's cluster in Slurm's order
(contract.slurm_cluster): exact values for the layouts a GPU user runs."""

import pytest

from tfscale import contract
from tfscale.contract import PlacementError, Task, cluster_tasks, gpus_of, place_gpus, slurm_cluster

EIGHT = [str(i) for i in range(8)]


def local(strategy, nodes, devices_per_node, gpus=EIGHT, num_ps=None):
    """Every task of a config on one host (the local launcher): task name -> its GPUs."""
    tasks = cluster_tasks(strategy, nodes, num_ps) if nodes > 1 or strategy != "mirrored" else [contract.SINGLE]
    need = [gpus_of(strategy, t, devices_per_node) for t in tasks]
    return place_gpus(tasks, [0] * len(tasks), [gpus], need)


@pytest.mark.parametrize(
    ("nodes", "per_node", "expected"),
    [
        (1, 8, {"worker-0": EIGHT}),
        (2, 4, {"worker-0": ["0", "1", "2", "3"], "worker-1": ["4", "5", "6", "7"]}),
        (4, 2, {f"worker-{i}": [str(2 * i), str(2 * i + 1)] for i in range(4)}),
        (8, 1, {f"worker-{i}": [str(i)] for i in range(8)}),
    ],
)
def test_one_8_gpu_host_is_split_into_disjoint_shares(nodes, per_node, expected):
    placed = local("multi_worker_mirrored", nodes, per_node)
    assert {name: list(gpus) for name, gpus in placed.items()} == expected


def test_single_process_config_takes_the_first_gpus_it_may_use():
    assert local("mirrored", 1, 2) == {"worker-0": ("0", "1")}
    # the user's own CUDA_VISIBLE_DEVICES (UUIDs, or a subset) is what tasks are given from
    assert local("mirrored", 1, 2, gpus=["GPU-b", "GPU-a", "GPU-c"]) == {"worker-0": ("GPU-b", "GPU-a")}


def test_parameter_servers_and_the_chief_get_no_gpu():
    placed = local("parameter_server", 2, 1, num_ps=2)
    assert placed == {"chief-0": (), "worker-0": ("0",), "worker-1": ("1",), "ps-0": (), "ps-1": ()}
    assert contract.visible_gpus_value(placed["ps-0"]) == "-1"
    assert contract.visible_gpus_value(placed["worker-1"]) == "1"


def test_odd_counts_and_a_host_too_small_are_refused_naming_the_tasks():
    assert local("multi_worker_mirrored", 3, 2)["worker-2"] == ("4", "5")  # 6 of 8, the last two idle
    with pytest.raises(PlacementError) as error:
        local("multi_worker_mirrored", 3, 3)
    assert str(error.value) == "9 GPUs needed on host 0 by worker-0, worker-1, worker-2; it has 8 (0,1,2,3,4,5,6,7)"
    with pytest.raises(PlacementError, match=r"^2 GPUs needed on host 0 by worker-0; it has 1 \(3\)$"):
        local("mirrored", 1, 2, gpus=["3"])  # an allocation smaller than asked
    with pytest.raises(PlacementError, match=r"it has 0 \(none\)$"):
        local("mirrored", 1, 1, gpus=[])


def test_tasks_on_several_hosts_take_each_host_s_gpus():
    tasks = [Task("worker", i, True) for i in range(4)]
    placed = place_gpus(tasks, [0, 0, 1, 1], [["0", "1"], ["0", "1"]], [1, 1, 1, 1])
    assert placed == {"worker-0": ("0",), "worker-1": ("1",), "worker-2": ("0",), "worker-3": ("1",)}


def test_visible_gpu_lists_as_cuda_reads_them():
    assert contract.parse_visible_gpus(None) is None
    assert contract.parse_visible_gpus("") == [] == contract.parse_visible_gpus("-1")
    assert contract.parse_visible_gpus("2, 3,-1,4") == ["2", "3"]  # CUDA stops at the first invalid entry
    assert contract.parse_visible_gpus("GPU-aa,GPU-bb") == ["GPU-aa", "GPU-bb"]


def test_slurm_host_lists_keep_slurm_s_order():
    assert contract.expand_hostlist("gpu[9-10]") == ["gpu9", "gpu10"]
    assert contract.expand_hostlist("n[08-10],m5,o[3-4,6]") == ["n08", "n09", "n10", "m5", "o3", "o4", "o6"]
    assert contract.expand_hostlist("a1,b2") == ["a1", "b2"]
    # two bracket ranges in one name (was left as 'rack1-01-gpu[1-2]'): the first varies slowest, as scontrol lists
    assert contract.expand_hostlist("rack1-[01-02]-gpu[1-2],x9") == [
        "rack1-01-gpu1",
        "rack1-01-gpu2",
        "rack1-02-gpu1",
        "rack1-02-gpu2",
        "x9",
    ]
    assert contract.expand_tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    with pytest.raises(ValueError, match="SLURM_STEP_TASKS_PER_NODE"):
        contract.expand_tasks_per_node("x")


def test_slurm_cluster_maps_ranks_to_addresses_in_slurm_s_node_order():
    # TF's SlurmClusterResolver sorts 'gpu10' before 'gpu9' while Slurm gives ranks 0 and 1 to gpu9
    cluster, ranks = slurm_cluster("gpu[9-10]", "1(x2)", cluster_tasks("multi_worker_mirrored", 2, None), 8888)
    assert cluster == {"worker": ["gpu9:8888", "gpu10:8888"]}
    assert [(r.task.name, r.host, r.node, r.local) for r in ranks] == [
        ("worker-0", "gpu9", 0, 0),
        ("worker-1", "gpu10", 1, 0),
    ]
    cluster, ranks = slurm_cluster("gpu[9-10]", "2(x2)", cluster_tasks("parameter_server", 2, 1), 9000)
    assert cluster == {"chief": ["gpu9:9000"], "worker": ["gpu9:9001", "gpu10:9000"], "ps": ["gpu10:9001"]}
    with pytest.raises(ValueError, match="does not hold the config's 4 tasks"):
        slurm_cluster("gpu[9-10]", "1(x2)", cluster_tasks("parameter_server", 2, 1), 9000)


def test_the_parameter_server_chief_reads_the_energy_of_its_workers_gpus():
    tasks = cluster_tasks("parameter_server", 2, 1)
    placed = local("parameter_server", 2, 2, num_ps=1)
    assert contract.energy_gpus(tasks, placed) == {"chief-0": "0,1,2,3"}
    # trainers that compute on their own GPUs read those (no variable); CPU configs place none
    mwms = cluster_tasks("multi_worker_mirrored", 2, None)
    assert contract.energy_gpus(mwms, local("multi_worker_mirrored", 2, 1)) == {}
    assert contract.energy_gpus(tasks, {t.name: () for t in tasks}) == {}
