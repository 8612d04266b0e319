"""The host's environment without TensorFlow: CPU, memory, Python, package versions, GPUs through NVML.

TensorFlow's own view (version, CUDA/cuDNN build, devices) comes from a worker (`python -m tfscale.worker --env`)
and is merged in by `collect_env` (for a CPU suite's run from a per-host cache while nothing it depends on changes).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import socket
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

from tfscale import contract
from tfscale.gpus import nvml_text
from tfscale.host.preflight import CUDA_PACKAGES
from tfscale.launch.processes import WorkerCallError, call_worker
from tfscale.store.records import write_json_atomic

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
    *CUDA_PACKAGES,
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
                    "name": nvml_text(pynvml.nvmlDeviceGetName(handle)),
                    "memory_total_bytes": int(memory.total),
                    "uuid": nvml_text(pynvml.nvmlDeviceGetUUID(handle)),
                    "nvlink": _nvlinks(pynvml, handle),
                }
            )
        return {
            "available": True,
            "driver_version": nvml_text(pynvml.nvmlSystemGetDriverVersion()),
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
            links.append({"link": link, "remote_pci_bus_id": nvml_text(remote.busId)})
        except (pynvml.NVMLError, AttributeError) as error:
            if not links and link == 0:
                return f"not reported: {error}"
            break
    return links


def cpu_set_text(cpus: Iterable[int]) -> str:
    """A CPU set the way taskset and Slurm write it: {0, 1, 2, 3, 8} -> "0-3,8"."""
    ordered = sorted(set(cpus))
    runs: list[list[int]] = []
    for cpu in ordered:
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


# Environment variables that change what TensorFlow, XLA, oneDNN, OpenMP or NCCL do, recorded with each run: e.g.
# TF_NUM_INTRAOP_THREADS=1 makes a CPU step steadier and can make it slower or faster (docs/report.md). TensorFlow's
# are matched by their own prefixes, not by "TF_": Terraform's variables start so too (TF_VAR_* may hold secrets).
# TF_CONFIG is left out: the launcher sets it per task.
RUNTIME_PREFIXES = (
    *("TF_CPP_", "TF_ENABLE_", "TF_DISABLE_", "TF_NUM_", "TF_XLA_", "TF_GPU_", "TF_FORCE_", "TF_CUDNN_"),
    *("TF_DETERMINISTIC_", "TF_USE_", "TF_GRPC_", "TF_COLLECTIVE_", "TF_MKL_", "TF_ONEDNN_", "TF_DATA_"),
    *("XLA_", "NCCL_", "CUDA_", "OMP_", "KMP_", "MKL_", "ONEDNN_", "DNNL_"),
)


def runtime_variables(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The variables of `environ` (default: this process's) that workers inherit and that tune the runtime."""
    environ = os.environ if environ is None else environ
    return {name: environ[name] for name in sorted(environ) if name.startswith(RUNTIME_PREFIXES)}


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
        "runtime_variables": runtime_variables(),
        "nvml": nvml_info(),
    }


def tensorflow_env(timeout_s: float = 180.0) -> dict[str, Any]:
    """TensorFlow's view of this host, from a fresh worker process (the parent never imports TF)."""
    try:
        return call_worker(contract.ENV, timeout_s)
    except WorkerCallError as error:
        return {"error": str(error)}


CACHE_DIR_ENV = "TFSCALE_CACHE_DIR"  # where tfscale keeps what it measures once per host (tests point it at a tmp)
PEAK_CACHE_FILE = "cpu-peaks.json"
TENSORFLOW_CACHE_FILE = "tensorflow-env.json"
TENSORFLOW_SOURCE = "source"  # the key of the TensorFlow view that says where it came from


def _tensorflow_key(host: dict[str, Any]) -> str:
    """What TensorFlow's view of the host depends on: the host, this Python, the installed packages (TensorFlow, its
    CUDA libraries), the variables that tune or hide devices (CUDA_VISIBLE_DEVICES among them) and the GPUs and
    driver NVML lists. JSON, sorted: equal keys, equal views."""
    parts = {name: host.get(name) for name in ("host", "packages", "runtime_variables", "nvml")}
    return json.dumps({**parts, "python": sys.executable}, sort_keys=True)


