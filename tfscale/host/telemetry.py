"""Telemetry sampler: a thread in the parent (never in the worker, so it takes no time from the timed steps'
interpreter) that samples, at a fixed rate, host CPU %, the workers' resident memory and network bytes (psutil), and
each of the config's GPUs through NVML (utilisation, memory used, power, SM clock, PCIe throughput; the GPUs the
launcher gave its tasks, by UUID, not every GPU of the host). Each sample carries the phase the worker last
reported, so the summary can use the timed windows only (contract.in_timed_windows).

The series goes to `telemetry/<config_id>.csv` (pandas reads it); the summary goes into the record. Without NVML
(no driver, no GPU) the GPU columns stay empty and `gpu_telemetry_note` says why.
"""

from __future__ import annotations

import csv
import io
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from tfscale import metrics as m
from tfscale.contract import in_timed_windows
from tfscale.gpus import nvml_text
from tfscale.store.records import write_atomic
from tfscale.untrusted import UntrustedFile, confined, read_capped

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = (
    "t_s",
    "phase",
    "host_cpu_percent",
    "workers_rss_bytes",
    "net_bytes_sent",
    "net_bytes_recv",
    "gpu",
    "gpu_uuid",
    "gpu_util_percent",
    "gpu_mem_used_bytes",
    "gpu_power_w",
    "gpu_sm_clock_mhz",
    "pcie_tx_bytes_per_s",
    "pcie_rx_bytes_per_s",
)


class Nvml:
    """The few NVML readings tfscale uses; `available` False (with `reason`) where NVML cannot start."""

    def __init__(self, keep: list[str] | None = None) -> None:
        """`keep`: UUIDs of the GPUs to read (the config's own); None: every GPU of the host."""
        self.handles: list[Any] = []
        self.indices: list[int] = []
        self.uuids: list[str] = []
        self.reason = ""
        try:
            import pynvml  # late: absent drivers make it raise on init, and CPU runs need nothing from it

            pynvml.nvmlInit()
            self.nvml = pynvml
            every = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            uuids = [nvml_text(pynvml.nvmlDeviceGetUUID(h)) for h in every]
            self.indices = selected_gpus(uuids, keep)
            self.handles = [every[i] for i in self.indices]
            self.uuids = [uuids[i] for i in self.indices]
            if not every:
                self.reason = "NVML reports no GPU on this host"
            elif not self.handles:
                self.reason = "none of the config's GPUs is on this host"
        except Exception as error:  # ImportError or pynvml.NVMLError: no GPU telemetry, and say why
            self.reason = f"NVML not available on this host: {error}"

    @property
    def available(self) -> bool:
        return bool(self.handles)

    def read(self, pcie: bool = True) -> list[dict[str, Any]]:
        """One row per GPU; with `pcie` False the PCIe columns stay empty (each PCIe reading blocks ~20 ms)."""
        rows = []
        for index, uuid, handle in zip(self.indices, self.uuids, self.handles, strict=True):
            row: dict[str, Any] = {"gpu": index, "gpu_uuid": uuid}
            row["gpu_util_percent"] = self._try(lambda h=handle: self.nvml.nvmlDeviceGetUtilizationRates(h).gpu)
            row["gpu_mem_used_bytes"] = self._try(lambda h=handle: self.nvml.nvmlDeviceGetMemoryInfo(h).used)
            row["gpu_power_w"] = self._try(lambda h=handle: self.nvml.nvmlDeviceGetPowerUsage(h) / 1000.0)
            row["gpu_sm_clock_mhz"] = self._try(
                lambda h=handle: self.nvml.nvmlDeviceGetClockInfo(h, self.nvml.NVML_CLOCK_SM)
            )
            # NVML reports PCIe throughput in KB/s over a 20 ms window; None where the device does not say
            row["pcie_tx_bytes_per_s"] = row["pcie_rx_bytes_per_s"] = None
            if pcie:
                row["pcie_tx_bytes_per_s"] = self._try(
                    lambda h=handle: 1024 * self.nvml.nvmlDeviceGetPcieThroughput(h, self.nvml.NVML_PCIE_UTIL_TX_BYTES)
                )
                row["pcie_rx_bytes_per_s"] = self._try(
                    lambda h=handle: 1024 * self.nvml.nvmlDeviceGetPcieThroughput(h, self.nvml.NVML_PCIE_UTIL_RX_BYTES)
                )
            rows.append(row)
        return rows

    def _try(self, read: Callable[[], Any]) -> Any:
        try:
            return read()
        except Exception:  # a reading the device does not support stays empty
            return None

    def close(self) -> None:
        if self.available:
            self.nvml.nvmlShutdown()


