"""Scaling history (`tfscale history RESULTS_DIR/<suite>`, `tfscale.history`): every run of a suite as a series per
machine, config and headline figure, in time order, with the steps stats.changepoints finds in it and what changed
between the runs on either side of each. Runs of different machines (compare.machine: CPU model and cores, memory,
GPU names) are never one series. Each run folder's figures are analysed once and kept beside its records
(figures.json, remade when the records or tfscale's code change). Pure pandas, parent side: no TF.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from tfscale import metrics as m
from tfscale.analysis import analyze, layout_label, throughput_interval
from tfscale.analysis.compare import MACHINE_KEYS, env_differences, machine
from tfscale.axes import SETTINGS
from tfscale.errors import ResultsError
from tfscale.labels import model_label, record_mode
from tfscale.measures.peaks import ENV_KEY as PEAK_ENV_KEY
from tfscale.stats.changepoints import METHOD, MIN_RUN, Point, find_steps
from tfscale.store.records import (
    FIGURES_FILE,
    RECORDS_FILE,
    find_records_files,
    load_env,
    load_results,
    read_json,
    write_json_atomic,
)
from tfscale.store.runfolder import read_plan

UNKNOWN_MACHINE = "unknown (no env.json)"


@dataclass(frozen=True)
class Figure:
    """A headline figure followed over runs: its column, its 95 % CI columns (None: none) and which way is better."""

    column: str
    label: str
    low: str | None
    high: str | None
    higher_is_better: bool

    def interval(self, row: pd.Series) -> tuple[float | None, float | None]:
        """The figure's 95 % CI in a record; throughput's from the step time's (analysis.throughput_interval)."""
        if self.column == m.THROUGHPUT_EXAMPLES_PER_S:
            low, high = throughput_interval(row)
            return _number(low), _number(high)
        return (_number(row.get(self.low)) if self.low else None, _number(row.get(self.high)) if self.high else None)


