"""Confidence intervals of the figures derived from step-time samples. Pure (numpy), deterministic.

Method (stated in the report): a percentile bootstrap, BOOTSTRAP_RESAMPLES draws with a fixed seed, so a figure
and its CI are the same on every reading. Windows of one process are serially dependent, so each draw of a
process's median comes from the median CI of its windows (stats.median_ci, batch means: a parametric bootstrap,
`_drawn_medians`), not from resampling windows as if they were independent.
A derived figure is a function of the medians of one or two sample sets (speedup and efficiency: the ratio of
the baseline's median step to the config's; exposed communication: the difference of the fused and the
compute-only medians); its CI is the 2.5th and 97.5th percentiles of that function over the resampled medians.
The CI covers the spread within each measuring process. A config measured in several fresh processes
(`repeats`) gives its samples as one list per process: the bootstrap is then hierarchical (processes resampled,
then each chosen process's median drawn) and the statistic is the median of the per-process medians, so the CI covers
the spread between processes as well.
Where the run measured the spread between processes (`ProcessSpread`, pooled over its configs run in two or more
processes: tfscale.stats.repeats), each resample instead keeps every process and multiplies the median of their
resampled medians by exp(sd x T / sqrt(k / f)): T a Student t variate with the spread's degrees of freedom (the
spread is itself estimated), k the config's processes, f the variance factor of their median (1 up to 2 processes,
pi / 2 from 3). The CI then covers what a fresh process of the config would measure, with few processes or one.
Where the run also knows the drift between runs on its machine (tfscale.stats.drift.RunDrift, from the suite's
earlier runs), each resample is multiplied by exp(sd x T) more, T with the drift's degrees of freedom, the same for
any number of processes (a run's processes drift together).
Order-statistic CIs (of one median, and what follows monotonically from it, like busbw) need no bootstrap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from tfscale.stats.core import median_ci, t_975

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
    earlier_runs: int = 0  # the suite's earlier runs on the machine it was pooled with (tfscale.stats.repeats)

    def offset_sd(self, processes: int) -> float:
        """The log-sd of the median of `processes` processes' offsets (the mean's for 1 or 2, pi / 2 larger in
        variance from 3 on: a median of normal variates)."""
        factor = 1.0 if processes <= 2 else math.pi / 2
        return self.sd_log * math.sqrt(factor / processes)


class Offset(Protocol):
    """A spread of a figure's processes beyond their windows' noise (ProcessSpread; tfscale.stats.drift.RunDrift):
    the log-sd of the offset of the median of `processes` processes, estimated with `df` degrees of freedom."""

    df: int

    def offset_sd(self, processes: int) -> float: ...


Offsets = Offset | Sequence[Offset] | None  # what a figure's samples carry: none, one kind, or several


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


def _drawn_medians(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """BOOTSTRAP_RESAMPLES draws of one process's median, from the median CI of its windows (in time order).

    A parametric bootstrap: median x exp(T x s), T a Student t variate with the CI's degrees of freedom and s the
    log half-width of the CI's side that T falls on over t_975(df), so the draws' 2.5th and 97.5th percentiles are
    the CI's ends (stats.median_ci: batch means, allowing for serial dependence). Additive where a CI reaches 0.
    Why not resample the windows: resampling treats them as independent (0.68-0.74 coverage at AR(1) 0.6), and
    resampling fewer of them (n over a variance inflation) or circular blocks covered 0.84-0.95 (bench_coverage).
    Below stats.CI_MIN_WINDOWS windows (no CI) it resamples the windows themselves.
    """
    ci = median_ci(list(values))
    if ci is None:
        picks = rng.integers(0, values.size, size=(BOOTSTRAP_RESAMPLES, values.size))
        return np.median(values[picks], axis=1)
    middle = float(np.median(values))
    draws = rng.standard_t(ci.df, size=BOOTSTRAP_RESAMPLES) / t_975(ci.df)
    if ci.low > 0:
        return middle * np.exp(np.where(draws < 0, math.log(middle / ci.low), math.log(ci.high / middle)) * draws)
    return middle + np.where(draws < 0, middle - ci.low, ci.high - middle) * draws


def resampled_medians(samples: Samples, seed_offset: int = 0, spread: Offsets = None) -> np.ndarray:
    """BOOTSTRAP_RESAMPLES draws of `median_of(samples)`: of one process's median (`_drawn_medians`); for several,
    of the processes (with replacement), then of each chosen process's median. With a measured ProcessSpread in
    `spread`: every process's median drawn, times a drawn process offset (see the module); with a run's drift
    (tfscale.stats.drift.RunDrift) there too: times a drawn run offset as well."""
    groups = groups_of(samples)
    if any(group.size == 0 for group in groups):
        raise ValueError("no samples to resample")
    rng = np.random.default_rng(BOOTSTRAP_SEED + seed_offset)
    parts = components(spread)
    process = [part for part in parts if isinstance(part, ProcessSpread)]
    if process:
        within = np.median(np.stack([_drawn_medians(group, rng) for group in groups], axis=1), axis=1)
        values = within * offset_factors(process, len(groups), rng)
    elif len(groups) == 1:
        values = _drawn_medians(groups[0], rng)
    else:
        medians = np.stack([_drawn_medians(group, rng) for group in groups], axis=1)  # resample x process
        picks = rng.integers(0, len(groups), size=medians.shape)
        values = np.median(np.take_along_axis(medians, picks, axis=1), axis=1)
    others = [part for part in parts if not isinstance(part, ProcessSpread)]
    return values * offset_factors(others, len(groups), rng) if others else values


def components(spread: Offsets) -> tuple[Offset, ...]:
    """The offsets a figure's samples carry, as a tuple (None: none; one offset alone: that one)."""
    if spread is None:
        return ()
    if isinstance(spread, Sequence):
        return tuple(spread)
    return (spread,)


def offset_factors(spread: Offsets, processes: int, rng: np.random.Generator) -> np.ndarray:
    """BOOTSTRAP_RESAMPLES factors exp(offset) for the median of `processes` fresh processes' medians (all 1
    without a measured spread): one drawn offset per kind (processes, runs), multiplied; apply one set to every
    figure measured in those same processes."""
    factors = np.ones(BOOTSTRAP_RESAMPLES)
    for part in components(spread):
        factors = factors * np.exp(part.offset_sd(processes) * rng.standard_t(part.df, size=BOOTSTRAP_RESAMPLES))
    return factors


def _interval(values: np.ndarray) -> Interval:
    tail = (1.0 - CONFIDENCE) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return Interval(float(low), float(high))


Spreads = Sequence[Offsets] | None  # one per sample set (None: that set's spread was not measured)


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


def of_median(samples: Samples, spread: Offsets = None) -> Interval | None:
    """CI of `median_of(samples)` itself."""
    return of_medians([samples], lambda x: x, [spread])


def scaled(interval: Interval | None, factor: float) -> Interval | None:
    """The CI of factor x figure (factor > 0)."""
    return None if interval is None else Interval(interval.low * factor, interval.high * factor)
