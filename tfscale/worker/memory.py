"""Peak memory: TF's allocator peak per GPU, or the process peak RSS on CPU (where TF keeps no per-device stats)."""

from __future__ import annotations

import resource

import tensorflow as tf

TF_ALLOCATOR_PEAK = "tf_allocator_peak_per_device"
PROCESS_PEAK_RSS = "process_peak_rss"


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


def peak_memory(device: str, devices: list[str]) -> tuple[int, str]:
    """(bytes, kind): the largest allocator peak over the config's GPUs, or the process peak RSS on CPU.

    On CPU all logical devices share one allocator and TF reports no stats without TF_CPU_ALLOCATOR_USE_BFC, so
    the honest per-device figure is not available: the process peak stands in, and memory_kind says so.
    """
    if device == "gpu":
        peaks = [tf.config.experimental.get_memory_info(name.split("device:")[-1])["peak"] for name in devices]
        return max(peaks), TF_ALLOCATOR_PEAK
    return host_rss_peak_bytes(), PROCESS_PEAK_RSS
