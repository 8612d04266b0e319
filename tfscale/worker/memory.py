"""Peak memory: TF's allocator peak per GPU, or the process peak RSS on CPU (where TF keeps no per-device stats).

On GPUs the allocator peak is reset once warm-up is done (`reset_peaks`) and read right after the timed loop
(`peak_memory`): so it covers the timed steps only, not the first step's autotuning scratch (cuDNN, XLA) nor the
communication-breakdown and profiling steps that run after the loop on multi-replica configs.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass

import tensorflow as tf

from tfscale import metrics as m
from tfscale.contract import FORKED_FROM_ENV

TF_ALLOCATOR_PEAK = m.MEMORY_KIND_ALLOCATOR_PEAK
PROCESS_PEAK_RSS = m.MEMORY_KIND_PROCESS_RSS
FORKED_PEAK_RSS = m.MEMORY_KIND_FORKED_RSS
PROCESS_DEVICE = "process"  # peak_memory_device on CPU, and for a task that computes on no GPU


@dataclass(frozen=True)
class PeakMemory:
    bytes: int
    kind: str  # TF_ALLOCATOR_PEAK, PROCESS_PEAK_RSS or FORKED_PEAK_RSS (memory_kind)
    device: str  # whose peak: "GPU:1" (this process's GPU with the largest peak) or PROCESS_DEVICE


def host_rss_peak_bytes() -> int:
    """Peak resident set of this process: VmHWM from /proc, else ru_maxrss (KiB on Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def local_gpus() -> list[str]:
    """This process's own GPUs as TF's memory functions name them ("GPU:0", ...): the visible ones configure_devices
    kept. Not list_logical_devices: in a ParameterServer chief that lists the workers' GPUs too."""
    return [f"GPU:{i}" for i in range(len(tf.config.get_visible_devices("GPU")))]


def reset_peaks(device: str) -> None:
    """Start the allocator peaks afresh (after warm-up) on this process's GPUs; nothing on CPU."""
    if device == "gpu":
        for name in local_gpus():
            tf.config.experimental.reset_memory_stats(name)


def peak_memory(device: str) -> PeakMemory:
    """The largest allocator peak over this process's GPUs, or the process peak RSS on CPU (and in a task that
    computes on no GPU, e.g. the ParameterServer chief).

    On CPU all logical devices share one allocator and TF reports no stats without TF_CPU_ALLOCATOR_USE_BFC, so
    the honest per-device figure is not available: the process peak stands in, and memory_kind says so (a worker
    forked by the zygote has a peak of its own kind: it shares TensorFlow's pages with the zygote).
    """
    gpus = local_gpus() if device == "gpu" else []
    if not gpus:
        kind = FORKED_PEAK_RSS if os.environ.get(FORKED_FROM_ENV) else PROCESS_PEAK_RSS
        return PeakMemory(host_rss_peak_bytes(), kind, PROCESS_DEVICE)
    peaks = {name: tf.config.experimental.get_memory_info(name)["peak"] for name in gpus}
    top = max(peaks, key=peaks.get)
    return PeakMemory(int(peaks[top]), TF_ALLOCATOR_PEAK, top)
