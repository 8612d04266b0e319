"""A config measured in several fresh processes (`repeats: N`): its stored lines, one per process, combined into
one record. Pure (no pandas, no TensorFlow); `tfscale.store.records.load_results` applies it, so every reader (report,
compare, predict, export) sees one record per config.

Why fresh processes: the spread between processes (memory layout, thread placement, the machine's slow drift) is
usually larger than the spread within one, and a CI from one process's windows cannot see it (pyperf spreads its
values over 20 processes for this reason).

How the lines combine (all ok):
- step_times_s: every process's windows, one process after another; repeat_samples: how many each gave;
  repeat_medians_s: each process's median.
- step_time_median_s: the median of the per-process medians; its 95 % CI: hierarchical percentile bootstrap
  (processes resampled, then each chosen process's windows; tfscale.stats.uncertainty), which covers the spread between
  processes; ci_half_width_rel and ci_met follow from it, ci_covers says so.
- mean, p10, p90 and MAD: of all windows together; timed_steps, samples and duration_s: sums; throughput: from the
  combined median.
- every other column (memory, communication, FLOPs, telemetry...): from the first process (repeat 0), so those
  figures all come from one real process. The later ones skip the extra measurements after their timed windows
  (communication breakdown, profile, FLOPs count: RunSpec.timing_only), which only the first one's record would
  keep: the quickstart's six second processes took 18.1 and 19.4 s so, against 23.9 and 24.7 s (two runs each side,
  alternating). Until 2026-12-07 these columns were the median process's (the lower middle one for an even
  count), and every process measured them.
A process that did not end ok makes the config's record that process's (its status and reason, naming the repeat).

The spread between processes, for every config of a run (`run_process_spread`): where some configs of a run ran
in two or more fresh processes, the variance of their log process medians beyond what each process's own CI
explains is pooled over them (degrees of freedom: the processes less one, summed) into one ProcessSpread, a
property of the machine and the run rather than of a config. Each config's step-time CI then covers it:
- one process: its order-statistic CI widened on the log scale, each side sqrt(side^2 + (t x sd)^2), t Student's
  0.975 quantile with the spread's degrees of freedom;
- several: the bootstrap of tfscale.stats.uncertainty with the process offset drawn from that spread.
Derived figures (efficiency, the loss breakdown's gap) draw the same offsets (analysis: offsets_of), with the drift
between runs where the suite's earlier runs on the machine measured it (tfscale.stats.drift). Without any config run
in several processes, a run's CIs cover within one process only, and say so.

Measured on 2 shared cores (tests/benchmarks/bench_coverage.py, 8 runs of the quickstart's 1- and 2-device
configs, 2026-12-07): the stated CI contained the other runs' median 67/72 = 0.93 of the time for the step time and
48/48 for the efficiency, a one-process CI alone 85/120 = 0.71; the runs' pooled spreads 0-24 % sd, the stated
step-time CIs +-28 % wide (median; IQR 18-49 %). A process's own variance is read from its CI with the t quantile
the CI was built with (t_975(3) = 3.18 for 60 windows in 4 batches, `_within_variance`): read with 1.96, as before
that day, it was 2.6 times too large, the spread between processes was floored at 0 in many runs, and 8 other runs
gave 56/72 = 0.78 (step time) and 44/48 (efficiency), 67/72 and 46/48 re-read with the t quantile. Simulated runs
of 17 configs stopped at +-2 % (bench_coverage, 58 runs each): 0.969 independent windows, 0.974 AR(1) 0.3, 0.968
AR(1) 0.6, 0.953 level shifts (+4 % for ~20 windows; 0.90-0.92 with 1.96). On a faster machine that evening, each
run's own spread (6 degrees of freedom, 0.0 % to 17.9 % sd from run to run) gave 60/72 = 0.83; pooled with the
suite's earlier runs on the machine (history_of, pooled) and with the drift from explained_variance, two sets of 8
runs gave 64/72 and 68/72 (0.92 together).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tfscale import metrics as m
from tfscale.stats.core import CI_MIN_WINDOWS, Z_975, StepStats, batch_count, excess_spread, median, t_975
from tfscale.stats.drift import RunDrift, step_log_variance, stored_estimate
from tfscale.stats.precision import Precision
from tfscale.stats.uncertainty import ProcessSpread, median_of, of_median

# env.json: the spread between processes of the suite's earlier runs on the machine, as the run began
# (tfscale.runner.drift); each ok record carries it as HISTORY_SPREAD_* and combine_all pools it with the run's own.
HISTORY_ENV_KEY = "process_spread_history"
HISTORY_COLUMNS = (m.HISTORY_SPREAD_SD_REL, m.HISTORY_SPREAD_DF, m.HISTORY_SPREAD_RUNS)

COVERS_WITHIN = (
    "within one process only (order statistics of its windows, batch means for their serial dependence); no config of "
    "the run or of the suite's earlier runs on this host ran in 2+ processes, so the spread between processes is in "
    "no CI"
)


def covers_between(processes: int) -> str:
    return f"between {processes} processes (hierarchical bootstrap); no spread pooled over the run"


def covers_spread(processes: int, spread: ProcessSpread) -> str:
    """ci_covers of a config whose CI includes the run's pooled process spread."""
    where = "its process's windows" if processes == 1 else f"its {processes} processes' windows"
    earlier = f" and those of the suite's {spread.earlier_runs} earlier runs on this host" * (spread.earlier_runs > 0)
    return (
        f"{where} and the spread between fresh processes (sd {spread.sd_log:.1%} with {spread.df} degrees of "
        f"freedom, pooled over the configs run in 2+ processes of this run{earlier})"
    )