def cached_tensorflow_env(host: dict[str, Any]) -> dict[str, Any]:
    """TensorFlow's view (tensorflow_env) for the host `host_env()` describes, asked of a worker once and reused
    (cache_dir()/tensorflow-env.json) while nothing it depends on (_tensorflow_key) changes: asking costs a fresh
    process, i.e. an import of TensorFlow (4-8 s here), per run. Its "source" says which it was. A failed answer is
    not kept."""
    path = cache_dir() / TENSORFLOW_CACHE_FILE
    key = _tensorflow_key(host)
    cached = _read_cache(path)
    if cached.get("key") == key and isinstance(cached.get("view"), dict):
        return {**cached["view"], TENSORFLOW_SOURCE: f"cached: asked of a worker at {cached.get('asked_at')} ({path})"}
    view = tensorflow_env()
    if "error" not in view:
        _write_cache(path, {"key": key, "asked_at": host.get("captured_at"), "view": view})
    return {**view, TENSORFLOW_SOURCE: "asked of a worker now"}


def _read_cache(path: Path) -> dict[str, Any]:
    """A per-host cache file's document; {} where there is none yet or it is damaged (measured again then)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def _write_cache(path: Path, document: dict[str, Any]) -> None:
    """Keep `document` for the next run; a read-only home only means measuring again next time."""
    with contextlib.suppress(OSError):
        write_json_atomic(path, document)


def cache_dir() -> Path:
    """$TFSCALE_CACHE_DIR, else $XDG_CACHE_HOME/tfscale, else ~/.cache/tfscale."""
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tfscale"


def _peak_host_key() -> str:
    """What the CPU peak depends on: the host, its CPU and cores, and the TensorFlow that runs the matmuls."""
    tensorflow = _package_versions().get("tensorflow")
    return f"{socket.gethostname()} | {_cpu_model()} | {psutil.cpu_count(logical=True)} cpus | tensorflow {tensorflow}"


def cpu_peaks(counts: list[int], dtypes: list[str], timeout_s: float = 300.0) -> dict[str, Any]:
    """The CPU microbenchmark's figures (tfscale.worker.peak: total FLOP/s of n matmuls at once, per dtype and
    count) for these counts and dtypes, plus "host" (tfscale.measures.peaks.host_peaks). Measured once per host: figures
    in the cache (cache_dir()/cpu-peaks.json, keyed by host, CPU, cores and TF version) are reused, the missing
    ones measured in a fresh worker process and added. {"error": ...} when that fails (MFU is then empty)."""
    from tfscale.measures.peaks import host_peaks

    path = cache_dir() / PEAK_CACHE_FILE
    key = _peak_host_key()
    cache = _read_cache(path)
    known = cache.get(key) if isinstance(cache.get(key), dict) else {}
    wanted = sorted(set(counts) | {1})  # 1: one matmul on all cores, the host's own peak
    have = known.get("total", {})
    missing = {(d, n) for d in dtypes for n in wanted if str(n) not in have.get(d, {})}
    source = "cached"
    if missing:
        request = {"counts": sorted({n for _, n in missing}), "dtypes": sorted({d for d, _ in missing})}
        try:
            fresh = call_worker(contract.PEAK, timeout_s, request=request)
        except WorkerCallError as error:
            return {"error": str(error)}
        for field in ("total", "spread"):
            for dtype, by_count in fresh[field].items():
                known.setdefault(field, {}).setdefault(dtype, {}).update(by_count)
        known["method"] = fresh["method"]
        cache[key] = known
        _write_cache(path, cache)
        source = "measured now"
    totals = {d: {str(n): known["total"][d][str(n)] for n in wanted} for d in dtypes}
    spread = {d: {str(n): known.get("spread", {}).get(d, {}).get(str(n)) for n in wanted} for d in dtypes}
    return {
        "total": totals,
        "host": host_peaks(totals),
        "spread": spread,
        "method": known["method"],
        "source": f"{source} ({path})",
    }


def collect_env(reuse_tensorflow: bool = False) -> dict[str, Any]:
    """host_env() and TensorFlow's view under "tensorflow": asked of a fresh worker, or with `reuse_tensorflow`,
    from the cache while the host is unchanged (cached_tensorflow_env)."""
    host = host_env()
    return {**host, "tensorflow": cached_tensorflow_env(host) if reuse_tensorflow else tensorflow_env()}
