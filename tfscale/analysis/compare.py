"""Compare two sweeps (BASE and NEW): per-config throughput and efficiency change, a significance test on the
step-time samples, regressions beyond a threshold, and the environment differences. Pure (pandas, no TF).

Verdicts come from processes only. A config measured in GATE_MIN_PROCESSES or more fresh processes on each side
(repeats) gets the 95 % CI of its throughput change from the per-process medians (Hodges-Lehmann shift of their
logarithms with its Mann-Whitney order-statistic CI, so the ratio new / base); it is a REGRESSION when that CI lies
wholly below -threshold, slower or faster when it lies wholly on one side of 0, else the same within noise. With
fewer processes a config gets no verdict, and says why: the windows of one process do not see the spread between
processes and runs (step medians of one config spread ~6.5 % between processes here, against ~2 % within one),
so a test on them flagged an unchanged commit (A/A) in 52-97 % of simulated pairs; and 3 against 3 process medians
can never reach significance (the smallest two-sided Mann-Whitney p is 0.1). Why 5: the Hodges-Lehmann CI needs
C >= 1 (5 and 5 give C = 3).

Also, for reading (not for verdicts): a two-sided Mann-Whitney U test on what the config was measured on (process
medians, else the windows of the one process on each side), normal approximation with tie and continuity
corrections, Benjamini-Hochberg q-values over the configs compared, and the Hodges-Lehmann step-time shift with its
95 % CI.

A gate must also see what it cannot compare: a config ok in BASE that failed or timed out in NEW, or is not in NEW
at all (`lost_configs`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from tfscale import metrics as m
from tfscale.analysis import add_scaling, layout_label
from tfscale.axes import AXES, SETTINGS
from tfscale.labels import model_label, record_mode
from tfscale.stats.drift import ENV_KEY as DRIFT_ENV_KEY
from tfscale.stats.ranktests import benjamini_hochberg, hodges_lehmann, mann_whitney
from tfscale.stats.repeats import HISTORY_ENV_KEY, process_medians

# env.json entries a run derives from the suite's earlier runs: not a difference of the machines
BETWEEN_RUNS_KEYS = (DRIFT_ENV_KEY, HISTORY_ENV_KEY)

ALPHA = 0.05
GATE_MIN_PROCESSES = 5
# What a config is when config ids differ (ids from an older scheme): the device and every config axis, derived from
# the registry (a hand-kept list of 14 matched a `data: files` config with its synthetic twin and a teacher-task
# config with its random one). A value an older record lacks is read as the axis's default.
MATCH_AXES = (m.DEVICE, *AXES)


TESTED_ON = "tested_on"  # what the test and the shift were computed on: ON_PROCESSES or ON_WINDOWS
ON_PROCESSES = "process medians"
ON_WINDOWS = "windows of one process per side"
NO_VERDICT_NOTE = (
    f"without a verdict: a verdict needs {GATE_MIN_PROCESSES} or more fresh processes per side, because the windows "
    "of one process do not see the spread between processes and runs, often the larger one (an unchanged commit "
    f"compared on windows was flagged as changed); repeats: {GATE_MIN_PROCESSES} in both runs gives each config one"
)


def compared_values(before: pd.Series, after: pd.Series) -> tuple[tuple[list[float], list[float]], str]:
    """The values a comparison tests: each process's median where both runs measured the config in two or more
    fresh processes (repeats), so the test sees the spread between processes; else each side's windows."""
    a, b = process_medians(before), process_medians(after)
    if a and b:
        return (a, b), ON_PROCESSES
    return (list(before[m.STEP_TIMES_S]), list(after[m.STEP_TIMES_S])), ON_WINDOWS


@dataclass(frozen=True)
class ThroughputChange:
    """The 95 % CI of NEW's throughput over BASE's, minus 1, from the process medians; or why there is none."""

    low: float | None
    high: float | None
    no_verdict: str | None  # why the config gets no verdict (None where the CI exists)


