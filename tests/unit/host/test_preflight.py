"""Before a GPU sweep starts any worker (tfscale.host.preflight): refusals in one line, and the env summary."""

from tfscale.host.preflight import env_summary, gpu_preflight, tf_gpu_count
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

SUITE = """
name: g
device: gpu
matrix:
  model: [mlp]
  strategy: [mirrored]
  devices_per_node: [1, 4]
include: [{strategy: multi_worker_mirrored, nodes: 2, devices_per_node: 4}]
"""


def specs(text=SUITE):
    return expand(parse_suite(text, "g.yaml")).specs


def test_a_sweep_that_fits_starts():
    assert gpu_preflight(specs(), [str(i) for i in range(8)], 8) is None
    cpu = SUITE.replace("device: gpu", "device: cpu").replace("nodes: 2, devices_per_node: 4", "nodes: 2")
    assert gpu_preflight(specs(cpu), [], 0) is None  # CPU: nothing asked


def test_a_host_without_gpus_or_with_a_tf_that_cannot_use_them_is_refused():
    assert gpu_preflight(specs(), [], None) == (
        "device: gpu, but this host has no GPU to give out (NVML finds none, or CUDA_VISIBLE_DEVICES hides them); "
        "3 config(s) need GPUs"
    )
    assert gpu_preflight(specs(), ["0", "1"], 0) == (
        "TensorFlow sees 0 of this host's 2 GPUs: install TensorFlow's CUDA build: pip install -e '.[gpu]' "
        "(tensorflow[and-cuda])"
    )


def test_the_first_config_that_does_not_fit_is_named():
    [_, four, two_by_four] = specs()
    problem = gpu_preflight(specs(), ["0", "1", "2", "3", "4", "5"], 6)
    assert problem == (
        f"config {two_by_four.config_id} (multi_worker_mirrored, 2 node(s) x 4 GPU(s)) does not fit on this host: "
        "8 GPUs needed on host 0 by worker-0, worker-1; it has 6 (0,1,2,3,4,5); exclude it in the suite, or run it "
        "with --launcher slurm"
    )
    assert gpu_preflight(specs(), ["0", "1"], 2).startswith(f"config {four.config_id} (mirrored, 1 node(s) x 4")


ENV = {
    "host": "h1",
    "cpu_model": "Xeon",
    "cpu_logical_cores": 16,
    "memory_total_bytes": 64 * 2**30,
    "python": "3.11.7",
    "packages": {"nvidia-nccl-cu12": "2.23.4", "nvidia-cudnn-cu12": "9.3.0.75"},
    "nvml": {
        "available": True,
        "driver_version": "550.54.15",
        "cuda_driver_version": 12040,
        "gpus": [{"name": "NVIDIA H100"}, {"name": "NVIDIA H100"}],
    },
    "tensorflow": {
        "version": "2.21.0",
        "built_with_cuda": True,
        "build_info": {"cuda_version": "12.5.1", "cudnn_version": "9"},
        "physical_devices": ["/physical_device:CPU:0", "/physical_device:GPU:0", "/physical_device:GPU:1"],
    },
}


def test_env_summary_is_one_paragraph_from_the_document():
    assert tf_gpu_count(ENV) == 2 and tf_gpu_count({"tensorflow": {"error": "x"}}) is None
    assert env_summary(ENV) == (
        "host h1: Xeon (16 logical cores), 64.0 GiB memory, Python 3.11.7. TensorFlow 2.21.0 (built with CUDA "
        "12.5.1, cuDNN 9) sees 2 GPU(s). NVML: 2 x NVIDIA H100 (driver 550.54.15, CUDA 12.4). CUDA libraries from "
        "pip: nvidia-cudnn-cu12 9.3.0.75, nvidia-nccl-cu12 2.23.4."
    )
    bare = ENV | {"nvml": {"available": False, "reason": "NVML not available on this host: x"}, "packages": {}}
    bare |= {"tensorflow": {"error": "worker timed out"}}
    assert env_summary(bare).endswith(
        "TensorFlow could not be asked: worker timed out. NVML: NVML not available on this host: x. "
        "No CUDA libraries from pip."
    )