PCIE_READ_S = 0.02  # one nvmlDeviceGetPcieThroughput call: NVML samples the link over 20 ms and blocks meanwhile
PCIE_SHARE = 0.5  # at most this share of a sampling interval goes to PCIe readings


def pcie_every(gpus: int, hz: float) -> int:
    """Read PCIe throughput on one sample in this many: its two readings per GPU (2 x PCIE_READ_S each) may take
    at most PCIE_SHARE of the sampling time. On 8 GPUs at 10 Hz every sample's would take 0.32 s of its 0.1 s."""
    cost = 2 * PCIE_READ_S * gpus
    return max(1, math.ceil(cost * hz / PCIE_SHARE - 1e-9))


def selected_gpus(uuids: list[str], keep: list[str] | None) -> list[int]:
    """NVML indices of the GPUs to sample: those whose UUID is in `keep` (None: all). A MIG UUID or an entry NVML
    does not list selects nothing."""
    return [i for i, uuid in enumerate(uuids) if keep is None or uuid in keep]


class ProcessTrees:
    """The workers' processes and their descendants, re-listed only every `refresh` samples: walking /proc for
    children is most of a sample's cost (0.46 of 0.53 ms measured here), reading a known process's RSS is not."""

    def __init__(self, pids: Callable[[], list[int]], refresh: int = 10) -> None:
        self.pids, self.refresh, self.count, self.processes = pids, refresh, 0, []

    def rss(self) -> int:
        if self.count % self.refresh == 0:
            self.processes = []
            for pid in self.pids():
                try:
                    root = psutil.Process(pid)
                    self.processes += [root, *root.children(recursive=True)]
                except psutil.Error:
                    continue
        self.count += 1
        total = 0
        for process in self.processes:
            try:
                total += process.memory_info().rss
            except psutil.Error:
                continue
        return total


@dataclass
class Sampler:
    """Samples every 1/hz s in a daemon thread between start() and stop(); rows in `rows`."""

    hz: float
    pids: Callable[[], list[int]]  # the worker processes to measure (their trees are summed)
    phase: Callable[[], str]  # the phase the workers last reported
    gpus: list[str] | None = None  # UUIDs of the config's GPUs (None: every GPU of the host)
    rows: list[dict[str, Any]] = field(default_factory=list)
    gpu_note: str = ""

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="tfscale-telemetry", daemon=True)

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        nvml = Nvml(self.gpus)
        self.gpu_note = "" if nvml.available else nvml.reason
        trees = ProcessTrees(self.pids)
        psutil.cpu_percent(interval=None)  # the first call only starts the measurement
        start = time.monotonic()
        every = pcie_every(len(nvml.handles), self.hz)
        taken = slot = 0
        try:
            # Each sample at its own deadline, start + slot / hz (waiting a whole interval after a sample's readings
            # ran the sampler slower than telemetry_hz by their duration); a late one skips the slots it missed.
            while True:
                slot = max(slot + 1, math.floor((time.monotonic() - start) * self.hz))
                if self._stop.wait(max(0.0, start + slot / self.hz - time.monotonic())):
                    break
                net = psutil.net_io_counters()
                host = {
                    "t_s": time.monotonic() - start,
                    "phase": self.phase(),
                    "host_cpu_percent": psutil.cpu_percent(interval=None),
                    "workers_rss_bytes": trees.rss(),
                    "net_bytes_sent": net.bytes_sent,
                    "net_bytes_recv": net.bytes_recv,
                }
                gpus = nvml.read(pcie=taken % every == 0) if nvml.available else [{}]
                self.rows += [{**host, **gpu} for gpu in gpus]
                taken += 1
        finally:
            nvml.close()