def covers_drift(drift: RunDrift) -> str:
    """What ci_covers adds where a CI includes the drift between runs (tfscale.stats.drift)."""
    return (
        f"; and the drift between runs of this suite on this host (sd {drift.sd_log:.1%} with {drift.df} degrees "
        f"of freedom, from its {drift.runs} earlier runs)"
    )


def samples_of(record: Mapping[str, Any]) -> list[float] | list[list[float]]:
    """The record's step-time samples: a flat list for one process, one list per process for a combined record."""
    values = record.get(m.STEP_TIMES_S)
    if not isinstance(values, list | tuple):
        return []
    counts = record.get(m.REPEAT_SAMPLES)
    if not isinstance(counts, list | tuple) or len(counts) < 2 or sum(counts) != len(values):
        return list(values)
    groups, start = [], 0
    for count in counts:
        groups.append(list(values[start : start + count]))
        start += count
    return groups


def process_medians(record: Mapping[str, Any]) -> list[float]:
    """Each process's median step of a combined record (empty for a config measured in one process)."""
    medians = record.get(m.REPEAT_MEDIANS_S)
    return list(medians) if isinstance(medians, list | tuple) and len(medians) > 1 else []


def drift_of(record: Mapping[str, Any]) -> RunDrift | None:
    """The drift between runs a record's CI covers (None where its run had no history to estimate it from)."""
    sd, df, runs = (record.get(key) for key in (m.RUN_DRIFT_SD_REL, m.RUN_DRIFT_DF, m.RUN_DRIFT_RUNS))
    if not isinstance(sd, int | float) or not isinstance(df, int | float) or math.isnan(sd) or df < 1:
        return None
    return RunDrift(float(sd), int(df), int(runs) if isinstance(runs, int | float) and not math.isnan(runs) else 0)


def offsets_of(record: Mapping[str, Any]) -> tuple[ProcessSpread | RunDrift, ...]:
    """Every spread beyond its windows a record's figures carry: the run's process spread, the drift between runs
    (what derived figures' CIs draw: tfscale.stats.uncertainty.offset_factors)."""
    return tuple(part for part in (spread_of(record), drift_of(record)) if part is not None)


def spread_of(record: Mapping[str, Any]) -> ProcessSpread | None:
    """The run's process spread a combined record's CI covers (None where the run measured none)."""
    sd, df = record.get(m.PROCESS_SPREAD_SD_REL), record.get(m.PROCESS_SPREAD_DF)
    if not isinstance(sd, int | float) or not isinstance(df, int | float) or math.isnan(sd) or df < 1:
        return None
    return ProcessSpread(float(sd), int(df))


def _within_variance(line: Mapping[str, Any]) -> float:
    """The variance of the log of one process's median from its own CI: its larger side over the quantile the CI
    was built with (t_975 with its batch means' degrees of freedom, tfscale.stats.core.median_ci; Z_975 for a line
    that does not say how many windows it had), squared; 0 without a CI, which leaves more of the spread to the
    between-process term.

    Why the t quantile: a CI of 60 windows is 3.18 standard errors wide on each side (4 batches), not 1.96; dividing
    by 1.96 took (3.18 / 1.96)^2 = 2.6 times the process's own variance away from the spread between processes,
    which then was often floored at 0: a simulated run of level-shift windows (bench_coverage) had its stated CIs
    contain the true median 0.916 of the time, 0.953 with the t quantile (680 configs each)."""
    windows = line.get(m.SAMPLES)
    quantile = t_975(batch_count(windows) - 1) if isinstance(windows, int) and windows >= CI_MIN_WINDOWS else Z_975
    return step_log_variance(line, quantile)


