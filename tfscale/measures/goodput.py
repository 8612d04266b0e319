"""The gradient noise scale, statistical efficiency and goodput (issue 18). Pure: no TensorFlow.

McCandlish et al. 2018 ("An Empirical Model of Large-Batch Training", appendix A.1): with the squared norms of the
mean gradient over a small batch b (|G_b|^2, each replica's own, before the all-reduce) and over the big batch B
(|G_B|^2, after it), two unbiased estimates per step are

    |G|^2 = (B |G_B|^2 - b |G_b|^2) / (B - b)          tr(Sigma) = (|G_b|^2 - |G_B|^2) / (1/b - 1/B)

and the simple noise scale is B_simple = tr(Sigma) / |G|^2, taken as the ratio of their sums over the timed steps
(both are noisy per step; their ratio per step is not unbiased). Its 95 % CI: Fieller's interval for a ratio of
means over the timing windows (each window's two sums a pair), with Student's t on the windows less one (`fieller`).
Statistical efficiency of a global batch B against the baseline's B0 (Pollux, OSDI 2021): (B_noise + B0) / (B_noise
+ B); goodput = throughput x statistical efficiency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tfscale.stats.core import t_975


def step_estimates(small_sq: float, big_sq: float, small: int, big: int) -> tuple[float, float]:
    """(|G|^2, tr(Sigma)) of one step from the mean squared norm of the replicas' mean gradients over their `small`
    examples and the squared norm of the global mean gradient over `big` examples."""
    if big <= small:
        raise ValueError(f"the big batch ({big}) must be larger than the small one ({small})")
    grad_sq = (big * big_sq - small * small_sq) / (big - small)
    trace = (small_sq - big_sq) / (1.0 / small - 1.0 / big)
    return grad_sq, trace


class ProbeSchedule:
    """Which steps run the noise probe (grad_noise_every): one in every `every`, counted over all the steps a config
    runs (warm-up, timed windows, the input measurement's windows), its first step included. Not restarted per
    timing window: on CPU a window may be a single step, and a restart would probe every one. A window of n steps
    holds the floor or the ceiling of n / every probed steps; their cost on the step time is about 1 / every of the
    probe's cost on every step. The ranks of a cluster run the same steps in the same order: they probe the same
    steps."""

    def __init__(self, every: int):
        if every < 1:
            raise ValueError(f"grad_noise_every must be at least 1, not {every}")
        self.every, self.count = every, 0

    def probe_now(self) -> bool:
        """Whether the next step runs the probe (each call is one step)."""
        due = self.count % self.every == 0
        self.count += 1
        return due


# Fewer windows than this give no CI: the windows' variance and covariance are estimated too loosely (the bootstrap
# before Fieller held the true value 0.84 of the time at 3 windows). Fieller's interval, simulated (per-step |G|^2 ~
# N(1, 2^2), tr(Sigma) ~ N(1400, 1500^2), 1 or 3 probed steps a window, the level wandering 30 % between windows,
# 1,000 trials): 0.941-0.963 from 8 to 40 windows, unbounded where |G|^2 is not resolved from 0; the percentile
# bootstrap it replaced 0.872-0.945 (tests/benchmarks/bench_coverage.py).
MIN_CI_WINDOWS = 8


def fieller(numerators: np.ndarray, denominators: np.ndarray) -> tuple[float | None, float | None]:
    """95 % confidence set of mean(numerators) / mean(denominators) from paired values (Fieller 1954): the ratios R
    with (mean(n) - R mean(d))^2 <= t^2 Var(mean(n) - R mean(d)), Var from the pairs' sample variances and
    covariance over their count, t Student's 0.975 quantile with count - 1 degrees of freedom. (low, high); where
    mean(d) is not resolved from 0 the set is unbounded: (low, None) for the ray that holds the estimate, (None, None)
    where every ratio fits."""
    n = len(denominators)
    d_mean, n_mean = float(denominators.mean()), float(numerators.mean())
    covariance = np.cov(denominators, numerators, ddof=1) / n
    q = t_975(n - 1) ** 2
    a = d_mean * d_mean - q * covariance[0, 0]
    b = -2.0 * (n_mean * d_mean - q * covariance[0, 1])
    c = n_mean * n_mean - q * covariance[1, 1]
    disc = b * b - 4.0 * a * c
    if disc < 0:  # a < 0 here (the estimate itself always fits): every ratio fits
        return None, None
    roots = sorted((float((-b - math.sqrt(disc)) / (2.0 * a)), float((-b + math.sqrt(disc)) / (2.0 * a))))
    if a > 0:
        return roots[0], roots[1]
    # a <= 0: the set is the two rays outside the roots; the estimate's own ray, read as a noise scale
    estimate = n_mean / d_mean
    return (roots[1], None) if estimate >= roots[1] else (None, None)


@dataclass(frozen=True)
class NoiseScale:
    """B_simple (examples) over some windows, with its bootstrap 95 % CI.

    `value` is None where the |G|^2 estimate summed over the windows is <= 0: the gradient's signal is below its
    noise there and a ratio would be meaningless (negative, or huge). `low` and `high` are None below
    MIN_CI_WINDOWS windows; `high` alone is None where the CI's upper end is unbounded (|G|^2 is not resolved from 0
    in more than 2.5 % of the bootstrap resamples: the noise scale could be any larger value). `note` says why a
    figure is missing, in words ("" where none is)."""

    value: float | None
    low: float | None
    high: float | None
    windows: int
    note: str = ""

    @classmethod
    def of(cls, grad_sq_sums: list[float], trace_sums: list[float]) -> NoiseScale:
        """From each timing window's sums of the two per-step estimates."""
        g, t = np.asarray(grad_sq_sums, float), np.asarray(trace_sums, float)
        n = len(g)
        if n == 0 or g.sum() <= 0:
            return cls(None, None, None, n, "not measured: the |G|^2 estimate summed over the probed steps is <= 0 "
                       "(the gradient's signal is below its noise; more probed steps: grad_noise_every: 1 or a longer "
                       "max_measure_s)")  # fmt: skip
        value = float(t.sum() / g.sum())
        if n < MIN_CI_WINDOWS:
            return cls(value, None, None, n, f"no CI: {n} window(s) held a probed step, a CI needs {MIN_CI_WINDOWS}")
        low, high = fieller(t, g)
        if low is None:
            return cls(value, None, None, n, "no CI: |G|^2 is not resolved from 0 (every noise scale fits)")
        if high is None:
            return cls(value, low, None, n, "the CI's upper end is unbounded: |G|^2 is not resolved from 0")
        return cls(value, low, high, n)


