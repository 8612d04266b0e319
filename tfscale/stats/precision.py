"""The rules that decide how long a config is measured: window calibration, warm-up until steady state, and
stopping at a target precision. Pure functions of the times seen so far (the worker's loop applies them), so each
rule has exact-value tests.

- Calibration (`window_steps: auto`): a window of w steps that lasted t < min_window_s grows to
  ceil(w x min_window_s / t x 1.2) steps (at most 10 x w per try, at least w + 1); a window that lasted at least
  min_window_s keeps its size. The 1.2 margin keeps a window above the minimum when the step time jitters.
  With a fixed `steps: N`, an auto window is cut to the largest divisor of N that leaves at least MIN_SAMPLES
  windows (one step per window where N < 2 x MIN_SAMPLES), so the N steps are all timed and give a median.
- Steady state (`warmup_steps: auto`): warm-up windows are grouped into blocks of at least STEADY_BLOCK_S; steady
  when the block medians of the last STEADY_SPAN_S show no trend beyond STEADY_DRIFT per second: the least-squares
  slope of their logarithms against time (block index x STEADY_BLOCK_S), less 1.96 of its standard errors, is
  within STEADY_DRIFT; bounded by max_warmup_s. A trend, not a spread: "the last 3 blocks within 5 %" passed any
  drift slower than ~25 %/s after 0.3 s, and a warm-up decaying as +30 % exp(-t / 2 s) biased the timed median by
  +9.5 %. Blocks, not single windows: a 2 ms window jitters by more than 5 % on its own, and the median of a block
  ignores the odd interrupted one.
- Drift of the timed windows (`window_drift`): the median of their last third over that of their first, - 1; the
  analysis flags one beyond DRIFT_FLAG whose thirds' 95 % CIs do not overlap (a trend the median's CI ignores).
- Stopping (`steps: auto`): after at least STOP_MIN_SAMPLES windows, stop when the 95 % CI of the median per-step
  time (order statistics, their ranks from batch means for the windows' serial dependence: stats.median_ci) lies within
  +-target_ci of the median (its larger side, relative to the median), or when
  max_measure_s of timed windows have been spent (never before CI_MIN_WINDOWS windows, the fewest that give a
  95 % CI), or at MAX_SAMPLES windows. The CI is checked after every window up to CHECK_EVERY_UNTIL windows, then
  every n / CHECK_SPACING windows (sorting 2000 samples after each 2 ms window would cost more than the window).
  STOP_MIN_SAMPLES is 60, not 10 or 20, because stopping when a CI is narrow ("optional stopping") makes it
  optimistic, most where batch means see few windows a batch: the median CI splits 20 windows into 4 batches of 5,
  about the correlation time of AR(1) 0.6 windows ((1 + rho) / (1 - rho) = 4), so a chance low spread between
  batches both stops the windows and narrows the CI. Simulated (tests/benchmarks/bench_coverage.py, 2,000 trials
  each, AR(1) 0.6 windows), the stopped CI covered 0.86 from 20 windows, 0.91 from 30, 0.93 from 40 and 0.95 from
  60 (batches of 15); independent windows 0.95-0.97 throughout. Level shifts that outlast the measurement (stays
  of 20 windows) only a second process can see: 0.72 from 20 windows, 0.83 from 60 (the run's pooled spread
  between processes covers them: repeats). Real windows reach +-2 % after 100-400 windows (their spread is
  ~13 %), so the floor costs a real run nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from tfscale import metrics as m
from tfscale.axes import AUTO
from tfscale.stats.core import CI_MIN_WINDOWS, Z_975, StepStats, median

CALIBRATION_MARGIN = 1.2
GROWTH_CAP = 10
STEADY_SPAN_S = 1.0
STEADY_DRIFT = 0.05  # relative change per second
STEADY_BLOCK_S = 0.1
DRIFT_FLAG = 0.02
CHECK_EVERY_UNTIL = 100
CHECK_SPACING = 50
MIN_SAMPLES = 10
STOP_MIN_SAMPLES = 60
MAX_SAMPLES = 2000

# Why the timed windows stopped (record column measure_stop) and why the warm-up did (warmup_stop).
STOP_TARGET = "target_ci met"
STOP_BUDGET = "max_measure_s spent"
STOP_MAX_SAMPLES = f"{MAX_SAMPLES} windows"
STOP_FIXED = "fixed steps"
WARMUP_STEADY = (
    f"steady: no trend beyond {STEADY_DRIFT:.0%}/s in the {STEADY_BLOCK_S:g} s block medians of the last "
    f"{STEADY_SPAN_S:g} s"
)
WARMUP_BUDGET = "max_warmup_s spent before steady state"
WARMUP_FIXED = "fixed warmup_steps"


def is_auto(value: object) -> bool:
    return value == AUTO


def calibrated_window_steps(steps: int, window_s: float, min_window_s: float) -> int:
    """Steps per window so that a window lasts >= min_window_s, from a window of `steps` steps that took
    `window_s` seconds (see the module)."""
    if window_s >= min_window_s:
        return steps
    if window_s <= 0:
        return steps * GROWTH_CAP
    wanted = math.ceil(steps * min_window_s / window_s * CALIBRATION_MARGIN)
    return max(steps + 1, min(wanted, steps * GROWTH_CAP))


def fixed_steps_window(steps: int, wanted: int) -> int:
    """The auto window under a fixed `steps`: the largest divisor of `steps` that is <= `wanted` and leaves at
    least MIN_SAMPLES windows (1 where none does)."""
    cap = min(wanted, steps // MIN_SAMPLES)
    return next((w for w in range(cap, 1, -1) if steps % w == 0), 1)


@dataclass(frozen=True)
class Trend:
    """Least-squares slope of log(value) against time: relative change per second, and its standard error."""

    slope_per_s: float
    stderr_per_s: float


def trend(values: list[float], spacing_s: float) -> Trend:
    """The Trend of positive `values` taken every `spacing_s` seconds (at least three values)."""
    n = len(values)
    if n < 3:
        raise ValueError("a trend needs three values")
    times = [i * spacing_s for i in range(n)]
    logs = [math.log(v) for v in values]
    mean_t, mean_y = sum(times) / n, sum(logs) / n
    sxx = sum((t - mean_t) ** 2 for t in times)
    slope = sum((t - mean_t) * (y - mean_y) for t, y in zip(times, logs, strict=True)) / sxx
    residual = sum((y - mean_y - slope * (t - mean_t)) ** 2 for t, y in zip(times, logs, strict=True))
    return Trend(slope, math.sqrt(residual / (n - 2) / sxx))


def steady(block_medians: list[float], block_s: float = STEADY_BLOCK_S) -> bool:
    """True when the block medians of the last STEADY_SPAN_S show no trend beyond STEADY_DRIFT per second (see the
    module): |slope| - 1.96 standard errors <= STEADY_DRIFT."""
    span = max(3, round(STEADY_SPAN_S / block_s))
    if len(block_medians) < span:
        return False
    found = trend(block_medians[-span:], block_s)
    return abs(found.slope_per_s) - Z_975 * found.stderr_per_s <= STEADY_DRIFT


def window_drift(samples: list[float]) -> float | None:
    """median(last third) / median(first third) - 1 of the timed windows in time order; None below 3 x
    CI_MIN_WINDOWS windows (a third needs a CI of its own to be compared)."""
    third = len(samples) // 3
    if third < CI_MIN_WINDOWS:
        return None
    return median(samples[-third:]) / median(samples[:third]) - 1.0


def drift_beyond_noise(samples: list[float]) -> bool:
    """The timed windows drifted: beyond DRIFT_FLAG, and the first and last thirds' 95 % CIs do not overlap."""
    drift = window_drift(samples)
    if drift is None or abs(drift) <= DRIFT_FLAG:
        return False
    third = len(samples) // 3
    first, last = StepStats.from_samples(samples[:third]), StepStats.from_samples(samples[-third:])
    return first.ci95_high < last.ci95_low or last.ci95_high < first.ci95_low