FIGURES = (
    Figure(m.THROUGHPUT_EXAMPLES_PER_S, "throughput", None, None, True),
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
LABEL, COMMIT = "label", "commit"  # a run's `tfscale run --label` and its suite's `git describe` (plan.json)
PREVIOUS_RUN = "previous_run"  # the run just before a step's first run in its series
CHANGES = "changes"  # what differs between those two runs (run_changes), "; "-joined
ALONG = "along"  # the config's other figures that step at the same run: "exposed comm +18.0%", ", "-joined
LATEST = "latest"  # the step starts in the suite's newest runs of its machine (what --fail-on-change gates on)
PENDING = "pending"  # the newest run alone is off the two before it: a change or an outlier, the next run tells


RUN_COLUMNS = [m.RUN_ID, m.STARTED_AT, MACHINE, LABEL, COMMIT]
STEP_COLUMNS = [MACHINE, m.CONFIG_ID, CONFIG, FIGURE, FIRST_RUN, PREVIOUS_RUN, m.STARTED_AT, ORDER, BEFORE, AFTER]
STEP_COLUMNS += [CHANGE, CHANGE_LOW, CHANGE_HIGH, WORSE, PENDING, LATEST]


@dataclass(frozen=True)
class History:
    series: pd.DataFrame  # one row per machine, config, figure and run: value and its 95 % CI
    steps: pd.DataFrame  # one row per step found (and per pending newest run): STEP_COLUMNS, LABEL, COMMIT, CHANGES,
    # ALONG
    runs: pd.DataFrame  # one row per run: run id, start time, machine, label, commit, order
    method: str = METHOD
    notes: list[str] = field(default_factory=list)  # run folders left out, and why

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


@dataclass(frozen=True)
class RunFigures:
    """One run folder's part of the history: when it started (its first config's start, ISO text; "" unknown) and
    one row per ok config and figure."""

    started_at: str
    rows: list[dict]


CACHE_VERSION = 1  # figures.json's layout: {"cache_version", "code", "records_sha256", "started_at", "rows"}


@functools.cache
def code_digest() -> str:
    """sha256 of tfscale's own Python source: a cache made by other code (another version, a local change to the
    analysis) is never read as this code's figures."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def figure_rows(frame: pd.DataFrame) -> list[dict]:
    """One row per ok config and headline figure it has: config id and text, figure, value, its 95 % CI."""
    ok = frame[frame[m.STATUS] == m.STATUS_OK]
    rows = []
    for _, row in ok.iterrows():
        text = config_text(row)
        for figure in FIGURES:
            value = _number(row.get(figure.column))
            if value is None:
                continue
            low, high = figure.interval(row)
            rows.append(
                {m.CONFIG_ID: row[m.CONFIG_ID], CONFIG: text, FIGURE: figure.label}
                | {VALUE: value, LOW: low, HIGH: high}
            )
    return rows


def run_figures(folder: Path) -> RunFigures:
    """A run folder's figures: from its figures.json where that was made from these very records by this code,
    else by analysing its records (tfscale.analysis, the step a history of many runs would repeat: ~0.15 s per 50
    configs) and kept in figures.json for the next time (skipped where the folder is read-only)."""
    records = folder / RECORDS_FILE
    digest = hashlib.sha256(records.read_bytes()).hexdigest()
    cached = read_json(folder / FIGURES_FILE)
    key = {"cache_version": CACHE_VERSION, "code": code_digest(), "records_sha256": digest}
    if isinstance(cached, dict) and all(cached.get(k) == v for k, v in key.items()) and _kept_ok(cached):
        return RunFigures(cached["started_at"], cached["rows"])
    frame = analyze(load_results(records))
    found = RunFigures(_text(frame[m.STARTED_AT].dropna().min()), figure_rows(frame))
    with contextlib.suppress(OSError):  # a read-only copy of the results: analysed again next time
        write_json_atomic(folder / FIGURES_FILE, key | {"started_at": found.started_at, "rows": found.rows})
    return found


ROW_KEYS = {m.CONFIG_ID: str, CONFIG: str, FIGURE: str, VALUE: float}


def _kept_ok(cached: dict) -> bool:
    """Whether a figures.json holds what this code writes (a damaged or foreign one is analysed again)."""
    rows = cached.get("rows")
    if not isinstance(cached.get("started_at"), str) or not isinstance(rows, list):
        return False
    figures = {figure.label for figure in FIGURES}
    return all(
        isinstance(row, dict)
        and all(isinstance(row.get(k), kind) for k, kind in ROW_KEYS.items())
        and row[FIGURE] in figures
        and all(row.get(k) is None or isinstance(row.get(k), float) for k in (LOW, HIGH))
        for row in rows
    )


def _text(value) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _number(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def ordered_runs(rows: list[dict]) -> pd.DataFrame:
    """The runs in order of their first config's start (then run id), numbered per machine (ORDER)."""
    runs = pd.DataFrame(rows, columns=RUN_COLUMNS)
    runs = runs.sort_values([m.STARTED_AT, m.RUN_ID], kind="stable").reset_index(drop=True)
    runs[ORDER] = runs.groupby(MACHINE).cumcount()
    return runs


def series_of(rows: list[dict], runs: pd.DataFrame) -> pd.DataFrame:
    """One row per machine, config, figure and run where the run has the figure (ok configs only)."""
    place = runs.set_index(m.RUN_ID)[[MACHINE, ORDER, m.STARTED_AT]]
    figures = pd.DataFrame(rows, columns=[m.RUN_ID, m.CONFIG_ID, CONFIG, FIGURE, VALUE, LOW, HIGH])
    series = figures.join(place, on=m.RUN_ID)
    series[ORDER] = series[ORDER].astype(int)
    columns = [MACHINE, m.CONFIG_ID, CONFIG, FIGURE, ORDER, m.RUN_ID, m.STARTED_AT, VALUE, LOW, HIGH]
    return series[columns].sort_values([MACHINE, CONFIG, FIGURE, ORDER], kind="stable").reset_index(drop=True)


def steps_of(series: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The steps of every series (figures <= 0 left out: the fit is on the log scale), and pending newest runs."""
    better = {f.label: f.higher_is_better for f in FIGURES}
    newest = runs.groupby(MACHINE)[ORDER].max()
    rows = []
    for (machine_text, config_id, figure), group in series.groupby([MACHINE, m.CONFIG_ID, FIGURE], sort=False):
        group = group[group[VALUE] > 0]
        values, lows, highs = (group[c].tolist() for c in (VALUE, LOW, HIGH))
        points = [Point(v, _number(lo), _number(hi)) for v, lo, hi in zip(values, lows, highs, strict=True)]
        fit = find_steps(points)
        found = [(s.index, s.before, s.after, s.change, s.change_low, s.change_high, False) for s in fit.steps]
        if fit.pending is not None:
            before = fit.levels[fit.pending - 1]
            after = points[fit.pending].value
            found.append((fit.pending, before, after, after / before - 1, None, None, True))
        for index, before, after, change, low, high, pending in found:
            first = group.iloc[index]
            rows.append(
                {
                    MACHINE: machine_text,
                    m.CONFIG_ID: config_id,
                    CONFIG: first[CONFIG],
                    FIGURE: figure,
                    FIRST_RUN: first[m.RUN_ID],
                    PREVIOUS_RUN: group.iloc[index - 1][m.RUN_ID],
                    m.STARTED_AT: first[m.STARTED_AT],
                    ORDER: int(first[ORDER]),
                    BEFORE: before,
                    AFTER: after,
                    CHANGE: change,
                    CHANGE_LOW: low,
                    CHANGE_HIGH: high,
                    WORSE: (change > 0) != better[figure],
                    PENDING: pending,
                    LATEST: int(first[ORDER]) >= newest[machine_text] - (MIN_RUN - 1),
                }
            )
    return pd.DataFrame(rows, columns=STEP_COLUMNS)


# Environment entries that differ between any two runs and say nothing about a step: when and where the
# environment was read, and the CPU peak measured anew each run (its own noise).
UNCHANGING_ENV = ("captured_at", "host", PEAK_ENV_KEY)


def along(steps: pd.DataFrame) -> list[str]:
    """Per step, the same config's other figures that step at the same first run (pending ones left out)."""
    found = []
    for index, row in steps.iterrows():
        same = (steps[MACHINE] == row[MACHINE]) & (steps[m.CONFIG_ID] == row[m.CONFIG_ID])
        same &= (steps[FIRST_RUN] == row[FIRST_RUN]) & (steps.index != index) & ~steps[PENDING].astype(bool)
        found.append(", ".join(f"{other[FIGURE]} {other[CHANGE]:+.1%}" for _, other in steps[same].iterrows()))
    return found


def run_changes(before: RunFacts, after: RunFacts, config_id: str) -> list[str]:
    """What differs between two runs for one config: the project commit and label, the environment (versions,
    drivers, runtime variables, hardware; not UNCHANGING_ENV) and the config's run settings (plan.json)."""
    lines = [
        f"{name}: {_shown(a)} -> {_shown(b)}"
        for name, a, b in ((COMMIT, before.commit, after.commit), (LABEL, before.label, after.label))
        if a != b
    ]
    for key, a, b in env_differences(before.env, after.env):
        if key.split(".")[0] not in UNCHANGING_ENV:
            lines.append(f"{key}: {_shown(a)} -> {_shown(b)}")
    a, b = before.settings.get(config_id, {}), after.settings.get(config_id, {})
    for name in SETTINGS:
        if name in a and name in b and a[name] != b[name]:
            lines.append(f"{name}: {_shown(a[name])} -> {_shown(b[name])}")
    return lines


def _shown(value) -> str:
    return "empty" if value is None or value == "" else str(value)


@dataclass(frozen=True)
class RunFacts:
    """What a run folder says about how it ran, beside its records: env.json, plan.json's label, commit and each
    config's settings."""

    folder: Path
    env: dict
    label: str | None
    commit: str | None
    settings: dict[str, dict]


def run_facts(folder: Path) -> RunFacts:
    plan = read_plan(folder) or {}
    specs = [spec for spec in plan.get("specs") or [] if isinstance(spec, dict)]
    settings = {spec.get("config_id"): {k: spec[k] for k in SETTINGS if k in spec} for spec in specs}
    return RunFacts(folder, load_env(folder), plan.get("label"), plan.get("commit"), settings)


def history(path: str | Path) -> History:
    """The history of the suite folder `path` (results/<suite>): its runs' series and the steps found in them. A run
    is a run folder, named by its path under `path` (its run id): the records' own run_id can repeat where folders
    were copied from another machine or results root."""
    suite_dir = Path(path)
    files = find_records_files(suite_dir)
    if not files:
        raise ResultsError(f"{suite_dir}: no {RECORDS_FILE} found")
    run_rows, figure_list, facts, notes = [], [], {}, []
    for records in files:
        folder = records.parent
        try:
            figures = run_figures(folder)
        except ResultsError as error:  # a run folder without a readable record: named, the others still count
            notes.append(f"left out: {error}")
            continue
        fact = run_facts(folder)
        run_id = folder.relative_to(suite_dir).as_posix() if folder != suite_dir else folder.name
        facts[run_id] = fact
        run_rows.append(
            {m.RUN_ID: run_id, m.STARTED_AT: figures.started_at, MACHINE: machine_key(fact.env)}
            | {LABEL: fact.label, COMMIT: fact.commit}
        )
        figure_list += [row | {m.RUN_ID: run_id} for row in figures.rows]
    runs = ordered_runs(run_rows)
    series = series_of(figure_list, runs)
    steps = steps_of(series, runs)
    changes = [
        "; ".join(run_changes(facts[row[PREVIOUS_RUN]], facts[row[FIRST_RUN]], row[m.CONFIG_ID]))
        for _, row in steps.iterrows()
    ]
    first = [facts[run_id] for run_id in steps[FIRST_RUN]]
    steps[LABEL] = pd.Series([fact.label for fact in first], index=steps.index, dtype=object)
    steps[COMMIT] = pd.Series([fact.commit for fact in first], index=steps.index, dtype=object)
    steps[CHANGES] = pd.Series(changes, index=steps.index, dtype=object)
    steps[ALONG] = pd.Series(along(steps), index=steps.index, dtype=object)
    return History(series, steps, runs, notes=notes)


def step_line(step: pd.Series) -> str:
    """'mlp/small mirrored 1 node x 2, efficiency: 0.61 -> 0.48 (-21.3 %, 95 % CI -25.0 to -17.1 %) from run r4
    (2026-12-09T10:00:00+00:00, commit v1.2-3-gabc1234, label nightly), with exposed comm +18.0%'."""
    ci = (
        "pending: the newest run alone, the next tells a change from an outlier"
        if step[PENDING]
        else f"95 % CI {step[CHANGE_LOW]:+.1%} to {step[CHANGE_HIGH]:+.1%}"
    )
    facts = [str(step[m.STARTED_AT])] if step[m.STARTED_AT] else []
    facts += [f"{name} {step.get(name)}" for name in (COMMIT, LABEL) if step.get(name)]
    when = f" ({', '.join(facts)})" if facts else ""
    worse = "worse" if step[WORSE] else "better"
    with_ = f", with {step[ALONG]}" if step.get(ALONG) else ""
    return (
        f"{step[CONFIG]}, {step[FIGURE]}: {step[BEFORE]:.4g} -> {step[AFTER]:.4g} ({step[CHANGE]:+.1%}, {ci}; "
        f"{worse}) from run {step[FIRST_RUN]}{when}{with_}"
    )
