"""Pure statistics of step-time samples: a small named record with exact, documented definitions.

No numpy on purpose: these few formulas are easy to check by hand, and tests assert exact values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction


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


def median_ci_ranks(n: int, confidence: float = 0.95) -> tuple[int, int] | None:
    """1-based ranks (j, k) of the order statistics bounding a distribution-free CI of the median.

    Uses the binomial distribution of the number of samples below the median: the interval
    [x_(j), x_(k)] with k = n + 1 - j covers the median with probability 1 - 2 * P(Bin(n, 1/2) <= j - 1).
    Takes the largest j (narrowest interval) whose coverage is still >= `confidence`. None when even
    [x_(1), x_(n)] covers less (n < 6 at 95 %).
    """
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


@dataclass(frozen=True)
class StepStats:
    """Summary of step-time samples, in seconds."""

    n: int
    median: float
    mean: float
    p10: float
    p90: float
    mad: float  # median absolute deviation from the median, unscaled
    ci95_low: float | None  # distribution-free 95 % CI of the median; None below 6 samples
    ci95_high: float | None

    @classmethod
    def from_samples(cls, samples: list[float]) -> StepStats:
        if not samples:
            raise ValueError("no step-time samples")
        ordered = sorted(samples)
        med = percentile(ordered, 50.0)
        ranks = median_ci_ranks(len(ordered))
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
        )

    @property
    def cv(self) -> float:
        """Robust coefficient of variation: MAD / median."""
        return self.mad / self.median if self.median else float("nan")
