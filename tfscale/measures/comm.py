"""Gradient-communication figures from measured times: pure arithmetic with the definitions spelled out.

- exposed communication = fused step - compute-only step (what communication adds to a step);
- split communication = the all-reduce + update step alone, given computed gradients;
- overlap fraction = (compute + split - fused) / split: 0 when communication is fully exposed, 1 when it is
  fully hidden behind compute; the raw value is kept and flagged when it falls outside [0, 1];
- algbw = S / t and busbw = S / t x 2(n-1)/n for an all-reduce of S bytes over n replicas (nccl-tests);
- alpha-beta model T(S) = alpha + beta x S x 2(n-1)/n, fitted by least squares to a message-size sweep.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tfscale import metrics as m


def bus_factor(replicas: int) -> float:
    """2(n-1)/n: the share of the data each rank sends (and receives) in a ring all-reduce."""
    return 2.0 * (replicas - 1) / replicas


def algbw(size_bytes: float, seconds: float) -> float:
    return size_bytes / seconds


def busbw(size_bytes: float, seconds: float, replicas: int) -> float:
    return size_bytes / seconds * bus_factor(replicas)


def overlap(fused_s: float, compute_s: float, split_s: float) -> tuple[float, float]:
    """(clamped, raw) overlap fraction (compute + split - fused) / split."""
    raw = (compute_s + split_s - fused_s) / split_s
    return min(1.0, max(0.0, raw)), raw


def comm_figures(
    *, fused_s: float, compute_s: float, split_s: float, isolated_s: float, grad_bytes: int, replicas: int
) -> dict[str, Any]:
    """Record columns from median times (s) of the fused, compute-only, split and isolated measurements."""
    clamped, raw = overlap(fused_s, compute_s, split_s)
    return {
        m.COMPUTE_TIME_S: compute_s,
        m.COMM_TIME_EXPOSED_S: fused_s - compute_s,
        m.COMM_TIME_SPLIT_S: split_s,
        m.COMM_TIME_ISOLATED_S: isolated_s,
        m.OVERLAP_FRACTION: clamped,
        m.OVERLAP_FRACTION_RAW: raw,
        m.OVERLAP_OUT_OF_RANGE: not 0.0 <= raw <= 1.0,
        m.ALGBW_BYTES_PER_S: algbw(grad_bytes, isolated_s),
        m.BUSBW_BYTES_PER_S: busbw(grad_bytes, isolated_s, replicas),
    }


# Strategies whose compute-only step is not the fused step less a separable all-reduce, so fused - compute-only is
# no communication time: their exposed communication and overlap are left empty, with this reason.
EXPOSED_NOT_APPLICABLE = {
    "central_storage": (
        "under central_storage the variables live on one device and the fused step's reads, gradient reduction and "
        "update are not the compute-only step plus an all-reduce: fused - compute-only measured below zero "
        "(-0.91 ms, 95 % CI -1.17 to -0.54, mlp/tiny on 4 logical CPUs)"
    ),
}
EXPOSED_COLUMNS = (
    m.COMM_TIME_EXPOSED_S,
    m.COMM_TIME_EXPOSED_CI95_LOW_S,
    m.COMM_TIME_EXPOSED_CI95_HIGH_S,
    m.OVERLAP_FRACTION,
    m.OVERLAP_FRACTION_RAW,
    m.OVERLAP_OUT_OF_RANGE,
    m.OVERLAP_FRACTION_CI95_LOW,
    m.OVERLAP_FRACTION_CI95_HIGH,
)


def exposed_not_measured(strategy: str) -> str | None:
    """Why a strategy's exposed communication is not measured by fused - compute-only (None where it is)."""
    why = EXPOSED_NOT_APPLICABLE.get(strategy)
    return None if why is None else f"not measured: {why}"


