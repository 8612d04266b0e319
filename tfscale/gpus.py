"""This host's GPUs as NVML and CUDA name them: NVML's UUIDs, the GPUs tfscale may hand out, and a CUDA_VISIBLE_DEVICES
list turned into UUIDs. Parent and worker both ask; no TensorFlow, and NVML only when called."""

from __future__ import annotations

import os

from tfscale import contract


def nvml_uuids() -> list[str]:
    """UUIDs of this host's GPUs in NVML's order (PCI bus order: CUDA's too, with contract.GPU_ORDER); [] without
    NVML."""
    try:
        import pynvml  # late: only GPU suites ask, and absent drivers make it raise on init

        pynvml.nvmlInit()
    except Exception:  # ImportError, or NVMLError without a driver
        return []
    try:  # only the UUIDs: nvml_info also walks every NVLink of every GPU
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        return [nvml_text(pynvml.nvmlDeviceGetUUID(handle)) for handle in handles]
    finally:
        pynvml.nvmlShutdown()


def host_gpus(environ: dict[str, str] | None = None) -> list[str]:
    """The GPUs tfscale may hand out to tasks on this host, as CUDA_VISIBLE_DEVICES entries: the ones the caller's
    own CUDA_VISIBLE_DEVICES allows (kept as written: indices or UUIDs), else every GPU NVML sees, by UUID. UUIDs
    name the same GPU to CUDA and NVML; an index means the same GPU to both only under CUDA_DEVICE_ORDER=PCI_BUS_ID
    (CUDA's default order is fastest first), which a task's telemetry, energy and peak would otherwise trust."""
    environ = os.environ if environ is None else environ
    visible = contract.parse_visible_gpus(environ.get(contract.VISIBLE_GPUS_ENV))
    return visible if visible is not None else nvml_uuids()


def gpu_uuids(visible: list[str] | None, uuids: list[str]) -> list[str]:
    """UUIDs of the GPUs a CUDA_VISIBLE_DEVICES list names (None: all), given the host's UUIDs in NVML order.
    Entries that are UUIDs already ("GPU-...", "MIG-...") are kept; an index NVML does not know is skipped."""
    if visible is None:
        return list(uuids)
    named = []
    for entry in visible:
        if entry.isdigit():
            if int(entry) < len(uuids):
                named.append(uuids[int(entry)])
        else:
            named.append(entry)
    return named


def nvml_text(value: str | bytes) -> str:
    """NVML text as str (older pynvml bindings return bytes)."""
    return value.decode() if isinstance(value, bytes) else value