@dataclass
class Blocks:
    """Warm-up windows grouped into blocks of at least `block_s` seconds, each block's median per-step time."""

    block_s: float = STEADY_BLOCK_S
    medians: list[float] = field(default_factory=list)
    current: list[float] = field(default_factory=list)
    current_s: float = 0.0

    def add(self, per_step_s: float, window_s: float) -> None:
        self.current.append(per_step_s)
        self.current_s += window_s
        if self.current_s >= self.block_s:
            self.medians.append(median(self.current))
            self.current, self.current_s = [], 0.0


def check_due(windows: int) -> bool:
    """Whether the stopping rule is checked after this many timed windows (every one up to CHECK_EVERY_UNTIL,
    then every windows // CHECK_SPACING). The same on every rank: ranks take the same windows."""
    return windows <= CHECK_EVERY_UNTIL or windows % (windows // CHECK_SPACING) == 0


def half_width_rel(median: float, low: float | None, high: float | None) -> float | None:
    """The larger side of a CI around `median`, relative to it: max(median - low, high - median) / median; None
    without a CI."""
    if low is None or high is None or median <= 0:
        return None
    return max(median - low, high - median) / median


def ci_half_width_rel(samples: list[float]) -> float | None:
    """half_width_rel of the samples' median and its order-statistic 95 % CI; None below CI_MIN_WINDOWS samples
    (no distribution-free CI exists)."""
    stats = StepStats.from_samples(samples)
    return half_width_rel(stats.median, stats.ci95_low, stats.ci95_high)


def stop_reason(samples: list[float], spent_s: float, target_ci: float, max_measure_s: float) -> str | None:
    """Why the timed windows stop now (`steps: auto`), or None to take another window. `spent_s`: seconds of timed
    windows so far."""
    n = len(samples)
    if n >= MAX_SAMPLES:
        return STOP_MAX_SAMPLES
    if n >= STOP_MIN_SAMPLES:
        width = ci_half_width_rel(samples)
        if width is not None and width <= target_ci:
            return STOP_TARGET
    if n >= CI_MIN_WINDOWS and spent_s >= max_measure_s:
        return STOP_BUDGET
    return None


@dataclass(frozen=True)
class Precision:
    """The precision columns of a record (metrics: CI_TARGET, CI_MET, CI_HALF_WIDTH_REL, SAMPLES, WINDOW_DRIFT_REL)."""

    ci_target: float | None  # None in records from before the precision settings
    ci_met: bool  # the 95 % CI of the median lies within +-ci_target (False where no CI exists)
    ci_half_width_rel: float | None  # None below CI_MIN_WINDOWS samples
    samples: int
    window_drift_rel: float | None = None  # window_drift of one process's windows; None for combined processes

    @classmethod
    def of_interval(
        cls, median: float, low: float | None, high: float | None, samples: int, target_ci: float | None
    ) -> Precision:
        """From a median and its 95 % CI (however it was found) and the number of samples behind it."""
        width = half_width_rel(median, low, high)
        return cls(target_ci, width is not None and target_ci is not None and width <= target_ci, width, samples)

    @classmethod
    def of(cls, samples: list[float], target_ci: float) -> Precision:
        """From one process's samples: their median and its order-statistic CI."""
        stats = StepStats.from_samples(samples)
        found = cls.of_interval(stats.median, stats.ci95_low, stats.ci95_high, len(samples), target_ci)
        return replace(found, window_drift_rel=window_drift(samples))

    def columns(self) -> dict[str, object]:
        return {
            m.CI_TARGET: self.ci_target,
            m.CI_MET: self.ci_met,
            m.CI_HALF_WIDTH_REL: self.ci_half_width_rel,
            m.SAMPLES: self.samples,
            m.WINDOW_DRIFT_REL: self.window_drift_rel,
        }
