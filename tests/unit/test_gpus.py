"""This host's GPUs as NVML and CUDA name them (tfscale.gpus): exact values."""

from tfscale.gpus import gpu_uuids, host_gpus


def test_gpu_uuids_of_a_visible_list():
    host = ["GPU-a", "GPU-b", "GPU-c"]
    assert gpu_uuids(None, host) == host
    assert gpu_uuids(["2", "0"], host) == ["GPU-c", "GPU-a"]
    assert gpu_uuids(["GPU-x", "7"], host) == ["GPU-x"]  # UUIDs kept as written; an unknown index skipped
    assert gpu_uuids([], host) == []


def test_host_gpus_respects_the_caller_s_own_visible_devices():
    assert host_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}) == ["2", "3"]
    assert host_gpus({"CUDA_VISIBLE_DEVICES": "-1"}) == []
    assert host_gpus({}) == [] or host_gpus({})[0].startswith("GPU-")  # unset: every GPU NVML lists (none on CI)


def test_host_gpus_unset_are_named_by_uuid(monkeypatch):
    # indices named the same GPU to CUDA and NVML only under CUDA_DEVICE_ORDER=PCI_BUS_ID; UUIDs always do
    from tfscale import gpus

    monkeypatch.setattr(gpus, "nvml_uuids", lambda: ["GPU-aa", "GPU-bb"])
    assert host_gpus({}) == ["GPU-aa", "GPU-bb"]
    assert host_gpus({"CUDA_VISIBLE_DEVICES": "1"}) == ["1"]  # the caller's own entries, kept as written
