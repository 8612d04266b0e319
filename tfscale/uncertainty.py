"""Confidence intervals of the figures derived from step-time samples. Pure (numpy), deterministic.

Method (stated in the report): a percentile bootstrap over the per-window samples of each config, resampled
independently, BOOTSTRAP_RESAMPLES times with a fixed seed, so a figure and its CI are the same on every reading.
A derived figure is a function of the medians of one or two sample sets (speedup and efficiency: the ratio of
the baseline's median step to the config's; exposed communication: the difference of the fused and the
compute-only medians); its CI is the 2.5th and 97.5th percentiles of that function over the resampled medians.
The CI covers the spread within each measuring process; run-to-run spread shows only across repeats.
Order-statistic CIs (of one median, and what follows monotonically from it, like busbw) need no bootstrap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261202
CONFIDENCE = 0.95
METHOD = (
    f"95 % CI: percentile bootstrap of the medians ({BOOTSTRAP_RESAMPLES} resamples of each config's timing "
    "windows, fixed seed); it covers the spread within each measuring process"
)


@dataclass(frozen=True)
class Interval:
    """A figure's 95 % CI, in the figure's unit."""

    low: float
    high: float

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def resampled_medians(samples: Sequence[float], seed_offset: int = 0) -> np.ndarray:
    """BOOTSTRAP_RESAMPLES medians of resamples (with replacement, same size) of `samples`."""
    values = np.asarray(samples, dtype=float)
    if values.size == 0:
        raise ValueError("no samples to resample")
    rng = np.random.default_rng(BOOTSTRAP_SEED + seed_offset)
    picks = rng.integers(0, values.size, size=(BOOTSTRAP_RESAMPLES, values.size))
    return np.median(values[picks], axis=1)


def _interval(values: np.ndarray) -> Interval:
    tail = (1.0 - CONFIDENCE) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return Interval(float(low), float(high))


def of_medians(sets: Sequence[Sequence[float]], figure: Callable[..., np.ndarray]) -> Interval | None:
    """CI of figure(median(set 0), median(set 1), ...) (element-wise on arrays); None when a set has fewer than two
    samples (a bootstrap of one value says nothing)."""
    if any(len(values) < 2 for values in sets):
        return None
    return _interval(figure(*(resampled_medians(values, i) for i, values in enumerate(sets))))


def ratio_of_medians(numerator: Sequence[float], denominator: Sequence[float]) -> Interval | None:
    """CI of median(numerator) / median(denominator)."""
    return of_medians([numerator, denominator], lambda x, y: x / y)


def difference_of_medians(minuend: Sequence[float], subtrahend: Sequence[float]) -> Interval | None:
    """CI of median(minuend) - median(subtrahend)."""
    return of_medians([minuend, subtrahend], lambda x, y: x - y)


def scaled(interval: Interval | None, factor: float) -> Interval | None:
    """The CI of factor x figure (factor > 0)."""
    return None if interval is None else Interval(interval.low * factor, interval.high * factor)
