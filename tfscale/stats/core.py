"""Pure statistics of step-time samples: a small named record with exact, documented definitions.

No numpy on purpose: these few formulas are easy to check by hand, and tests assert exact values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z_975 = 1.959963984540054  # standard normal quantile of 0.975: the half-width of a normal 95 % interval, in SEs

# Student's t quantile of 0.975 for 1 .. 30 degrees of freedom (the textbook table, to 6 decimals); t_975 goes on
# with the Cornish-Fisher expansion beyond (error under 1e-5 from 30 degrees of freedom on).
_T_975 = (
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
    2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
    2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
)  # fmt: skip


def t_975(df: int) -> float:
    """Student's t quantile of 0.975 with `df` >= 1 degrees of freedom: the half-width of a 95 % interval, in
    estimated SEs, when the SE's variance is estimated with df degrees of freedom (Z_975 as df grows)."""
    if df < 1:
        raise ValueError(f"t quantile needs df >= 1, got {df}")
    if df <= len(_T_975):
        return _T_975[df - 1]
    z = Z_975
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def percentile(sorted_values: list[float], q: float) -> float:
    """q-th percentile (0..100) of already-sorted values, linear interpolation between closest ranks
    (Hyndman-Fan type 7, numpy's default)."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def median(values: list[float]) -> float:
    return percentile(sorted(values), 50.0)


CI_MIN_WINDOWS = 6  # below, even [x_(1), x_(n)] contains the median of independent windows less than 95 % of the time
MIN_BATCHES, MAX_BATCHES = 4, 10


def batch_count(n: int) -> int:
    """How many contiguous batches the median CI of n windows splits them into: round(n^(1/3)), 4 to 10 (batches of
    at least ~n^(2/3) windows, so that they are about independent where the windows' dependence is short)."""
    return min(MAX_BATCHES, max(MIN_BATCHES, round(n ** (1 / 3))))


@dataclass(frozen=True)
class MedianCI:
    """A 95 % CI of the median of windows in time order (`median_ci`), in the windows' unit."""

    low: float
    high: float
    batches: int  # the batch means' count: the half-width is in t_975(batches - 1) of their standard errors
    inflation: float  # the signs' batch-means long-run variance over their variance (1 for independent windows)

    @property
    def df(self) -> int:
        return self.batches - 1


def _at_rank(ordered: list[float], rank: float) -> float:
    """The value at a fractional 1-based rank of sorted values, interpolated linearly between neighbours (ranks
    beyond 1 and n clamped to them)."""
    rank = min(max(rank, 1.0), float(len(ordered)))
    below = math.floor(rank)
    above = min(below + 1, len(ordered))
    return ordered[below - 1] + (ordered[above - 1] - ordered[below - 1]) * (rank - below)


def median_ci(values: list[float]) -> MedianCI | None:
    """95 % CI of the median of `values` in the order they were taken, allowing for their serial dependence: batch
    means of the signs about the median, mapped to order statistics. None below CI_MIN_WINDOWS values.

    The count of values below the median decides which order statistics bound it (the classical distribution-free
    CI). Its variance is estimated by batch means: the values split into B = batch_count(n) contiguous batches of
    near-equal size w_b; the fraction of each batch below the sample median, p_b, gives the long-run variance of one
    sign (1 below, 0 above, 0.5 at the median) as s2 = sum w_b (p_b - p)^2 / (B - 1), p the overall fraction, at
    least B / (12 n) (the variance of rounding a batch's fraction to multiples of 1 / w_b). The
    half-width in ranks is h = t_975(B - 1) sqrt(n s2) (for independent values s2 ~ 1/4 and h ~ 1.96 sqrt(n) / 2,
    the normal approximation of the exact ranks) and the CI is [x_((n + 1) / 2 - h), x_((n + 1) / 2 + h)],
    fractional ranks interpolated between neighbours and clamped to [x_(1), x_(n)].

    Why: timing windows of one process are autocorrelated (lag-1 rank autocorrelation median 0.45 in 86 real
    records) and drift in level shifts; ranks exact for independent windows covered 0.75-0.81 at rho 0.6. Batch
    means need no model of the dependence, and the t quantile with B - 1 degrees of freedom pays for estimating the
    variance from B batches. Simulated (tests/benchmarks/bench_coverage.py, 3,000 trials), the CI covered the true
    median 0.93-0.97 for independent, AR(1) 0.3 and 0.6 and level-shift windows from 15 to 400 windows.
    """
    n = len(values)
    if n < CI_MIN_WINDOWS:
        return None
    ordered = sorted(values)
    middle = percentile(ordered, 50.0)
    signs = [1.0 if x < middle else 0.0 if x > middle else 0.5 for x in values]
    batches = batch_count(n)
    edges = [round(i * n / batches) for i in range(batches + 1)]
    overall = sum(signs) / n
    spread = sum(
        (edges[b + 1] - edges[b]) * (sum(signs[edges[b] : edges[b + 1]]) / (edges[b + 1] - edges[b]) - overall) ** 2
        for b in range(batches)
    ) / (batches - 1)
    # A batch's fraction is a multiple of 1 / w: rounding to that grid alone adds 1 / (12 w) to s2 (w = n / B), so
    # a smaller s2 is not resolved (equal fractions, as a periodic pattern gives, would make a CI of zero width).
    long_run = max(spread, batches / (12 * n))
    half = t_975(batches - 1) * math.sqrt(n * long_run)
    variance = sum((x - overall) ** 2 for x in signs) / n
    return MedianCI(
        low=_at_rank(ordered, (n + 1) / 2 - half),
        high=_at_rank(ordered, (n + 1) / 2 + half),
        batches=batches,
        inflation=long_run / variance if variance else 1.0,
    )


def ci_log_variance(middle: float | None, low: float | None, high: float | None, quantile: float) -> float:
    """The variance of log(middle) a CI [low, high] explains: its larger side on the log scale over the quantile it
    was built with (Z_975, t_975(df)), squared; 0 without a CI."""
    if not middle or not low or not high:
        return 0.0
    return (max(math.log(middle / low), math.log(high / middle)) / quantile) ** 2


@dataclass(frozen=True)
class Excess:
    """A standard deviation between groups beyond what each member's own variance explains, with its degrees of
    freedom (excess_spread)."""

    sd: float
    df: int


def excess_spread(groups: list[list[tuple[float, float]]]) -> Excess | None:
    """Pooled over the groups of two or more (value, the value's own variance): sd^2 = the sum over them of (k - 1)
    x (the sample variance of the values - the mean own variance), over the sum of k - 1 (the degrees of
    freedom), floored at 0 (a moment estimator, as a random-effects meta-analysis's). None without such a group."""
    pooled, df = 0.0, 0
    for group in groups:
        if len(group) < 2:
            continue
        values = [value for value, _ in group]
        mean = sum(values) / len(values)
        variance = sum((x - mean) ** 2 for x in values) / (len(values) - 1)
        own = sum(variance_ for _, variance_ in group) / len(group)
        pooled += (len(group) - 1) * (variance - own)
        df += len(group) - 1
    return Excess(math.sqrt(max(0.0, pooled / df)), df) if df else None


@dataclass(frozen=True)
class StepStats:
    """Summary of step-time samples, in seconds."""

    n: int
    median: float
    mean: float
    p10: float
    p90: float
    mad: float  # median absolute deviation from the median, unscaled
    ci95_low: float | None  # 95 % CI of the median (median_ci); None below CI_MIN_WINDOWS samples
    ci95_high: float | None
    ci_batches: int | None = None  # the batches median_ci estimated the CI's spread from
    inflation: float = 1.0  # median_ci's variance inflation for the samples' serial dependence (1: independent)

    @classmethod
    def from_samples(cls, samples: list[float]) -> StepStats:
        """From samples in the order they were taken (the CI allows for their serial dependence)."""
        if not samples:
            raise ValueError("no step-time samples")
        ordered = sorted(samples)
        med = percentile(ordered, 50.0)
        ci = median_ci(list(samples))
        return cls(
            n=len(ordered),
            median=med,
            mean=sum(ordered) / len(ordered),
            p10=percentile(ordered, 10.0),
            p90=percentile(ordered, 90.0),
            mad=median([abs(x - med) for x in ordered]),
            ci95_low=ci.low if ci else None,
            ci95_high=ci.high if ci else None,
            ci_batches=ci.batches if ci else None,
            inflation=ci.inflation if ci else 1.0,
        )

    @property
    def cv(self) -> float:
        """Robust coefficient of variation: MAD / median."""
        return self.mad / self.median if self.median else float("nan")
