"""Peak FLOP/s per device: the denominator of model FLOPs utilisation (MFU = achieved FLOP/s / (devices x peak)).
Pure (no TensorFlow).

GPUs: dense (no sparsity) tensor-core peaks from NVIDIA's datasheets, keyed by the NVML device name and the compute
type a config's precision runs its matmuls in: float32 runs them in TF32 on Ampere and later (TensorFlow enables
TF32 by default: tf.config.experimental.enable_tensor_float_32_execution), mixed_bfloat16 in BF16,
mixed_float16 in FP16. A suite's `peak_flops_per_s` replaces the table (a GPU not in it, clocks set lower).
CPUs: measured per run by tfscale.worker.peak, per logical-device count, stored in env.json.
"""

from __future__ import annotations

from typing import Any

TERA = 1e12
# (substring of the NVML name, {compute type: FLOP/s}); the first match wins, so longer names come first.
# Sources: NVIDIA H200 Tensor Core GPU datasheet (2024); NVIDIA H100 Tensor Core GPU datasheet (2023, SXM5 and
# PCIe columns); NVIDIA A100 Tensor Core GPU datasheet (2021); NVIDIA L4 datasheet (2023); NVIDIA A10 datasheet
# (2021); NVIDIA V100 datasheet (2020, SXM2); NVIDIA T4 datasheet (2019). Their tensor-core figures "with sparsity"
# are twice the dense ones listed here.
GPU_PEAKS: tuple[tuple[str, dict[str, float]], ...] = (
    ("H200", {"tf32": 494.5 * TERA, "bf16": 989.5 * TERA, "fp16": 989.5 * TERA, "fp32": 67 * TERA}),
    ("H100 PCIe", {"tf32": 378 * TERA, "bf16": 756 * TERA, "fp16": 756 * TERA, "fp32": 51 * TERA}),
    ("H100", {"tf32": 494.5 * TERA, "bf16": 989.5 * TERA, "fp16": 989.5 * TERA, "fp32": 67 * TERA}),
    ("A100", {"tf32": 156 * TERA, "bf16": 312 * TERA, "fp16": 312 * TERA, "fp32": 19.5 * TERA}),
    ("L4", {"tf32": 60 * TERA, "bf16": 121 * TERA, "fp16": 121 * TERA, "fp32": 30.3 * TERA}),
    ("A10", {"tf32": 62.5 * TERA, "bf16": 125 * TERA, "fp16": 125 * TERA, "fp32": 31.2 * TERA}),
    ("V100", {"fp16": 125 * TERA, "fp32": 15.7 * TERA}),  # no TF32, no BF16 tensor cores
    ("T4", {"fp16": 65 * TERA, "fp32": 8.1 * TERA}),
)
COMPUTE_TYPES = {"float32": ("tf32", "fp32"), "mixed_bfloat16": ("bf16", "fp32"), "mixed_float16": ("fp16", "fp32")}
SUITE_METHOD = "peak_flops_per_s given in the suite"
CPU_DTYPES = {"float32": "float32", "mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}  # -> measured dtype
ENV_KEY = "peak_flops_per_s"  # env.json: the CPU microbenchmark's figures (tfscale.worker.peak.measure)


def gpu_peak(name: str, precision: str) -> tuple[float, str] | None:
    """(FLOP/s, how it was chosen) of one GPU for a config's precision, from the table; None when the GPU is not
    in it. The compute type falls back to FP32 where the GPU has no tensor cores for it (BF16 on a V100)."""
    for key, peaks in GPU_PEAKS:
        if key in name:
            for compute in COMPUTE_TYPES[precision]:
                if compute in peaks:
                    return peaks[compute], f"datasheet peak of {key} in {compute.upper()} (dense), tfscale.peaks"
    return None


def host_peaks(totals: dict[str, dict[str, float]]) -> dict[str, float]:
    """The host's peak FLOP/s per dtype: the best total any device count reached in the microbenchmark."""
    return {dtype: max(by_count.values()) for dtype, by_count in totals.items() if by_count}


def cpu_peak(env_peaks: dict[str, Any] | None, precision: str, devices: int) -> tuple[float, str] | None:
    """(FLOP/s per logical device, method) for a config's precision: the host's peak from the microbenchmark in
    env.json, shared by the `devices` logical devices on the host's cores; None when it was not measured."""
    if not env_peaks or "total" not in env_peaks:
        return None
    host = host_peaks(env_peaks["total"]).get(CPU_DTYPES[precision])
    return (host / devices, env_peaks.get("method", "")) if host else None


def devices_on_host(devices: int, devices_per_node: int, launcher: str) -> int:
    """Logical devices sharing one host's cores in a config: all of them on the local launcher (its nodes are
    processes on this host), a node's on a cluster."""
    return devices if launcher == "local" else devices_per_node


NOT_HERE = (
    "not known: peaks come from the host tfscale runs on (its GPUs' names, its CPU's microbenchmark), which is not "
    "where a cluster launcher's configs run; give peak_flops_per_s in the suite"
)


def cpu_request(specs, launcher: str) -> tuple[list[int], list[str]]:
    """The device counts and compute dtypes a CPU sweep needs peaks for (configs with their own peak excluded);
    none for a launcher whose configs run on other hosts (NOT_HERE)."""
    if launcher != "local":
        return [], []
    measured = [s for s in specs if s.device == "cpu" and not s.peak_flops_per_s]
    counts = sorted({devices_on_host(s.devices, s.devices_per_node, launcher) for s in measured})
    dtypes = sorted({CPU_DTYPES[s.precision] for s in measured})
    return counts, dtypes


def peak_columns(
    device: str,
    precision: str,
    devices_on_host: int,
    env: dict[str, Any],
    override: float | None = None,
    launcher: str = "local",
) -> tuple[float | None, str]:
    """(peak FLOP/s per device, how it was found, or why it is empty) of a config."""
    if override:
        return override, SUITE_METHOD
    if launcher != "local":
        return None, NOT_HERE
    if device == "cpu":
        found = cpu_peak(env.get(ENV_KEY), precision, devices_on_host)
        if found is None:
            why = (env.get(ENV_KEY) or {}).get("error") or "the run's env.json has no CPU peak for this precision"
            return None, f"not measured: {why}"
        return found
    names = [gpu.get("name", "") for gpu in (env.get("nvml") or {}).get("gpus") or []]
    if not names:
        return None, "not known: NVML listed no GPU on this host"
    found = gpu_peak(names[0], precision)
    if found is None:
        return None, f"not known: {names[0]} is not in tfscale.peaks' table; give peak_flops_per_s in the suite"
    return found
