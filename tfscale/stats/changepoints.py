"""Steps in a series of runs' figures (issue 36, scaling history): where a figure moved and stayed moved, with the size
of the step and its 95 % CI. Pure; exact-value tests in tests/unit/stats/test_changepoints.py.

Method (stated in every output that uses it): each run's figure is a point on the log scale with the standard error its
own 95 % CI gives ((ln high - ln low) / (2 x 1.96)), floored at the series' run-to-run scatter (the median absolute
difference of consecutive points / (0.6745 x sqrt 2)) and at MIN_SE: a run's in-process CI leaves out the spread between
processes, and a floor from the series keeps too-narrow intervals from making every wobble a step. The series is fitted
by optimal partitioning (exact dynamic programme) into segments of constant level, each segment's cost its weighted sum
of squares about its weighted mean, each step costing a penalty of PENALTY_PER_LOG x ln(n) (a BIC-like penalty;
tests/benchmarks/bench_changepoints.py measures its false and found steps). A segment holds at least MIN_RUN runs: one
run alone cannot be told from an outlier, so a change is called from its second run on (a latest run off the two before
it is `pending`). A run that disagrees with both of its neighbours while they agree with each other is an outlier, left
out of the fit and named.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tfscale.stats.core import Z_975

MIN_RUN = 2  # runs in a segment
PENALTY_PER_LOG = 3.0  # penalty per step = PENALTY_PER_LOG x ln(points), in units of squared standard errors
MIN_SE = 1e-3  # the smallest standard error on the log scale (0.1 %): a figure repeated exactly has none
OUTLIER_SES = 5.0  # a run this many standard errors from both agreeing neighbours is an outlier
METHOD = (
    "optimal partitioning of the log figures into constant segments (weighted least squares, each run's weight from "
    f"its 95 % CI, floored at the run-to-run scatter; penalty {PENALTY_PER_LOG:g} x ln(runs) per step; segments of "
    f"{MIN_RUN} or more runs; a run {OUTLIER_SES:g} standard errors off both agreeing neighbours is an outlier)"
)


@dataclass(frozen=True)
class Point:
    """One run's figure with its 95 % CI (low, high; None where the run has none)."""

    value: float
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Step:
    """A change of level: from `index` (the first run after it, in the series' order) on."""

    index: int
    before: float  # the level of the segment before (geometric, weighted)
    after: float  # the level from `index` on
    change: float  # after / before - 1
    change_low: float  # 95 % CI of the change
    change_high: float


@dataclass(frozen=True)
class Fit:
    steps: list[Step]
    outliers: list[int]  # indices of runs left out of the fit
    pending: int | None  # the latest run, when it is off the two runs before it (which agree): a change or an
    # outlier, which only the next run can tell; left out of the fit
    levels: list[float]  # the fitted level of every run (outliers: their segment's)


def _ses(points: Sequence[Point]) -> list[float]:
    """Each point's standard error on the log scale: its CI's, floored at the run-to-run scatter."""
    logs = [math.log(p.value) for p in points]
    diffs = sorted(abs(b - a) for a, b in zip(logs, logs[1:], strict=False))
    scatter = diffs[len(diffs) // 2] / (0.6745 * math.sqrt(2)) if diffs else 0.0
    ses = []
    for p in points:
        ci = p.low is not None and p.high is not None and 0 < p.low < p.high
        own = (math.log(p.high) - math.log(p.low)) / (2 * Z_975) if ci else 0.0
        ses.append(max(own, scatter, MIN_SE))
    return ses


def outliers(logs: Sequence[float], ses: Sequence[float]) -> list[int]:
    """Runs off both neighbours by OUTLIER_SES standard errors while those two agree within it (first and last
    runs have one neighbour: never outliers)."""
    found = []
    for i in range(1, len(logs) - 1):
        a, x, b = logs[i - 1], logs[i], logs[i + 1]
        limit = OUTLIER_SES * ses[i]
        if abs(x - a) > limit and abs(x - b) > limit and abs(a - b) <= limit and (x - a) * (x - b) > 0:
            found.append(i)
    return found


def pending(logs: Sequence[float], ses: Sequence[float]) -> int | None:
    """The latest run's index when it is OUTLIER_SES standard errors off both runs before it, which agree."""
    if len(logs) < 3:
        return None
    a, b, x = logs[-3], logs[-2], logs[-1]
    limit = OUTLIER_SES * ses[-1]
    return len(logs) - 1 if abs(x - a) > limit and abs(x - b) > limit and abs(a - b) <= limit else None


def _segments(logs: Sequence[float], weights: Sequence[float], penalty: float) -> list[int]:
    """Start indices of the optimal segments (the first is 0)."""
    n = len(logs)
    if n < MIN_RUN:
        return [0]
    x, wt = np.asarray(logs, dtype=float), np.asarray(weights, dtype=float)
    w = np.concatenate(([0.0], np.cumsum(wt)))
    wx = np.concatenate(([0.0], np.cumsum(wt * x)))
    wxx = np.concatenate(([0.0], np.cumsum(wt * x * x)))
    best = np.full(n + 1, math.inf)
    best[0] = -penalty
    start = [0] * (n + 1)
    for t in range(MIN_RUN, n + 1):
        # every last segment s..t at once (a series of 200 runs: 200 vector steps, not 20,000 scalar ones); the
        # segments before s cost best[s] (inf where no segmentation of that prefix holds MIN_RUN runs a segment)
        s = np.arange(0, t - MIN_RUN + 1)
        mean_sum = wx[t] - wx[s]
        values = best[s] + ((wxx[t] - wxx[s]) - mean_sum * mean_sum / (w[t] - w[s])) + penalty
        pick = int(np.argmin(values))  # the first of equal minima, as a scalar scan with `<` keeps
        best[t], start[t] = values[pick], pick
    starts, t = [], n
    while t > 0:
        starts.append(start[t])
        t = start[t]
    return sorted(starts)


def find_steps(points: Sequence[Point]) -> Fit:
    """The steps of a series of runs (in time order) and its outliers."""
    if not points:
        return Fit([], [], None, [])
    logs = [math.log(p.value) for p in points]
    ses = _ses(points)
    left_out = outliers(logs, ses)
    latest = pending(logs, ses)
    kept = [i for i in range(len(points)) if i not in left_out and i != latest]
    kept_logs = [logs[i] for i in kept]
    weights = [1.0 / ses[i] ** 2 for i in kept]
    starts = _segments(kept_logs, weights, PENALTY_PER_LOG * math.log(max(len(kept), 2)))
    bounds = [*starts, len(kept)]
    means, totals = [], []
    for s, t in zip(bounds, bounds[1:], strict=False):
        total = sum(weights[s:t])
        means.append(sum(w * x for w, x in zip(weights[s:t], kept_logs[s:t], strict=True)) / total)
        totals.append(total)
    steps = []
    for k in range(1, len(means)):
        diff = means[k] - means[k - 1]
        se = math.sqrt(1 / totals[k] + 1 / totals[k - 1])
        steps.append(
            Step(
                kept[starts[k]],
                math.exp(means[k - 1]),
                math.exp(means[k]),
                math.exp(diff) - 1,
                math.exp(diff - Z_975 * se) - 1,
                math.exp(diff + Z_975 * se) - 1,
            )
        )
    levels = []
    for i in range(len(points)):
        segment = sum(1 for s in starts if kept and s < len(kept) and kept[s] <= i) - 1
        levels.append(math.exp(means[max(segment, 0)]))
    return Fit(steps, left_out, latest, levels)