def statistical_efficiency(noise_scale: float, batch: int, baseline_batch: int) -> float:
    """How much one example at global batch `batch` teaches, relative to one at `baseline_batch`: (B_noise + B0) /
    (B_noise + B). 1 at the baseline's batch; below 1 for larger batches, the more so the smaller the noise scale;
    1 at an infinite noise scale (every example teaches as much whatever the batch)."""
    if math.isinf(noise_scale):
        return 1.0
    return (noise_scale + baseline_batch) / (noise_scale + batch)


@dataclass(frozen=True)
class Goodput:
    """A config's statistical efficiency and goodput, each with a 95 % CI (None where an input has none).

    The efficiency's CI follows from the noise scale's (it is monotone in B_noise), with the noise scale's CI cut at
    0 (a negative noise scale is noise) and an unbounded upper end (`high` None, `low` not) taken as infinite. The
    goodput's CI multiplies the ends of the throughput's and the efficiency's CIs: wider than a joint interval would
    be, never narrower."""

    efficiency: float
    efficiency_low: float | None
    efficiency_high: float | None
    goodput: float
    goodput_low: float | None
    goodput_high: float | None

    @classmethod
    def of(
        cls,
        noise: NoiseScale,
        batch: int,
        baseline_batch: int,
        throughput: float,
        throughput_low: float | None = None,
        throughput_high: float | None = None,
    ) -> Goodput:
        value = statistical_efficiency(max(noise.value, 0.0), batch, baseline_batch)
        low = high = None
        if noise.low is not None:
            upper = math.inf if noise.high is None else noise.high
            ends = sorted(statistical_efficiency(max(b, 0.0), batch, baseline_batch) for b in (noise.low, upper))
            low, high = ends
        both = low is not None and throughput_low is not None and throughput_high is not None
        return cls(
            value,
            low,
            high,
            throughput * value,
            throughput_low * low if both else None,
            throughput_high * high if both else None,
        )
