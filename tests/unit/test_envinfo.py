"""The parent's view of this host's GPUs and CPUs (tfscale.envinfo): the pure parts, exact values."""

from tfscale.envinfo import cpu_set_text, gpu_uuids, host_gpus


def test_cpu_sets_are_written_as_taskset_writes_them():
    assert cpu_set_text({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11"
    assert cpu_set_text([5]) == "5" and cpu_set_text([]) == ""


def test_gpu_uuids_of_a_visible_list():
    host = ["GPU-a", "GPU-b", "GPU-c"]
    assert gpu_uuids(None, host) == host
    assert gpu_uuids(["2", "0"], host) == ["GPU-c", "GPU-a"]
    assert gpu_uuids(["GPU-x", "7"], host) == ["GPU-x"]  # UUIDs kept as written; an unknown index skipped
    assert gpu_uuids([], host) == []


def test_host_gpus_respects_the_caller_s_own_visible_devices():
    assert host_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}) == ["2", "3"]
    assert host_gpus({"CUDA_VISIBLE_DEVICES": "-1"}) == []
    assert host_gpus({}) == [] or host_gpus({})[0] == "0"  # unset: every GPU NVML lists (none on CI hosts)
