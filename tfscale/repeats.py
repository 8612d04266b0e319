"""A config measured in several fresh processes (`repeats: N`): its stored lines, one per process, combined into
one record. Pure (no pandas, no TensorFlow); `tfscale.store.load_results` applies it, so every reader (report,
compare, predict, export) sees one record per config.

Why fresh processes: the spread between processes (memory layout, thread placement, the machine's slow drift) is
usually larger than the spread within one, and a CI from one process's windows cannot see it (pyperf spreads its
values over 20 processes for this reason).

How the lines combine (all ok):
- step_times_s: every process's windows, one process after another; repeat_samples: how many each gave;
  repeat_medians_s: each process's median.
- step_time_median_s: the median of the per-process medians; its 95 % CI: hierarchical percentile bootstrap
  (processes resampled, then each chosen process's windows; tfscale.uncertainty), which covers the spread between
  processes; ci_half_width_rel and ci_met follow from it, ci_covers says so.
- mean, p10, p90 and MAD: of all windows together; timed_steps, samples and duration_s: sums; throughput: from the
  combined median.
- every other column (memory, communication, telemetry...): from the process whose median is the median one (the
  lower middle one for an even count), so those figures all come from one real process.
A process that did not end ok makes the config's record that process's (its status and reason, naming the repeat).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tfscale import metrics as m
from tfscale.precision import Precision
from tfscale.stats import StepStats, median
from tfscale.uncertainty import median_of, of_median

COVERS_WITHIN = "within one process (order statistics of its windows, widened for their serial dependence)"


def covers_between(processes: int) -> str:
    return f"between {processes} processes (hierarchical bootstrap)"


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


def combine(lines: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One record from the stored lines of one config's processes (see the module)."""
    lines = sorted(lines, key=lambda r: r.get(m.REPEAT) or 0)
    if len(lines) == 1:
        ok = lines[0].get(m.STATUS) == m.STATUS_OK
        return {**lines[0], m.REPEAT: None, m.CI_COVERS: COVERS_WITHIN if ok else None}
    failed = [r for r in lines if r.get(m.STATUS) != m.STATUS_OK]
    if failed:
        first = failed[0]
        why = first.get(m.REASON) or first.get(m.STATUS)
        return {**first, m.REASON: f"repeat {first.get(m.REPEAT) or 0} of {len(lines)}: {why}", m.REPEAT: None}
    groups = [list(r[m.STEP_TIMES_S]) for r in lines]
    medians = [median(group) for group in groups]
    order = sorted(range(len(lines)), key=lambda i: medians[i])
    middle = lines[order[(len(lines) - 1) // 2]]
    pooled = [value for group in groups for value in group]
    stats = StepStats.from_samples(pooled)
    combined = median_of(groups)  # the statistic the bootstrap below resamples: the median of the process medians
    interval = of_median(groups)
    low, high = (None, None) if interval is None else (interval.low, interval.high)
    precision = Precision.of_interval(combined, low, high, len(pooled), middle.get(m.CI_TARGET))
    throughput = middle[m.GLOBAL_BATCH_SIZE] / combined
    return {
        **middle,
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
        m.CI_COVERS: covers_between(len(lines)),
        m.TIMED_STEPS: sum(r.get(m.TIMED_STEPS) or 0 for r in lines),
        m.THROUGHPUT_EXAMPLES_PER_S: throughput,
        m.THROUGHPUT_PER_REPLICA_EXAMPLES_PER_S: throughput / middle[m.REPLICAS] if middle.get(m.REPLICAS) else None,
        m.DURATION_S: sum(r.get(m.DURATION_S) or 0.0 for r in lines),
        m.STARTED_AT: min(r.get(m.STARTED_AT) or "" for r in lines) or None,
        m.FINISHED_AT: max(r.get(m.FINISHED_AT) or "" for r in lines) or None,
    }


def combine_all(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records with each (run, config)'s process lines combined, in the order of each config's first line."""
    groups: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault((record.get(m.RUN_ID), record.get(m.CONFIG_ID)), []).append(record)
    return [combine(lines) for lines in groups.values()]
