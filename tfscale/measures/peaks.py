"""Peak FLOP/s per device: the denominator of model FLOPs utilisation (MFU = achieved FLOP/s / (devices x peak)).
Pure (no TensorFlow).

GPUs: dense (no sparsity) tensor-core peaks from NVIDIA's datasheets, keyed by the NVML device name and the compute
type a config's precision runs its matmuls in: float32 runs them in TF32 on Ampere and later (TensorFlow enables
TF32 by default: tf.config.experimental.enable_tensor_float_32_execution), mixed_bfloat16 in BF16,
mixed_float16 in FP16. A suite's `peak_flops_per_s` replaces the table (a GPU not in it, clocks set lower).
CPUs: measured per run by tfscale.worker.peak, per logical-device count, stored in env.json.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

TERA = 1e12
# (model, variant): {compute type: FLOP/s}. The model is the first word of the NVML name after "NVIDIA"/"Tesla"
# (split at spaces and hyphens: "NVIDIA A100-SXM4-80GB" -> A100), matched exactly, so an L40S is not an L4 and an
# "RTX A1000" not an A100; the variant is "pcie" or "nvl" where the name says so, else "" (SXM, or the only form).
# A variant not listed has no peak: the H100 NVL and H200 NVL run at lower clocks and power than the SXM parts.
# Sources: NVIDIA H200 Tensor Core GPU datasheet (2024); NVIDIA H100 Tensor Core GPU datasheet (2023, SXM5 and
# PCIe columns); NVIDIA A100 Tensor Core GPU datasheet (2021: SXM and PCIe alike); NVIDIA L4 datasheet (2023);
# NVIDIA A10 datasheet (2021); NVIDIA V100 datasheet (2020, SXM2 and PCIe columns); NVIDIA T4 datasheet (2019).
# Their tensor-core figures "with sparsity" are twice the dense ones listed here.
_H100_SXM = {"tf32": 494.5 * TERA, "bf16": 989.5 * TERA, "fp16": 989.5 * TERA, "fp32": 67 * TERA}
_A100 = {"tf32": 156 * TERA, "bf16": 312 * TERA, "fp16": 312 * TERA, "fp32": 19.5 * TERA}
GPU_PEAKS: dict[tuple[str, str], dict[str, float]] = {
    ("H200", ""): _H100_SXM,
    ("H100", ""): _H100_SXM,
    ("H100", "pcie"): {"tf32": 378 * TERA, "bf16": 756 * TERA, "fp16": 756 * TERA, "fp32": 51 * TERA},
    ("A100", ""): _A100,
    ("A100", "pcie"): _A100,
    ("L4", ""): {"tf32": 60 * TERA, "bf16": 121 * TERA, "fp16": 121 * TERA, "fp32": 30.3 * TERA},
    ("A10", ""): {"tf32": 62.5 * TERA, "bf16": 125 * TERA, "fp16": 125 * TERA, "fp32": 31.2 * TERA},
    ("V100", ""): {"fp16": 125 * TERA, "fp32": 15.7 * TERA},  # no TF32, no BF16 tensor cores
    ("V100", "pcie"): {"fp16": 112 * TERA, "fp32": 14 * TERA},
    ("T4", ""): {"fp16": 65 * TERA, "fp32": 8.1 * TERA},
}
_VENDOR_WORDS = {"NVIDIA", "TESLA"}
_VARIANT_LABELS = {"": "", "pcie": "PCIe", "nvl": "NVL"}
_VARIANTS = ("pcie", "nvl")


def gpu_model(name: str) -> tuple[str, str] | None:
    """(model, variant) of an NVML device name, the keys of GPU_PEAKS: 'NVIDIA H100 PCIe' -> ('H100', 'pcie'),
    'Tesla V100-SXM2-16GB' -> ('V100', ''); None for a name with no model word."""
    words = [w for w in re.split(r"[\s-]+", name.strip()) if w]
    while words and words[0].upper() in _VENDOR_WORDS:
        words = words[1:]
    if not words:
        return None
    variant = next((v for v in _VARIANTS if any(w.lower() == v for w in words[1:])), "")
    return words[0].upper(), variant


COMPUTE_TYPES = {"float32": ("tf32", "fp32"), "mixed_bfloat16": ("bf16", "fp32"), "mixed_float16": ("fp16", "fp32")}
SUITE_METHOD = "peak_flops_per_s given in the suite"
CPU_DTYPES = {"float32": "float32", "mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}  # -> measured dtype
ENV_KEY = "peak_flops_per_s"  # env.json: the CPU microbenchmark's figures (tfscale.worker.peak.measure)


def gpu_peak(name: str, precision: str) -> tuple[float, str] | None:
    """(FLOP/s, how it was chosen) of one GPU for a config's precision, from the table; None when the GPU is not
    in it. The compute type falls back to FP32 where the GPU has no tensor cores for it (BF16 on a V100)."""
    model = gpu_model(name)
    peaks = GPU_PEAKS.get(model) if model else None
    if peaks is None:
        return None
    label = " ".join(filter(None, (model[0], _VARIANT_LABELS[model[1]])))
    for compute in COMPUTE_TYPES[precision]:
        if compute in peaks:
            return peaks[compute], f"datasheet peak of {label} in {compute.upper()} (dense), tfscale.measures.peaks"
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
    gpu_uuids: Sequence[str] = (),
) -> tuple[float | None, str]:
    """(peak FLOP/s per device, how it was found, or why it is empty) of a config; `gpu_uuids`: the NVML UUIDs of
    the GPUs it ran on."""
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
    return _config_gpu_peak(env, precision, gpu_uuids)


def _config_gpu_peak(env: dict[str, Any], precision: str, gpu_uuids: Sequence[str]) -> tuple[float | None, str]:
    """The datasheet peak of the GPUs a config ran on (by NVML UUID, as its ranks recorded them; every GPU of the
    host where it recorded none): one figure where they are one model, none where they differ."""
    gpus = (env.get("nvml") or {}).get("gpus") or []
    if not gpus:
        return None, "not known: NVML listed no GPU on this host"
    if gpu_uuids:
        gpus = [gpu for gpu in gpus if gpu.get("uuid") in set(gpu_uuids)]
        if not gpus:
            return None, "not known: NVML on this host listed none of the config's GPUs"
    names = sorted({gpu.get("name", "") for gpu in gpus})
    if len(names) > 1:
        return None, f"not known: the config's GPUs are of different models ({', '.join(names)})"
    found = gpu_peak(names[0], precision)
    if found is None:
        return (
            None,
            f"not known: {names[0]} is not in tfscale.measures.peaks' table; give peak_flops_per_s in the suite",
        )
    return found
