"""Pure statistics of step-time samples: a small named record with exact, documented definitions.

No numpy on purpose: these few formulas are easy to check by hand, and tests assert exact values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

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


def median_ci_ranks(n: int, confidence: float = 0.95, inflation: float = 1.0) -> tuple[int, int] | None:
    """1-based ranks (j, k) of the order statistics bounding a distribution-free CI of the median.

    Uses the binomial distribution of the number of samples below the median: the interval
    [x_(j), x_(k)] with k = n + 1 - j covers the median with probability 1 - 2 * P(Bin(n, 1/2) <= j - 1).
    Takes the largest j (narrowest interval) whose coverage is still >= `confidence`. None when even
    [x_(1), x_(n)] covers less (n < 6 at 95 %).

    `inflation` >= 1 (serial_inflation): the variance of the count below the median is that many times the
    independent one, so the distance of each rank from the middle, (n + 1) / 2 - j, grows by sqrt(inflation)
    (rounded to the nearest rank, at least rank 1): a normal approximation around the exact independent ranks.
    """
    exact = _independent_ranks(n, confidence)
    if exact is None or inflation <= 1.0:
        return exact
    middle = (n + 1) / 2
    j = max(1, math.floor(middle - (middle - exact[0]) * math.sqrt(inflation) + 0.5))
    return j, n + 1 - j


def _independent_ranks(n: int, confidence: float) -> tuple[int, int] | None:
    """median_ci_ranks for independent samples: exact, from Bin(n, 1/2)."""
    # Exact integer arithmetic: 2.0**n overflows a float from n = 1024 (a 2 s budget of 1 ms windows over three
    # processes pools 3,000 samples). Coverage >= confidence  <=>  (2^n - 2 * sum of C(n, i), i < j) >= c * 2^n.
    level = Fraction(str(confidence))
    total = 1 << n
    best = None
    below, term = 0, 1  # sum of C(n, i) for i < j, and C(n, j - 1)
    for j in range(1, n // 2 + 1):
        below += term
        if (total - 2 * below) * level.denominator >= level.numerator * total:
            best = (j, n + 1 - j)
        else:
            break
        term = term * (n - j + 1) // j
    return best


def _signs(values: list[float]) -> list[float]:
    """Each value's side of the median (1 below, 0 above, 0.5 at it), centred on their mean."""
    middle = median(values)
    signs = [1.0 if x < middle else 0.0 if x > middle else 0.5 for x in values]
    mean = sum(signs) / len(signs)
    return [x - mean for x in signs]


def _autocovariance(centred: list[float], lag: int) -> float:
    return sum(a * b for a, b in zip(centred, centred[lag:], strict=False)) / len(centred)


def serial_inflation(values: list[float]) -> float:
    """How many times the variance of the count of values below their median exceeds what independent values give,
    from their serial dependence (in time order): the larger of two estimates of the long-run variance of the signs
    (1 below the median, 0 above) over their variance, at least 1.

    - AR(1) plug-in: (1 + r) / (1 - r), r the signs' lag-1 autocorrelation plus Kendall's small-sample bias
      correction (1 + 3 r) / n, r capped at 0.95;
    - Bartlett (Newey-West) long-run variance with bandwidth L = round(2 n^(1/3)), for dependence beyond lag 1
      (level shifts).

    Why: timing windows of one process are autocorrelated (lag-1 median 0.45 in 86 real records); the
    order-statistic CI assumes independence and covered the median 0.75-0.81 of the time at rho 0.6. Simulated
    (tests/benchmarks/bench_coverage.py), the widened CI covers 0.93-0.98 for independent, AR(1) 0.3 and 0.6 and
    level-shift sources at 15 to 150 windows. 1.0 below 3 values.
    """
    n = len(values)
    if n < 3:
        return 1.0
    signs = _signs(values)
    variance = _autocovariance(signs, 0)
    if variance == 0:
        return 1.0
    r = _autocovariance(signs, 1) / variance
    r = min(max(r + (1 + 3 * r) / n, 0.0), 0.95)
    ar1 = (1 + r) / (1 - r)
    bandwidth = min(n - 1, max(1, round(2 * n ** (1 / 3))))
    long_run = variance + 2 * sum(
        (1 - lag / (bandwidth + 1)) * _autocovariance(signs, lag) for lag in range(1, bandwidth + 1)
    )
    return max(1.0, ar1, long_run / variance)


@dataclass(frozen=True)
class StepStats:
    """Summary of step-time samples, in seconds."""

    n: int
    median: float
    mean: float
    p10: float
    p90: float
    mad: float  # median absolute deviation from the median, unscaled
    ci95_low: float | None  # 95 % CI of the median from order statistics; None below 6 samples
    ci95_high: float | None
    inflation: float = 1.0  # serial_inflation of the samples (in time order) that widened the CI

    @classmethod
    def from_samples(cls, samples: list[float]) -> StepStats:
        """From samples in the order they were taken (the CI allows for their serial dependence)."""
        if not samples:
            raise ValueError("no step-time samples")
        ordered = sorted(samples)
        med = percentile(ordered, 50.0)
        inflation = serial_inflation(list(samples))
        ranks = median_ci_ranks(len(ordered), inflation=inflation)
        low, high = (ordered[ranks[0] - 1], ordered[ranks[1] - 1]) if ranks else (None, None)
        return cls(
            n=len(ordered),
            median=med,
            mean=sum(ordered) / len(ordered),
            p10=percentile(ordered, 10.0),
            p90=percentile(ordered, 90.0),
            mad=median([abs(x - med) for x in ordered]),
            ci95_low=low,
            ci95_high=high,
            inflation=inflation,
        )

    @property
    def cv(self) -> float:
        """Robust coefficient of variation: MAD / median."""
        return self.mad / self.median if self.median else float("nan")
