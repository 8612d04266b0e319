"""Scaling history (`tfscale history RESULTS_DIR/<suite>`, `tfscale.history`): every run of a suite as a series per
machine, config and headline figure, in time order, with the steps tfscale.changepoints finds in it. Runs of
different machines (compare.machine: CPU model and cores, memory, GPU names) are never one series. Pure pandas,
parent side: no TF.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tfscale import metrics as m
from tfscale.analysis import analyze, layout_label
from tfscale.changepoints import METHOD, MIN_RUN, Point, find_steps
from tfscale.compare import MACHINE_KEYS, machine
from tfscale.labels import model_label, record_mode
from tfscale.store import load_env, load_results

UNKNOWN_MACHINE = "unknown (no env.json)"


@dataclass(frozen=True)
class Figure:
    """A headline figure followed over runs: its column, its 95 % CI columns (None: none) and which way is better."""

    column: str
    label: str
    low: str | None
    high: str | None
    higher_is_better: bool


THROUGHPUT_CI95_LOW, THROUGHPUT_CI95_HIGH = "_throughput_low", "_throughput_high"  # from the step time's CI
FIGURES = (
    Figure(m.THROUGHPUT_EXAMPLES_PER_S, "throughput", THROUGHPUT_CI95_LOW, THROUGHPUT_CI95_HIGH, True),
    Figure(m.SCALING_EFFICIENCY, "efficiency", m.SCALING_EFFICIENCY_CI95_LOW, m.SCALING_EFFICIENCY_CI95_HIGH, True),
    Figure(
        m.COMM_TIME_EXPOSED_S, "exposed comm", m.COMM_TIME_EXPOSED_CI95_LOW_S, m.COMM_TIME_EXPOSED_CI95_HIGH_S, False
    ),
    Figure(m.BUSBW_BYTES_PER_S, "busbw", m.BUSBW_CI95_LOW_BYTES_PER_S, m.BUSBW_CI95_HIGH_BYTES_PER_S, True),
    Figure(m.PEAK_MEMORY_BYTES, "peak memory", None, None, False),
)

# Columns of History.series and History.steps.
MACHINE, CONFIG, FIGURE, ORDER, VALUE, LOW, HIGH = "machine", "config", "figure", "order", "value", "low", "high"
FIRST_RUN, BEFORE, AFTER, CHANGE, CHANGE_LOW, CHANGE_HIGH, WORSE = (
    "first_run",
    "before",
    "after",
    "change",
    "change_ci95_low",
    "change_ci95_high",
    "worse",
)
LATEST = "latest"  # the step starts in the suite's newest runs of its machine (what --fail-on-change gates on)
PENDING = "pending"  # the newest run alone is off the two before it: a change or an outlier, the next run tells


@dataclass(frozen=True)
class History:
    series: pd.DataFrame  # one row per machine, config, figure and run: value and its 95 % CI
    steps: pd.DataFrame  # one row per step found (and per pending newest run)
    runs: pd.DataFrame  # one row per run: machine, order, run id, start time
    method: str = METHOD

    def failing(self) -> pd.DataFrame:
        """Steps for the worse that the newest runs of a machine start (or a newest run pending that way)."""
        if self.steps.empty:
            return self.steps
        return self.steps[self.steps[WORSE] & self.steps[LATEST]]


def machine_key(env: dict) -> str:
    """One text per machine: its hardware facts (compare.machine), or UNKNOWN_MACHINE without an environment."""
    if not env:
        return UNKNOWN_MACHINE
    facts = machine(env)
    return ", ".join(f"{key} {facts[key]}" for key in MACHINE_KEYS)


def config_text(row: pd.Series) -> str:
    return f"{model_label(row[m.MODEL], row.get(m.MODEL_SIZE))} {record_mode(row)} {layout_label(row)}"


def _runs(frame: pd.DataFrame, suite_dir: Path) -> pd.DataFrame:
    """Each run's machine and its place in time: runs in order of their first config's start (then run id)."""
    starts = frame.groupby(m.RUN_ID)[m.STARTED_AT].min() if m.STARTED_AT in frame else None
    rows = []
    for run_id in frame[m.RUN_ID].unique():
        started = starts.get(run_id) if starts is not None else None
        when = "" if started is None or (isinstance(started, float) and math.isnan(started)) else str(started)
        rows.append({m.RUN_ID: run_id, m.STARTED_AT: when, MACHINE: machine_key(load_env(suite_dir / str(run_id)))})
    runs = pd.DataFrame(rows, columns=[m.RUN_ID, m.STARTED_AT, MACHINE])
    runs = runs.sort_values([m.STARTED_AT, m.RUN_ID], kind="stable").reset_index(drop=True)
    runs[ORDER] = runs.groupby(MACHINE).cumcount()
    return runs


def _with_throughput_ci(frame: pd.DataFrame) -> pd.DataFrame:
    """Throughput's 95 % CI from the step time's (the same global batch: throughput = batch / step)."""
    batch = frame[m.GLOBAL_BATCH_SIZE].astype(float)
    low = batch / pd.to_numeric(frame.get(m.STEP_TIME_CI95_HIGH_S), errors="coerce")
    high = batch / pd.to_numeric(frame.get(m.STEP_TIME_CI95_LOW_S), errors="coerce")
    return frame.assign(**{THROUGHPUT_CI95_LOW: low, THROUGHPUT_CI95_HIGH: high})


def _number(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def series_of(frame: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per machine, config, figure and run where the run has the figure (ok configs only)."""
    ok = _with_throughput_ci(frame[frame[m.STATUS] == m.STATUS_OK])
    place = runs.set_index(m.RUN_ID)
    rows = []
    for _, row in ok.iterrows():
        run = place.loc[row[m.RUN_ID]]
        for figure in FIGURES:
            value = _number(row.get(figure.column))
            if value is None:
                continue
            low = _number(row.get(figure.low)) if figure.low else None
            high = _number(row.get(figure.high)) if figure.high else None
            rows.append(
                {
                    MACHINE: run[MACHINE],
                    m.CONFIG_ID: row[m.CONFIG_ID],
                    CONFIG: config_text(row),
                    FIGURE: figure.label,
                    ORDER: int(run[ORDER]),
                    m.RUN_ID: row[m.RUN_ID],
                    m.STARTED_AT: run[m.STARTED_AT],
                    VALUE: value,
                    LOW: low,
                    HIGH: high,
                }
            )
    columns = [MACHINE, m.CONFIG_ID, CONFIG, FIGURE, ORDER, m.RUN_ID, m.STARTED_AT, VALUE, LOW, HIGH]
    return pd.DataFrame(rows, columns=columns).sort_values([MACHINE, CONFIG, FIGURE, ORDER], kind="stable")


