"""Energy of the timed windows, read from hardware counters by the training rank (measures.energy has the rules).

GPU configs read NVML's total-energy counter of the rank's own GPUs; CPU configs the host's RAPL package counters,
only for a single-process config (RAPL counts the whole host: cluster ranks sharing it cannot be told apart).
Where no counter exists the columns are empty and energy_method says why.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tfscale import metrics as m
from tfscale.measures.energy import energy_between

RAPL = Path("/sys/class/powercap")
NVML_METHOD = "NVML total-energy counters of the config's GPUs, summed, over the timed windows"
RAPL_METHOD = "RAPL package counters of the host (every process on it), over the timed windows"


def _rapl_packages(root: Path) -> list[Path]:
    """The top-level RAPL zones (packages), not their sub-zones (core, uncore, dram: intel-rapl:0:1)."""
    return sorted(p for p in root.glob("intel-rapl:*") if p.name.count(":") == 1 and (p / "energy_uj").exists())


def read_rapl(root: Path = RAPL) -> tuple[dict[str, float], dict[str, float]]:
    """(joules, wrap range in joules) per package. Raises OSError when there is none or it cannot be read."""
    packages = _rapl_packages(root)
    if not packages:
        raise OSError(f"no RAPL counters under {root}")
    values = {p.name: int((p / "energy_uj").read_text()) * 1e-6 for p in packages}
    wraps = {}
    for p in packages:
        try:
            wraps[p.name] = int((p / "max_energy_range_uj").read_text()) * 1e-6
        except OSError:
            wraps[p.name] = None
    return values, wraps


def read_nvml(uuids: list[str]) -> dict[str, float]:
    """Joules of NVML's total-energy counter per GPU (by UUID). Raises RuntimeError when NVML cannot say."""
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        raise RuntimeError(f"NVML not available: {error}") from None
    try:
        values = {}
        for uuid in uuids:
            handle = pynvml.nvmlDeviceGetHandleByUUID(uuid)
            values[uuid] = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle) * 1e-3
        return values
    except pynvml.NVMLError as error:
        raise RuntimeError(f"NVML has no energy counter for these GPUs: {error}") from None
    finally:
        pynvml.nvmlShutdown()


class EnergyMeter:
    """start() before the timed windows, columns() after them."""

    def __init__(self, device: str, single_process: bool, gpu_uuids: list[str], rapl_root: Path = RAPL):
        self.device, self.single, self.uuids, self.root = device, single_process, gpu_uuids, rapl_root
        self.begin: dict[str, float] | None = None
        self.wraps: dict[str, float | None] = {}
        self.started = 0.0
        self.reason: str | None = None

    def _read(self) -> dict[str, float]:
        if self.device == "gpu":
            return read_nvml(self.uuids)
        values, self.wraps = read_rapl(self.root)
        return values

    def start(self) -> None:
        if self.device == "cpu" and not self.single:
            self.reason = "not measured: RAPL counts the whole host, which the config's processes share"
            return
        if self.device == "gpu" and not self.uuids:
            self.reason = "not measured: this rank has no GPU"
            return
        try:
            self.begin = self._read()
        except (OSError, RuntimeError, ValueError) as error:
            self.reason = f"not measured: {error}"
        self.started = time.perf_counter()

    def columns(self) -> dict[str, Any]:
        if self.begin is None:
            return {m.ENERGY_METHOD: self.reason or "not measured"}
        window = time.perf_counter() - self.started
        try:
            energy = energy_between(self.begin, self._read(), self.wraps)
        except (OSError, RuntimeError, ValueError) as error:
            return {m.ENERGY_METHOD: f"not measured: {error}"}
        method = NVML_METHOD if self.device == "gpu" else RAPL_METHOD
        return {m.ENERGY_J: energy, m.ENERGY_WINDOW_S: window, m.ENERGY_METHOD: method}