def write_series(rows: list[dict[str, Any]], path: Path) -> None:
    """The series as CSV, written atomically (store.write_atomic)."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, text.getvalue())


# Columns read back as text; every other column of COLUMNS is a number.
TEXT_COLUMNS = ("phase", "gpu_uuid")
MAX_SERIES_BYTES = 256 << 20  # 10 Hz over a day on 8 GPUs is ~100 MB


def read_series(run_dir: Path, relative: str) -> pd.DataFrame | None:
    """The series a record names (its telemetry_path, relative to its run folder), None where there is none to
    show. Records are untrusted (tfscale.untrusted): only a regular file inside the run folder, at most
    MAX_SERIES_BYTES, is read; only the columns write_series writes are kept, numbers as numbers (a cell that is not
    one is empty); a file that is no CSV with a t_s column gives None."""
    import pandas as pd  # late: only the report reads series back

    try:
        data = read_capped(confined(run_dir, relative), MAX_SERIES_BYTES)
        table = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    except (UntrustedFile, OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError):
        return None
    if "t_s" not in table.columns:
        return None
    kept = [c for c in COLUMNS if c in table.columns]
    table = table[kept].replace("", None)
    for column in (c for c in kept if c not in TEXT_COLUMNS):
        table[column] = pd.to_numeric(table[column], errors="coerce")
    return table[table["t_s"].notna()]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarise(rows: list[dict[str, Any]], gpu_note: str) -> dict[str, Any]:
    """Record columns from a series: means and peaks over the timed windows, or, when the timed steps were
    shorter than the sampling interval, over the worker's run after the model was built (telemetry_window says
    which)."""
    timed = [r for r in rows if in_timed_windows(str(r.get("phase", "")))]
    window = "timed windows"
    if not timed:
        timed = [r for r in rows if r.get("phase") not in ("", None, "strategy ready")]
        window = "whole run after the model was built (timed steps shorter than the sampling interval)"
    if not timed:
        return {
            m.TELEMETRY_SAMPLES: len(rows),
            m.GPU_TELEMETRY_NOTE: gpu_note or None,
            m.TELEMETRY_WINDOW: "no sample after the model was built",
        }
    hosts = {r["t_s"]: r for r in timed}  # one host reading per time stamp (rows repeat it per GPU)
    ordered = [hosts[t] for t in sorted(hosts)]
    span = ordered[-1]["t_s"] - ordered[0]["t_s"]
    moved = (
        ordered[-1]["net_bytes_sent"]
        + ordered[-1]["net_bytes_recv"]
        - ordered[0]["net_bytes_sent"]
        - ordered[0]["net_bytes_recv"]
    )
    gpu = [r for r in timed if r.get("gpu") not in (None, "")]
    util = [r["gpu_util_percent"] for r in gpu if r.get("gpu_util_percent") is not None]
    memory = [r["gpu_mem_used_bytes"] for r in gpu if r.get("gpu_mem_used_bytes") is not None]
    power = [r["gpu_power_w"] for r in gpu if r.get("gpu_power_w") is not None]
    return {
        m.HOST_CPU_UTIL_MEAN_PCT: _mean([r["host_cpu_percent"] for r in ordered]),
        m.NET_BYTES_PER_S: moved / span if span > 0 else None,
        m.GPU_UTIL_MEAN_PCT: _mean(util),
        m.GPU_MEM_PEAK_BYTES: max(memory) if memory else None,
        m.GPU_POWER_MEAN_W: _mean(power),
        m.GPU_TELEMETRY_NOTE: None if gpu else (gpu_note or "no GPU sample"),
        m.TELEMETRY_SAMPLES: len(ordered),
        m.TELEMETRY_WINDOW: window,
    }
