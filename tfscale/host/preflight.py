"""Before a GPU sweep starts any worker: does every config fit on this host's GPUs, and does TensorFlow see them?
And the one-paragraph summary of a host's environment that `tfscale env` and `tfscale run` print. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tfscale import contract
from tfscale.suite.spec import RunSpec

GPU_INSTALL_HINT = "install TensorFlow's CUDA build: pip install -e '.[gpu]' (tensorflow[and-cuda])"


def placement_problem(spec: RunSpec, gpus: list[str]) -> str | None:
    """Why the config's tasks do not fit on one host with these GPUs (every local task shares it), or None."""
    try:
        contract.place_on_host(spec, gpus)
    except contract.PlacementError as error:
        return str(error)
    return None


def gpu_preflight(specs: Iterable[RunSpec], gpus: list[str], tf_gpus: int | None) -> str | None:
    """One line refusing a GPU sweep on this host, or None when it can start: TensorFlow sees fewer GPUs than the
    host gives out (`tf_gpus`, None: unknown), or a config needs more GPUs than there are."""
    gpu_specs = [s for s in specs if s.device == "gpu"]
    if not gpu_specs:
        return None
    if not gpus:
        return (
            f"device: gpu, but this host has no GPU to give out (NVML finds none, or "
            f"{contract.VISIBLE_GPUS_ENV} hides them); {len(gpu_specs)} config(s) need GPUs"
        )
    if tf_gpus is not None and tf_gpus < len(gpus):
        return f"TensorFlow sees {tf_gpus} of this host's {len(gpus)} GPUs: {GPU_INSTALL_HINT}"
    for spec in gpu_specs:
        problem = placement_problem(spec, gpus)
        if problem:
            return (
                f"config {spec.config_id} ({spec.strategy or spec.parallelism}, {spec.nodes} node(s) x "
                f"{spec.devices_per_node} GPU(s)) does not fit on this host: {problem}; "
                "exclude it in the suite, or run it with --launcher slurm"
            )
    return None


def tf_gpu_count(env: dict[str, Any]) -> int | None:
    """GPUs TensorFlow listed in a collected environment (envinfo.collect_env), None when it could not say."""
    tf_view = env.get("tensorflow") or {}
    if "physical_devices" not in tf_view:
        return None
    return sum(1 for name in tf_view["physical_devices"] if ":GPU:" in name)


def _gib(value: Any) -> str:
    return f"{value / 2**30:.1f} GiB" if isinstance(value, int | float) else "? GiB"


def env_summary(env: dict[str, Any]) -> str:
    """One paragraph a person reads before the JSON: host, TensorFlow and its build, the GPUs NVML and TF see,
    and the CUDA libraries installed by pip."""
    packages = env.get("packages") or {}
    tf_view = env.get("tensorflow") or {}
    build = tf_view.get("build_info") or {}
    parts = [
        f"host {env.get('host', '?')}: {env.get('cpu_model', '?')} ({env.get('cpu_logical_cores', '?')} logical "
        f"cores), {_gib(env.get('memory_total_bytes'))} memory, Python {env.get('python', '?')}."
    ]
    if "error" in tf_view:
        parts.append(f"TensorFlow could not be asked: {tf_view['error']}.")
    else:
        cuda = (
            f"built with CUDA {build.get('cuda_version', '?')}, cuDNN {build.get('cudnn_version', '?')}"
            if tf_view.get("built_with_cuda")
            else "a build without CUDA"
        )
        parts.append(f"TensorFlow {tf_view.get('version', '?')} ({cuda}) sees {tf_gpu_count(env) or 0} GPU(s).")
    nvml = env.get("nvml") or {}
    if nvml.get("available"):
        names: dict[str, int] = {}
        for gpu in nvml.get("gpus", []):
            names[gpu["name"]] = names.get(gpu["name"], 0) + 1
        listed = ", ".join(f"{count} x {name}" for name, count in names.items()) or "no GPU"
        driver = nvml.get("cuda_driver_version")
        cuda_driver = f", CUDA {driver // 1000}.{driver % 1000 // 10}" if isinstance(driver, int) else ""
        parts.append(f"NVML: {listed} (driver {nvml.get('driver_version', '?')}{cuda_driver}).")
    else:
        parts.append(f"NVML: {nvml.get('reason', 'not available')}.")
    libraries = [f"{name} {packages[name]}" for name in CUDA_PACKAGES if packages.get(name)]
    parts.append(f"CUDA libraries from pip: {', '.join(libraries)}." if libraries else "No CUDA libraries from pip.")
    return " ".join(parts)


# What tensorflow[and-cuda] installs that decides what TF can run on a GPU (their versions go in env.json).
CUDA_PACKAGES = ("nvidia-cuda-runtime-cu12", "nvidia-cudnn-cu12", "nvidia-nccl-cu12")