def explained_variance(lines: Sequence[Mapping[str, Any]], spread: ProcessSpread | None) -> float:
    """The variance of a config's combined log median that its run accounts for, without the margins its CI adds
    for how well the run knew them (tfscale.stats.drift): its processes' own noise (each as run_process_spread
    reads it) over their number squared, plus the run's spread between processes for that many (`spread`, the
    pooled one its CI covers; ProcessSpread.offset_sd)."""
    k = len(lines)
    within = sum(_within_variance(line) for line in lines) / k**2
    return within + (0.0 if spread is None else spread.offset_sd(k) ** 2)


def run_process_spread(configs: Sequence[Sequence[Mapping[str, Any]]]) -> ProcessSpread | None:
    """The spread between processes pooled over a run's configs (each given as its process lines) that ran in two
    or more processes, all ok: sd^2 = sum over them of (k - 1) x (sample variance of the log process medians - the
    mean within-process variance), over the sum of (k - 1), floored at 0. None when no config qualifies."""
    qualified = [lines for lines in configs if all(line.get(m.STATUS) == m.STATUS_OK for line in lines)]
    found = excess_spread(
        [[(math.log(line[m.STEP_TIME_MEDIAN_S]), _within_variance(line)) for line in lines] for lines in qualified]
    )
    return None if found is None else ProcessSpread(found.sd, found.df)


def _widened(
    middle: float, low: float | None, high: float | None, parts: Sequence[ProcessSpread | RunDrift]
) -> tuple[float, float]:
    """One process's CI with each spread in `parts` added on each side, on the log scale (see the module)."""
    between = [t_975(part.df) * part.offset_sd(1) for part in parts]
    below = math.log(middle / low) if low else 0.0
    above = math.log(high / middle) if high else 0.0
    return middle * math.exp(-math.hypot(below, *between)), middle * math.exp(math.hypot(above, *between))


def _spread_columns(spread: ProcessSpread | None) -> dict[str, Any]:
    return {
        m.PROCESS_SPREAD_SD_REL: None if spread is None else spread.sd_log,
        m.PROCESS_SPREAD_DF: None if spread is None else spread.df,
    }


def _one_process(line: dict[str, Any], spread: ProcessSpread | None) -> dict[str, Any]:
    if line.get(m.STATUS) != m.STATUS_OK:
        return {**line, m.REPEAT: None, m.CI_COVERS: None}
    drift = drift_of(line)
    parts = [part for part in (spread, drift) if part is not None]
    covers = COVERS_WITHIN if spread is None else covers_spread(1, spread)
    covers += "" if drift is None else covers_drift(drift)
    if not parts:
        return {**line, m.REPEAT: None, m.CI_COVERS: covers, **_spread_columns(None)}
    middle = line[m.STEP_TIME_MEDIAN_S]
    low, high = line.get(m.STEP_TIME_CI95_LOW_S), line.get(m.STEP_TIME_CI95_HIGH_S)
    if low is not None and high is not None:
        low, high = _widened(middle, low, high, parts)
    precision = Precision.of_interval(middle, low, high, line.get(m.SAMPLES) or 0, line.get(m.CI_TARGET))
    return {
        **line,
        m.REPEAT: None,
        m.STEP_TIME_CI95_LOW_S: low,
        m.STEP_TIME_CI95_HIGH_S: high,
        m.CI_MET: precision.ci_met,  # the process's samples and window drift stay as it recorded them
        m.CI_HALF_WIDTH_REL: precision.ci_half_width_rel,
        m.CI_COVERS: covers,
        **_spread_columns(spread),
    }


