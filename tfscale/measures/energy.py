"""Energy over a config's timed windows, and what it costs per example. Pure: the worker reads the counters
(tfscale.worker.energy) and hands their values here.

Counters: on GPUs NVML's total-energy counter of each GPU the rank was given (mJ since the driver loaded; Volta and
later); on CPUs the kernel's RAPL package counters (/sys/class/powercap/intel-rapl:N/energy_uj, µJ), which count the
whole host's packages, every process on them. Both count up and wrap at a known range (RAPL's
max_energy_range_uj): a reading lower than the one before wrapped once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping


def counter_delta(start: float, end: float, wrap: float | None = None) -> float:
    """end - start of a counter that counts up and wraps to 0 at `wrap` (at most one wrap between the readings)."""
    if end >= start:
        return end - start
    if wrap is None:
        raise ValueError(f"counter went down ({start} -> {end}) and its wrap-around range is not known")
    return wrap - start + end


def energy_between(
    starts: Mapping[str, float], ends: Mapping[str, float], wraps: Mapping[str, float | None] | None = None
) -> float:
    """Joules over every counter read at both ends (counters in joules, keyed by device or package)."""
    wraps = wraps or {}
    return sum(counter_delta(starts[k], ends[k], wraps.get(k)) for k in starts if k in ends)


def _positive(*values) -> bool:
    """Every value a finite number above 0 (not None, NaN, 0 or text)."""
    return all(isinstance(v, int | float) and v > 0 and math.isfinite(v) for v in values)


def joules_per_example(energy_j: float | None, window_s: float | None, throughput: float | None) -> float:
    """Energy per training example: the energy of the timed windows over the examples they processed (window x
    throughput, examples/s). NaN where a figure is missing."""
    if not _positive(energy_j, window_s, throughput):
        return math.nan
    return energy_j / (window_s * throughput)


def cost_per_million_examples(price_per_device_hour: float | None, devices: int, throughput: float | None) -> float:
    """What a million examples cost at `price_per_device_hour` for each of `devices` (NaN without a price)."""
    if not _positive(price_per_device_hour, throughput):
        return math.nan
    return price_per_device_hour * devices / 3600.0 * 1e6 / throughput
