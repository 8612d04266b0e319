"""Confidence intervals of the figures derived from step-time samples. Pure (numpy), deterministic.

Method (stated in the report): a percentile bootstrap over the per-window samples of each config, BOOTSTRAP_RESAMPLES
times with a fixed seed, so a figure and its CI are the same on every reading. Windows of one process are serially
dependent: each resample draws as many windows as they are worth independent ones (`effective_size`: their number
over stats.serial_inflation; all of them for independent windows).
A derived figure is a function of the medians of one or two sample sets (speedup and efficiency: the ratio of
the baseline's median step to the config's; exposed communication: the difference of the fused and the
compute-only medians); its CI is the 2.5th and 97.5th percentiles of that function over the resampled medians.
The CI covers the spread within each measuring process. A config measured in several fresh processes
(`repeats`) gives its samples as one list per process: the bootstrap is then hierarchical (processes resampled,
then each chosen process's windows) and the statistic is the median of the per-process medians, so the CI covers
the spread between processes as well.
Where the run measured the spread between processes (`ProcessSpread`, pooled over its configs run in two or more
processes: tfscale.repeats), each resample instead keeps every process and multiplies the median of their
resampled medians by exp(sd x T / sqrt(k / f)): T a Student t variate with the spread's degrees of freedom (the
spread is itself estimated), k the config's processes, f the variance factor of their median (1 up to 2 processes,
pi / 2 from 3). The CI then covers what a fresh process of the config would measure, with few processes or one.
Order-statistic CIs (of one median, and what follows monotonically from it, like busbw) need no bootstrap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tfscale.stats import serial_inflation

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261202
CONFIDENCE = 0.95


@dataclass(frozen=True)
class ProcessSpread:
    """How far one fresh process's median step strays from the config's beyond its own windows' noise: the
    standard deviation of the log of process medians (about a relative spread: 0.05 is ~5 %) and the degrees of
    freedom it was estimated with."""

    sd_log: float
    df: int

    def offset_sd(self, processes: int) -> float:
        """The log-sd of the median of `processes` processes' offsets (the mean's for 1 or 2, pi / 2 larger in
        variance from 3 on: a median of normal variates)."""
        factor = 1.0 if processes <= 2 else math.pi / 2
        return self.sd_log * math.sqrt(factor / processes)


# One process's timing windows, or one list per fresh process (a config run with repeats > 1).
Samples = Sequence[float] | Sequence[Sequence[float]]


@dataclass(frozen=True)
class Interval:
    """A figure's 95 % CI, in the figure's unit."""

    low: float
    high: float

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def groups_of(samples: Samples) -> list[np.ndarray]:
    """The per-process sample arrays of `samples` (one for a flat list)."""
    if len(samples) > 0 and isinstance(samples[0], Sequence | np.ndarray):
        return [np.asarray(group, dtype=float) for group in samples]
    return [np.asarray(samples, dtype=float)]


def size_of(samples: Samples) -> int:
    return sum(group.size for group in groups_of(samples))


def median_of(samples: Samples) -> float:
    """The statistic the bootstrap resamples: the median, or with several processes the median of their medians."""
    return float(np.median([np.median(group) for group in groups_of(samples)]))


def effective_size(values: Sequence[float]) -> int:
    """How many independent windows `values` are worth: their number over their serial_inflation (in time order),
    rounded, at least 2 (all of them where they are about independent)."""
    return max(2, math.floor(len(values) / serial_inflation(list(values)) + 0.5)) if len(values) > 2 else len(values)


def _resampled_group(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # m-out-of-n: each resample draws effective_size windows, so the spread of its median is that of a median of
    # that many independent windows. Simulated (bench_coverage), this covered 0.86-0.96 for AR(1) 0.3 and 0.6 and
    # level shifts where resampling all n windows, alone or in circular blocks of the inflation's length, gave
    # 0.74-0.94.
    picks = rng.integers(0, values.size, size=(BOOTSTRAP_RESAMPLES, effective_size(values)))
    return np.median(values[picks], axis=1)


def resampled_medians(samples: Samples, seed_offset: int = 0, spread: ProcessSpread | None = None) -> np.ndarray:
    """BOOTSTRAP_RESAMPLES values of `median_of` on resamples (with replacement, same sizes) of `samples`: of the
    windows for one process; of the processes, then of each chosen process's windows, for several. With a
    measured `spread`: every process's windows resampled, times a drawn process offset (see the module)."""
    groups = groups_of(samples)
    if any(group.size == 0 for group in groups):
        raise ValueError("no samples to resample")
    rng = np.random.default_rng(BOOTSTRAP_SEED + seed_offset)
    if spread is not None:
        within = np.median(np.stack([_resampled_group(group, rng) for group in groups], axis=1), axis=1)
        return within * offset_factors(spread, len(groups), rng)
    if len(groups) == 1:
        return _resampled_group(groups[0], rng)
    medians = np.stack([_resampled_group(group, rng) for group in groups], axis=1)  # resample x process
    picks = rng.integers(0, len(groups), size=medians.shape)
    return np.median(np.take_along_axis(medians, picks, axis=1), axis=1)


def offset_factors(spread: ProcessSpread | None, processes: int, rng: np.random.Generator) -> np.ndarray:
    """BOOTSTRAP_RESAMPLES factors exp(offset) for the median of `processes` fresh processes' medians (all 1
    without a measured spread): apply one set to every figure measured in those same processes."""
    if spread is None:
        return np.ones(BOOTSTRAP_RESAMPLES)
    return np.exp(spread.offset_sd(processes) * rng.standard_t(spread.df, size=BOOTSTRAP_RESAMPLES))


def _interval(values: np.ndarray) -> Interval:
    tail = (1.0 - CONFIDENCE) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return Interval(float(low), float(high))


Spreads = Sequence[ProcessSpread | None] | None  # one per sample set (None: that set's spread was not measured)


def of_medians(sets: Sequence[Samples], figure: Callable[..., np.ndarray], spreads: Spreads = None) -> Interval | None:
    """CI of figure(median(set 0), median(set 1), ...) (element-wise on arrays); None when a set has fewer than two
    samples (a bootstrap of one value says nothing). `spreads`: each set's measured ProcessSpread, for sets from
    different processes (figures of one process's paired samples, like exposed communication, leave it out: the
    process offset cancels)."""
    if any(size_of(values) < 2 for values in sets):
        return None
    spreads = list(spreads) if spreads is not None else [None] * len(sets)
    paired = enumerate(zip(sets, spreads, strict=True))
    return _interval(figure(*(resampled_medians(values, i, spread) for i, (values, spread) in paired)))


def ratio_of_medians(numerator: Samples, denominator: Samples, spreads: Spreads = None) -> Interval | None:
    """CI of median(numerator) / median(denominator)."""
    return of_medians([numerator, denominator], lambda x, y: x / y, spreads)


def difference_of_medians(minuend: Samples, subtrahend: Samples) -> Interval | None:
    """CI of median(minuend) - median(subtrahend)."""
    return of_medians([minuend, subtrahend], lambda x, y: x - y)


def of_median(samples: Samples, spread: ProcessSpread | None = None) -> Interval | None:
    """CI of `median_of(samples)` itself."""
    return of_medians([samples], lambda x: x, [spread])


def scaled(interval: Interval | None, factor: float) -> Interval | None:
    """The CI of factor x figure (factor > 0)."""
    return None if interval is None else Interval(interval.low * factor, interval.high * factor)