def throughput_change_ci(before: pd.Series, after: pd.Series) -> ThroughputChange:
    """From GATE_MIN_PROCESSES or more process medians per side: the Hodges-Lehmann CI of log(new / base step) turned
    into a throughput change (the same global batch on both sides: throughput ratio = base step / new step)."""
    a, b = process_medians(before), process_medians(after)
    if min(len(a), len(b)) < GATE_MIN_PROCESSES:
        return ThroughputChange(
            None,
            None,
            f"{len(a) or 1} and {len(b) or 1} process(es): a verdict needs {GATE_MIN_PROCESSES} or more on each "
            f"side (repeats: {GATE_MIN_PROCESSES} in both runs)",
        )
    shift = hodges_lehmann([math.log(x) for x in a], [math.log(x) for x in b])
    return ThroughputChange(math.exp(-shift.high) - 1.0, math.exp(-shift.low) - 1.0, None)


def _key(row: pd.Series) -> tuple:
    return tuple(_axis_value(row, name) for name in MATCH_AXES)


def _axis_value(row: pd.Series, name: str):
    """A row's value of an axis, its default where the row has none (a column older records lack, or empty)."""
    value = row.get(name)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return AXES[name].default if name in AXES else None
    return value


def _label_columns(row: pd.Series) -> dict:
    """What a person reads a config by: its model with size, its mode and its layout (tfscale.labels)."""
    return {
        m.MODEL: model_label(row[m.MODEL], row.get(m.MODEL_SIZE)),
        "mode": record_mode(row),
        "layout": layout_label(row),
    }


# What became of a config that was ok in BASE, when it is not ok in NEW.
LOST_MISSING = "missing"


@dataclass(frozen=True)
class Lost:
    """A config ok in BASE that NEW cannot be compared on: it failed or timed out there, or is missing."""

    config_id: str
    model: str  # model_label
    mode: str
    layout: str
    status: str  # the NEW record's status (failed, timeout) or LOST_MISSING
    reason: str | None  # the NEW record's reason

    def line(self) -> str:
        what = "MISSING in NEW" if self.status == LOST_MISSING else f"NEWLY {self.status.upper()}"
        why = f": {self.reason}" if self.reason else ""
        return f"{what}: {self.config_id} {self.model} {self.mode} {self.layout}{why}"


