"""The host's environment without TensorFlow: CPU, memory, Python, package versions, GPUs through NVML.

TensorFlow's own view (version, CUDA/cuDNN build, devices) comes from a worker (`python -m tfscale.worker --env`)
and is merged in by `collect_env`.
"""

from __future__ import annotations

import datetime
import platform
import socket
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

from tfscale import contract
from tfscale.launch.processes import WorkerCallError, call_worker

PACKAGES = (
    "tensorflow",
    "keras",
    "numpy",
    "pandas",
    "plotly",
    "click",
    "psutil",
    "nvidia-ml-py",
    "pydantic",
    "PyYAML",
    "tfscale",
)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def nvml_info() -> dict[str, Any]:
    """GPU names, memory and driver through NVML; {"available": False, "reason": ...} without it."""
    try:
        import pynvml  # late: only needed here, and absent drivers make it raise on init
    except ImportError as e:
        return {"available": False, "reason": f"pynvml not importable: {e}"}
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as e:
        return {"available": False, "reason": f"NVML not available on this host: {e}"}
    try:
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            gpus.append(
                {
                    "index": i,
                    "name": _text(pynvml.nvmlDeviceGetName(handle)),
                    "memory_total_bytes": int(memory.total),
                    "uuid": _text(pynvml.nvmlDeviceGetUUID(handle)),
                    "nvlink": _nvlinks(pynvml, handle),
                }
            )
        return {
            "available": True,
            "driver_version": _text(pynvml.nvmlSystemGetDriverVersion()),
            "cuda_driver_version": pynvml.nvmlSystemGetCudaDriverVersion(),
            "gpus": gpus,
        }
    finally:
        pynvml.nvmlShutdown()


def _nvlinks(pynvml, handle) -> list[dict[str, Any]] | str:
    """Active NVLinks of a GPU and the PCI bus id of what each connects to, or why NVML cannot say."""
    links = []
    for link in range(getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18)):
        try:
            if pynvml.nvmlDeviceGetNvLinkState(handle, link) != pynvml.NVML_FEATURE_ENABLED:
                continue
            remote = pynvml.nvmlDeviceGetNvLinkRemotePciInfo(handle, link)
            links.append({"link": link, "remote_pci_bus_id": _text(remote.busId)})
        except (pynvml.NVMLError, AttributeError) as error:
            if not links and link == 0:
                return f"not reported: {error}"
            break
    return links


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def host_env() -> dict[str, Any]:
    memory = psutil.virtual_memory()
    return {
        "captured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "cpu_model": _cpu_model(),
        "cpu_logical_cores": psutil.cpu_count(logical=True),
        "cpu_physical_cores": psutil.cpu_count(logical=False),
        "memory_total_bytes": int(memory.total),
        "packages": _package_versions(),
        "nvml": nvml_info(),
    }


def tensorflow_env(timeout_s: float = 180.0) -> dict[str, Any]:
    """TensorFlow's view of this host, from a fresh worker process (the parent never imports TF)."""
    try:
        return call_worker(contract.ENV, timeout_s)
    except WorkerCallError as error:
        return {"error": str(error)}


def collect_env() -> dict[str, Any]:
    return {**host_env(), "tensorflow": tensorflow_env()}
