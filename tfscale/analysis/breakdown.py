"""Where the efficiency went: the gap to ideal scaling split into exposed communication, stragglers, input wait,
compute growth and the rest. Pure pandas, no TensorFlow."""

from __future__ import annotations

import math

import pandas as pd

from tfscale import metrics as m
from tfscale.analysis.comm import exposed_comm
from tfscale.analysis.keys import MEASUREMENT_KEY, _number, baseline_key, by_measurement, measurement_key
from tfscale.stats.core import median
from tfscale.stats.repeats import offsets_of, samples_of  # samples: per process for configs run with repeats
from tfscale.stats.uncertainty import Interval, of_medians

BREAKDOWN_METHOD = (
    "gap = measured median step - ideal step (strong: T1/N, weak: T1, with T1 the baseline's median step); "
    "exposed communication = comm_time_exposed_s (fused - compute-only step), 0 where its 95 % CI reaches 0 "
    "(within noise), empty where it was not measured or its CI lies wholly below 0 (the method does not apply: a "
    "communication time cannot be negative), and then it stays in the rest; straggler wait = slowest rank's "
    "median step - median of the ranks' medians (multi-worker only, else 0); input wait = the config's "
    "input_wait_time_s minus the ideal step's share of the baseline's (strong: 1/N of it, weak: all of it), each "
    "0 within noise, the difference at least 0 (synthetic data held in memory: 0, never waited on); "
    "compute growth = the compute-only step (comm_breakdown: forward and backward of every replica, no "
    "all-reduce, no optimizer update) - the ideal step, where it was timed, at least 0 and at most what the gap "
    "leaves after the terms before (replicas sharing cores, or each replica's work growing; the ideal holds the "
    "update, so it is the growth's lower end); rest = gap - the others (dispatch, overheads; where the compute-only "
    "step was not timed, its growth too). Fractions are of the measured step, and gap_fraction = the sum of the "
    "five. CIs: bootstrap of the medians of the config's and the baseline's windows (gap)."
)


def input_wait(row: pd.Series) -> float:
    """The input wait per step a breakdown counts (s): input_wait_time_s, 0 where it is not measured (synthetic
    data) or its 95 % CI reaches 0 (within noise: the step fed from memory was as fast)."""
    wait, low = _number(row.get(m.INPUT_WAIT_TIME_S)), _number(row.get(m.INPUT_WAIT_TIME_CI95_LOW_S))
    return 0.0 if wait is None or low is None or low <= 0 else wait


# Each term of the loss breakdown and its share of the step.
BREAKDOWN_FRACTIONS = {
    m.COMM_EXPOSED_S: m.COMM_EXPOSED_FRACTION,
    m.STRAGGLER_WAIT_S: m.STRAGGLER_WAIT_FRACTION,
    m.INPUT_WAIT_S: m.INPUT_WAIT_FRACTION,
    m.COMPUTE_GROWTH_S: m.COMPUTE_GROWTH_FRACTION,
    m.REST_S: m.REST_FRACTION,
}


def loss_breakdown(frame: pd.DataFrame) -> pd.DataFrame:
    """Where each multi-device config's step time went beyond the ideal one; `frame` has gone through
    add_scaling. The five terms add up to the gap exactly (the rest is defined as what the others leave)."""
    rows_by_key = by_measurement(frame)
    rows = []
    for _, r in frame.iterrows():
        base = rows_by_key.get(baseline_key(r))
        if r[m.STATUS] != m.STATUS_OK or int(r[m.DEVICES]) < 2 or base is None:
            continue
        step, t1, n = float(r[m.STEP_TIME_MEDIAN_S]), float(base[m.STEP_TIME_MEDIAN_S]), int(r[m.DEVICES])
        per = 1.0 / n if r[m.SCALING] == "strong" else 1.0
        ideal = t1 * per
        gap = step - ideal
        comm, comm_note = exposed_comm(r)
        ranks = r.get(m.RANK_STEP_TIME_MEDIAN_S)
        straggler = max(ranks) - median(ranks) if isinstance(ranks, list) and len(ranks) > 1 else 0.0
        waited = max(0.0, input_wait(r) - per * input_wait(base))  # the baseline's wait is in the ideal
        terms = {m.COMM_EXPOSED_S: comm, m.STRAGGLER_WAIT_S: straggler, m.INPUT_WAIT_S: waited}
        compute = _number(r.get(m.COMPUTE_TIME_S))
        left = gap - _known_sum(terms.values())
        terms[m.COMPUTE_GROWTH_S] = 0.0 if compute is None else max(0.0, min(compute - ideal, left))
        terms[m.REST_S] = gap - _known_sum(terms.values())  # holds the communication where it was not measured
        base_samples = samples_of(base)
        gap_ci = of_medians(
            [samples_of(r), base_samples], lambda t, b, per=per: t - b * per, [offsets_of(r), offsets_of(base)]
        )
        rows.append(
            {
                **dict(zip(MEASUREMENT_KEY, measurement_key(r), strict=True)),
                m.MODEL: r[m.MODEL],
                m.STRATEGY: r[m.STRATEGY],
                m.DEVICES: n,
                m.SCALING: r[m.SCALING],
                m.STEP_TIME_MEDIAN_S: step,
                m.IDEAL_STEP_S: ideal,
                m.GAP_S: gap,
                m.GAP_CI95_LOW_S: _low(gap_ci),
                m.GAP_CI95_HIGH_S: _high(gap_ci),
                **terms,
                m.COMM_EXPOSED_NOTE: comm_note,
                m.GAP_FRACTION: gap / step,
                **{BREAKDOWN_FRACTIONS[name]: value / step for name, value in terms.items()},
            }
        )
    return pd.DataFrame(rows)


def _known_sum(values) -> float:
    """The sum of the terms that were measured (an unmeasured one is NaN: it stays in the rest)."""
    return sum(v for v in values if not math.isnan(v))


def _low(interval: Interval | None) -> float:
    return math.nan if interval is None else interval.low


def _high(interval: Interval | None) -> float:
    return math.nan if interval is None else interval.high