def applicable(columns: dict[str, Any], strategy: str) -> dict[str, Any]:
    """The communication columns with the exposed and overlap figures emptied where the method does not apply to
    `strategy` (EXPOSED_NOT_APPLICABLE); the compute-only, split and isolated timings stay."""
    why = exposed_not_measured(strategy)
    if why is None:
        return columns
    method = columns.get(m.COMM_METHOD)
    return columns | dict.fromkeys(EXPOSED_COLUMNS) | {m.COMM_METHOD: f"{method}; exposed communication {why}"}


def comm_intervals(
    *,
    fused_samples: Sequence[float],
    compute_samples: Sequence[float],
    split_samples: Sequence[float],
    isolated_samples: Sequence[float],
    grad_bytes: int,
    replicas: int,
) -> dict[str, Any]:
    """95 % CI columns of the communication figures from their samples (s): exposed communication and overlap by
    bootstrap of the medians (tfscale.stats.uncertainty), busbw from the order-statistic CI of the isolated median."""
    from tfscale.stats.core import StepStats
    from tfscale.stats.uncertainty import difference_of_medians, of_medians

    exposed = difference_of_medians(fused_samples, compute_samples)
    overlapped = of_medians([compute_samples, split_samples, fused_samples], lambda c, s, f: (c + s - f) / s)
    isolated = StepStats.from_samples(list(isolated_samples))
    return {
        m.COMPUTE_TIMES_S: list(compute_samples),
        m.COMM_TIME_EXPOSED_CI95_LOW_S: None if exposed is None else exposed.low,
        m.COMM_TIME_EXPOSED_CI95_HIGH_S: None if exposed is None else exposed.high,
        m.OVERLAP_FRACTION_CI95_LOW: None if overlapped is None else overlapped.low,
        m.OVERLAP_FRACTION_CI95_HIGH: None if overlapped is None else overlapped.high,
        # a slower all-reduce is a lower bandwidth: the CI's high time gives the low busbw
        m.BUSBW_CI95_LOW_BYTES_PER_S: None
        if isolated.ci95_high is None
        else busbw(grad_bytes, isolated.ci95_high, replicas),
        m.BUSBW_CI95_HIGH_BYTES_PER_S: None
        if isolated.ci95_low is None
        else busbw(grad_bytes, isolated.ci95_low, replicas),
    }


@dataclass(frozen=True)
class AlphaBeta:
    """T(S) = alpha + beta * S * 2(n-1)/n, in seconds and seconds per byte."""

    alpha_s: float
    beta_s_per_byte: float
    replicas: int

    def predict(self, size_bytes: float) -> float:
        return self.alpha_s + self.beta_s_per_byte * size_bytes * bus_factor(self.replicas)


def fit_alpha_beta(sizes: Sequence[float], seconds: Sequence[float], replicas: int) -> AlphaBeta:
    """Ordinary least squares of seconds on S x 2(n-1)/n."""
    if len(sizes) != len(seconds) or len(sizes) < 2:
        raise ValueError("need at least two (size, time) points of equal count")
    xs = [s * bus_factor(replicas) for s in sizes]
    mean_x, mean_y = sum(xs) / len(xs), sum(seconds) / len(seconds)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("sizes must differ")
    beta = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, seconds, strict=True)) / sxx
    return AlphaBeta(mean_y - beta * mean_x, beta, replicas)


def sweep_sizes(smallest: int = 1 << 10, largest: int = 64 << 20) -> list[int]:
    """Message sizes in bytes from 1 KiB to 64 MiB by powers of two."""
    sizes, size = [], smallest
    while size <= largest:
        sizes.append(size)
        size *= 2
    return sizes


def union_length(intervals: Sequence[tuple[float, float]]) -> float:
    """Total length covered by (start, end) intervals, overlaps counted once."""
    total, current_start, current_end = 0.0, None, None
    for start, end in sorted(intervals):
        if current_end is None or start > current_end:
            if current_end is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None:
        total += current_end - current_start
    return total