def latest_runs(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """One record per config: where a side holds several runs of a suite (`compare results/<suite> NEW`), each
    config's newest (by when it finished); and how many runs the side held. A config counted once per run was
    listed NEWLY FAILED once per run."""
    keys = [c for c in (m.SUITE, m.RUN_ID) if c in frame.columns]
    runs = frame.groupby(keys, dropna=False).ngroups if len(frame) and keys else min(len(frame), 1)
    if runs <= 1:
        return frame, runs
    order = frame.assign(_when=frame[m.FINISHED_AT].fillna("") if m.FINISHED_AT in frame else "")
    newest = order.sort_values(["_when", m.RUN_ID], kind="stable").groupby(m.CONFIG_ID, sort=False).tail(1)
    return newest.drop(columns="_when").sort_index(), runs


def lost_configs(base: pd.DataFrame, new: pd.DataFrame) -> list[Lost]:
    """Configs ok in BASE (matched in NEW by config_id, else by axes) that are not ok in NEW, in BASE's order."""
    by_id = {r[m.CONFIG_ID]: r for _, r in new.iterrows()}
    by_axes = {_key(r): r for _, r in new.iterrows()}
    lost = []
    for _, before in base[base[m.STATUS] == m.STATUS_OK].iterrows():
        after = by_id.get(before[m.CONFIG_ID])
        if after is None:
            after = by_axes.get(_key(before))
        if after is not None and after[m.STATUS] == m.STATUS_OK:
            continue
        labels = _label_columns(before)
        status = LOST_MISSING if after is None else str(after[m.STATUS])
        reason = None if after is None or pd.isna(after.get(m.REASON)) else str(after[m.REASON])
        lost.append(Lost(before[m.CONFIG_ID], labels[m.MODEL], labels["mode"], labels["layout"], status, reason))
    return lost


def pairs(base: pd.DataFrame, new: pd.DataFrame):
    """(before, after, matched_by) for each row of `new` that has a row in `base`: by config_id, else by axes."""
    by_id = {r[m.CONFIG_ID]: r for _, r in base.iterrows()}
    by_axes = {_key(r): r for _, r in base.iterrows()}
    for _, after in new.iterrows():
        before, matched = by_id.get(after[m.CONFIG_ID]), "config_id"
        if before is None:
            before, matched = by_axes.get(_key(after)), "axes"
        if before is not None:
            yield before, after, matched


def compare(base: pd.DataFrame, new: pd.DataFrame, threshold: float = 0.05) -> pd.DataFrame:
    """One row per config present in both (by config_id, else by axes), ok in both."""
    base, new = add_scaling(base), add_scaling(new)
    rows = []
    ok = m.STATUS_OK
    for before, after, matched in pairs(base[base[m.STATUS] == ok], new[new[m.STATUS] == ok]):
        (base_values, new_values), tested_on = compared_values(before, after)
        test = mann_whitney(base_values, new_values)
        shift = hodges_lehmann(base_values, new_values)
        change = after[m.THROUGHPUT_EXAMPLES_PER_S] / before[m.THROUGHPUT_EXAMPLES_PER_S] - 1.0
        base_step = before[m.STEP_TIME_MEDIAN_S]
        interval = throughput_change_ci(before, after)
        rows.append(
            {
                m.CONFIG_ID: after[m.CONFIG_ID],
                "matched_by": matched,
                **_label_columns(after),
                m.STRATEGY: after[m.STRATEGY],
                m.DEVICES: after[m.DEVICES],
                "base_throughput": before[m.THROUGHPUT_EXAMPLES_PER_S],
                "new_throughput": after[m.THROUGHPUT_EXAMPLES_PER_S],
                "throughput_change": change,
                "throughput_change_ci95_low": interval.low,
                "throughput_change_ci95_high": interval.high,
                "no_verdict": interval.no_verdict,
                "base_efficiency": before[m.SCALING_EFFICIENCY],
                "new_efficiency": after[m.SCALING_EFFICIENCY],
                "efficiency_change": after[m.SCALING_EFFICIENCY] - before[m.SCALING_EFFICIENCY],
                "step_time_ratio": after[m.STEP_TIME_MEDIAN_S] / before[m.STEP_TIME_MEDIAN_S],
                "shift_s": shift.estimate,
                "shift_ci95_low_s": shift.low,
                "shift_ci95_high_s": shift.high,
                "shift_rel": shift.estimate / base_step,
                "shift_ci95_low_rel": None if shift.low is None else shift.low / base_step,
                "shift_ci95_high_rel": None if shift.high is None else shift.high / base_step,
                TESTED_ON: tested_on,
                "mann_whitney_u": test.u,
                "p_value": test.p_value,
            }
        )
    return _verdicts(pd.DataFrame(rows), threshold)


# Every compared config gets one verdict.
VERDICT_REGRESSION = "REGRESSION"  # the throughput change's CI wholly below -threshold
VERDICT_SLOWER = "slower"  # its CI wholly below 0, not wholly beyond the threshold
VERDICT_FASTER = "faster"  # its CI wholly above 0
VERDICT_SAME = "same within noise"  # its CI contains 0
VERDICT_NONE = "no verdict"  # too few processes on a side for a CI that covers the spread between them


def verdict(low: float | None, high: float | None, threshold: float) -> str:
    """The answer for a compared config (VERDICT_*) from the 95 % CI of its throughput change."""
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return VERDICT_NONE
    if high < -threshold:
        return VERDICT_REGRESSION
    if high < 0:
        return VERDICT_SLOWER
    return VERDICT_FASTER if low > 0 else VERDICT_SAME


def _verdicts(rows: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """q-values over all compared configs (Benjamini-Hochberg, for reading), and each one's verdict."""
    if rows.empty:
        return rows.assign(q_value=[], significant=[], regression=[], improvement=[], verdict=[])
    rows["q_value"] = benjamini_hochberg(list(rows["p_value"]))
    rows["verdict"] = [
        verdict(low, high, threshold)
        for low, high in zip(rows["throughput_change_ci95_low"], rows["throughput_change_ci95_high"], strict=True)
    ]
    rows["significant"] = rows["verdict"].isin([VERDICT_REGRESSION, VERDICT_SLOWER, VERDICT_FASTER])
    rows["regression"] = rows["verdict"] == VERDICT_REGRESSION
    rows["improvement"] = rows["throughput_change_ci95_low"].astype(float) > threshold
    return rows


def p_text(p: float) -> str:
    """A p- or q-value in one fixed format: three decimals, '<0.001' below."""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


@dataclass(frozen=True)
class SettingDifference:
    """A run setting whose value differs between matched configs of BASE and NEW."""

    setting: str
    base: str  # BASE's values over those configs, comma-joined
    new: str
    configs: int  # matched configs where it differs
    timing: bool  # it changes what the timed steps measure (axes.Axis.timing): the gate refuses across it

    def line(self) -> str:
        return f"{self.setting}: {self.base} -> {self.new} ({self.configs} config(s))"


def _value(value) -> str:
    return "empty" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def setting_differences(
    base: pd.DataFrame, new: pd.DataFrame, settings: dict[tuple, dict[str, object]]
) -> list[SettingDifference]:
    """Per run setting, where matched configs (by config_id, else by axes) ran with other values. `settings`:
    (suite, run id, config id) -> every setting as run (store.runfolder.run_settings, from plan.json); a run that
    kept no plan gives the settings its records carry."""
    from tfscale.analysis import measurement_key

    recorded = [name for name, axis in SETTINGS.items() if axis.recorded]

    def of(row: pd.Series) -> dict[str, object]:
        return {name: row.get(name) for name in recorded} | settings.get(measurement_key(row), {})

    found: dict[str, tuple[set[str], set[str], int]] = {}
    for before, after, _ in pairs(base, new):
        a, b = of(before), of(after)
        for name in SETTINGS:
            if name in a and name in b and _value(a[name]) != _value(b[name]):
                olds, news, count = found.get(name, (set(), set(), 0))
                found[name] = (olds | {_value(a[name])}, news | {_value(b[name])}, count + 1)
    return [
        SettingDifference(name, ", ".join(sorted(o)), ", ".join(sorted(n)), count, SETTINGS[name].timing)
        for name, (o, n, count) in found.items()
    ]


# What makes two environments two machines (not a version or a host name: CI runners change names every job).
MACHINE_KEYS = ("cpu_model", "cpu_logical_cores", "cpu_physical_cores", "memory_total_bytes", "gpus")


def machine(env: dict) -> dict[str, str]:
    """The hardware an environment (env.json) ran on: CPU model and cores, memory, and its GPUs by name."""
    gpus = (env.get("nvml") or {}).get("gpus") or []
    names = sorted(str(g.get("name")) for g in gpus if isinstance(g, dict))
    facts = {key: env.get(key) for key in MACHINE_KEYS[:-1]} | {"gpus": ", ".join(names) or "none"}
    return {key: _value(value) for key, value in facts.items()}


def machine_differences(base: dict, new: dict) -> list[tuple[str, str, str]]:
    """(key, base, new) where the hardware differs; none where either run kept no environment."""
    if not base or not new:
        return []
    a, b = machine(base), machine(new)
    return [(key, a[key], b[key]) for key in MACHINE_KEYS if a[key] != b[key]]


def env_differences(base: dict, new: dict) -> list[tuple[str, str, str]]:
    """(key, base value, new value) for each flattened environment entry that differs (timestamps and the drift
    each run estimated from the runs before it ignored: neither is a difference of the machines or software)."""

    def flat(prefix: str, value) -> dict[str, str]:
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                out |= flat(f"{prefix}.{k}" if prefix else k, v)
            return out
        return {prefix: str(value)}

    a, b = flat("", base), flat("", new)
    keys = sorted(k for k in set(a) | set(b) if k != "captured_at" and k.split(".")[0] not in BETWEEN_RUNS_KEYS)
    return [(k, a.get(k, ""), b.get(k, "")) for k in keys if a.get(k, "") != b.get(k, "")]