def combine(lines: Sequence[dict[str, Any]], spread: ProcessSpread | None = None) -> dict[str, Any]:
    """One record from the stored lines of one config's processes (see the module); `spread`: the run's process
    spread (run_process_spread), which its CI then covers."""
    lines = sorted(lines, key=lambda r: r.get(m.REPEAT) or 0)
    if len(lines) == 1:
        return _one_process(lines[0], spread)
    failed = [r for r in lines if r.get(m.STATUS) != m.STATUS_OK]
    if failed:
        first = failed[0]
        why = first.get(m.REASON) or first.get(m.STATUS)
        return {**first, m.REASON: f"repeat {first.get(m.REPEAT) or 0} of {len(lines)}: {why}", m.REPEAT: None}
    groups = [list(r[m.STEP_TIMES_S]) for r in lines]
    medians = [median(group) for group in groups]
    first = lines[0]  # the process that measured every column (the module docstring)
    pooled = [value for group in groups for value in group]
    stats = StepStats.from_samples(pooled)
    combined = median_of(groups)  # the statistic the bootstrap below resamples: the median of the process medians
    drift = drift_of(first)  # every line of a run carries the same
    interval = of_median(groups, tuple(part for part in (spread, drift) if part is not None))
    low, high = (None, None) if interval is None else (interval.low, interval.high)
    precision = Precision.of_interval(combined, low, high, len(pooled), first.get(m.CI_TARGET))
    throughput = first[m.GLOBAL_BATCH_SIZE] / combined
    return {
        **first,
        m.REPEAT: None,
        m.STEP_TIMES_S: pooled,
        m.REPEAT_SAMPLES: [len(group) for group in groups],
        m.REPEAT_MEDIANS_S: medians,
        m.STEP_TIME_MEDIAN_S: combined,
        m.STEP_TIME_MEAN_S: stats.mean,
        m.STEP_TIME_P10_S: stats.p10,
        m.STEP_TIME_P90_S: stats.p90,
        m.STEP_TIME_MAD_S: stats.mad,
        m.STEP_TIME_CI95_LOW_S: low,
        m.STEP_TIME_CI95_HIGH_S: high,
        **precision.columns(),
        m.CI_COVERS: (covers_between(len(lines)) if spread is None else covers_spread(len(lines), spread))
        + ("" if drift is None else covers_drift(drift)),
        **_spread_columns(spread),
        m.TIMED_STEPS: sum(r.get(m.TIMED_STEPS) or 0 for r in lines),
        m.THROUGHPUT_EXAMPLES_PER_S: throughput,
        m.THROUGHPUT_PER_REPLICA_EXAMPLES_PER_S: throughput / first[m.REPLICAS] if first.get(m.REPLICAS) else None,
        m.DURATION_S: sum(r.get(m.DURATION_S) or 0.0 for r in lines),
        m.STARTED_AT: min(r.get(m.STARTED_AT) or "" for r in lines) or None,
        m.FINISHED_AT: max(r.get(m.FINISHED_AT) or "" for r in lines) or None,
    }


def valid_history(sd: Any, df: Any, runs: Any) -> ProcessSpread | None:
    """The earlier runs' spread from its three stored values (HISTORY_COLUMNS, or env.json's entry), or None where
    they are not one: missing, or an edited file (the run's CIs then pool no history, rather than the run stopping)."""
    found = stored_estimate(sd, df, runs, least_runs=1)
    return None if found is None else ProcessSpread(*found)


def history_of(lines: Iterable[Mapping[str, Any]]) -> ProcessSpread | None:
    """The spread between processes of the suite's earlier runs on the machine that a run's lines carry (the same
    on each: tfscale.runner.drift), or None."""
    for line in lines:
        found = valid_history(*(line.get(name) for name in HISTORY_COLUMNS))
        if found is not None:
            return found
    return None


def pooled(run: ProcessSpread | None, history: ProcessSpread | None) -> ProcessSpread | None:
    """A run's own spread between processes and its history's as one: variances weighted by their degrees of
    freedom (each already floored at 0), the degrees of freedom summed; either alone where the other is None."""
    if run is None or history is None:
        return run or history
    df = run.df + history.df
    variance = (run.df * run.sd_log**2 + history.df * history.sd_log**2) / df
    return ProcessSpread(math.sqrt(variance), df, history.earlier_runs)


def combine_all(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records with each (run, config)'s process lines combined, in the order of each config's first line."""
    groups: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault((record.get(m.RUN_ID), record.get(m.CONFIG_ID)), []).append(record)
    runs: dict[Any, list[list[dict[str, Any]]]] = {}
    for (run, _), lines in groups.items():
        runs.setdefault(run, []).append(lines)
    spreads = {
        run: pooled(run_process_spread(configs), history_of(line for lines in configs for line in lines))
        for run, configs in runs.items()
    }
    return [combine(lines, spreads[run]) for (run, _), lines in groups.items()]