def steps_of(series: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The steps of every series (figures <= 0 left out: the fit is on the log scale), and pending newest runs."""
    better = {f.label: f.higher_is_better for f in FIGURES}
    newest = runs.groupby(MACHINE)[ORDER].max()
    rows = []
    for (machine_text, config_id, figure), group in series.groupby([MACHINE, m.CONFIG_ID, FIGURE], sort=False):
        group = group[group[VALUE] > 0]
        points = [Point(r[VALUE], _number(r[LOW]), _number(r[HIGH])) for _, r in group.iterrows()]
        fit = find_steps(points)
        found = [(s.index, s.before, s.after, s.change, s.change_low, s.change_high, False) for s in fit.steps]
        if fit.pending is not None:
            before = fit.levels[fit.pending - 1]
            after = points[fit.pending].value
            found.append((fit.pending, before, after, after / before - 1, None, None, True))
        for index, before, after, change, low, high, pending in found:
            first = group.iloc[index]
            up = change > 0
            rows.append(
                {
                    MACHINE: machine_text,
                    m.CONFIG_ID: config_id,
                    CONFIG: first[CONFIG],
                    FIGURE: figure,
                    FIRST_RUN: first[m.RUN_ID],
                    m.STARTED_AT: first[m.STARTED_AT],
                    ORDER: int(first[ORDER]),
                    BEFORE: before,
                    AFTER: after,
                    CHANGE: change,
                    CHANGE_LOW: low,
                    CHANGE_HIGH: high,
                    WORSE: up != better[figure],
                    PENDING: pending,
                    LATEST: int(first[ORDER]) >= newest[machine_text] - (MIN_RUN - 1),
                }
            )
    columns = [MACHINE, m.CONFIG_ID, CONFIG, FIGURE, FIRST_RUN, m.STARTED_AT, ORDER, BEFORE, AFTER, CHANGE]
    columns += [CHANGE_LOW, CHANGE_HIGH, WORSE, PENDING, LATEST]
    return pd.DataFrame(rows, columns=columns)


def history(path: str | Path) -> History:
    """The history of the suite folder `path` (results/<suite>): its runs' series and the steps found in them."""
    suite_dir = Path(path)
    frame = analyze(load_results(suite_dir))
    runs = _runs(frame, suite_dir)
    series = series_of(frame, runs)
    return History(series, steps_of(series, runs), runs)


def step_line(step: pd.Series) -> str:
    """'mlp/small mirrored 1 node x 2, efficiency: 0.61 -> 0.48 (-21.3 %, 95 % CI -25.0 to -17.1 %) from run r4
    (2026-12-09T10:00:00+00:00)'."""
    ci = (
        "pending: the newest run alone, the next tells a change from an outlier"
        if step[PENDING]
        else f"95 % CI {step[CHANGE_LOW]:+.1%} to {step[CHANGE_HIGH]:+.1%}"
    )
    when = f" ({step[m.STARTED_AT]})" if step[m.STARTED_AT] else ""
    worse = "worse" if step[WORSE] else "better"
    return (
        f"{step[CONFIG]}, {step[FIGURE]}: {step[BEFORE]:.4g} -> {step[AFTER]:.4g} ({step[CHANGE]:+.1%}, {ci}; "
        f"{worse}) from run {step[FIRST_RUN]}{when}"
    )
