"""Scaling analysis on a records DataFrame: pure pandas, no TensorFlow.

Each config is compared with the 1-node, 1-device config of the same workload (model, size, precision, batch
policy and batch_size, jit, optimizer, device, data and its pipeline settings) in the same run:
- strong scaling (batch_policy "strong", global batch fixed): speedup = T1 / TN, efficiency = T1 / (N * TN),
  with T the median step time;
- weak scaling (batch_policy "weak", per-replica batch fixed): speedup = thr_N / thr_1,
  efficiency = thr_N / (N * thr_1), with thr the global throughput.
N is the total number of devices (nodes * devices_per_node).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from tfscale import formatting as fmt
from tfscale import labels
from tfscale import metrics as m
from tfscale.axes import AXES, DATA_AXES, DATA_FILES, DATA_SYNTHETIC, TASK_TEACHER, WORKLOAD_AXES
from tfscale.comm import exposed_not_measured
from tfscale.precision import DRIFT_FLAG, drift_beyond_noise
from tfscale.repeats import process_medians, samples_of, spread_of  # samples: per process for configs run with repeats
from tfscale.stats import median
from tfscale.uncertainty import Interval, of_medians, ratio_of_medians, scaled

# What identifies one measurement: a config in one run of one suite. A config id alone repeats when a suite runs
# twice (`tfscale report results/<suite>` of two runs looked configs up by it and crashed).
MEASUREMENT_KEY = (m.SUITE, m.RUN_ID, m.CONFIG_ID)
# What makes configs one workload, whose one-device config is the others' baseline: the run (a baseline comes from
# the same measurement session), the device and every axis that says what the work is, not how it is laid out
# (tfscale.axes.WORKLOAD_AXES: model and size, batch, precision, optimizer, task, data and its pipeline settings).
WORKLOAD_KEY = (m.SUITE, m.RUN_ID, m.DEVICE, *WORKLOAD_AXES)
HIGH_CV = 0.10  # MAD / median above this is flagged as high step-time variation


def workload_key(row: pd.Series) -> tuple:
    """What makes configs one workload (WORKLOAD_KEY), missing values as None."""
    return tuple(None if _missing(row.get(c)) else row.get(c) for c in WORKLOAD_KEY)


def measurement_key(row: pd.Series) -> tuple:
    """The row's MEASUREMENT_KEY."""
    return tuple(row.get(c) for c in MEASUREMENT_KEY)


def baseline_key(row: pd.Series) -> tuple:
    """The MEASUREMENT_KEY of the row's baseline (add_scaling picks it in the row's own suite and run)."""
    return (row.get(m.SUITE), row.get(m.RUN_ID), row.get(m.BASELINE_CONFIG_ID))


def by_measurement(frame: pd.DataFrame) -> dict[tuple, pd.Series]:
    """The rows of `frame` by their MEASUREMENT_KEY (one row per config and run: repeats are combined on load)."""
    return {measurement_key(row): row for _, row in frame.iterrows()}


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _baselines(frame: pd.DataFrame) -> dict[tuple, pd.Series]:
    """Per workload key, the ok 1-device 1-node record; OneDeviceStrategy preferred, else the first in order."""
    found: dict[tuple, pd.Series] = {}
    single = frame[(frame[m.STATUS] == m.STATUS_OK) & (frame[m.DEVICES] == 1)]
    for _, row in single.iterrows():
        key = workload_key(row)
        if key not in found or (row[m.STRATEGY] == "one_device" and found[key][m.STRATEGY] != "one_device"):
            found[key] = row
    return found


def add_scaling(frame: pd.DataFrame) -> pd.DataFrame:
    """Return a copy with scaling, speedup, scaling_efficiency, baseline_config_id, baseline_note, step_time_cv."""
    out = frame.copy()
    if m.DEVICES not in out.columns or out[m.DEVICES].isna().any():
        out[m.DEVICES] = out[m.NODES] * out[m.DEVICES_PER_NODE]
    baselines = _baselines(out)
    scaling, base_ids, notes = [], [], []
    columns: dict[str, list[float]] = {c: [] for c in SCALING_FIGURES}
    for _, row in out.iterrows():
        kind = "strong" if row[m.BATCH_POLICY] == "strong" else "weak"
        scaling.append(kind)
        base = baselines.get(workload_key(row))
        note = _why_no_figure(row, base)
        base_ids.append(None if base is None else base[m.CONFIG_ID])
        notes.append(note)
        figures = dict.fromkeys(SCALING_FIGURES, math.nan) if note else scaling_figures(row, base, kind)
        for column, value in figures.items():
            columns[column].append(value)
    out[m.SCALING] = scaling
    for column, values in columns.items():
        out[column] = pd.Series(values, index=out.index, dtype="float64")
    out[m.BASELINE_CONFIG_ID] = base_ids
    out[m.BASELINE_NOTE] = notes
    median = pd.to_numeric(out[m.STEP_TIME_MEDIAN_S], errors="coerce")
    out[m.STEP_TIME_CV] = pd.to_numeric(out[m.STEP_TIME_MAD_S], errors="coerce") / median
    out[m.ACHIEVED_FLOPS_PER_S] = achieved_flops(out)
    out[m.MFU] = out[m.ACHIEVED_FLOPS_PER_S] / (_numeric(out, m.DEVICES) * _numeric(out, m.PEAK_FLOPS_PER_S))
    out[m.JOULES_PER_EXAMPLE], out[m.COST_PER_MILLION_EXAMPLES] = energy_and_cost(out)
    return add_goodput(out, baselines)


GOODPUT_COLUMNS = (
    m.NOISE_SCALE_USED,
    m.STATISTICAL_EFFICIENCY,
    m.STATISTICAL_EFFICIENCY_CI95_LOW,
    m.STATISTICAL_EFFICIENCY_CI95_HIGH,
    m.GOODPUT_EXAMPLES_PER_S,
    m.GOODPUT_CI95_LOW_EXAMPLES_PER_S,
    m.GOODPUT_CI95_HIGH_EXAMPLES_PER_S,
    m.GOODPUT_SCALING_EFFICIENCY,
)

GOODPUT_METHOD = (
    "Gradient noise scale B_simple = tr(Sigma) / |G|^2 measured in the training step of synchronous configs with 2+ "
    "replicas (McCandlish et al. 2018: each replica's gradient before the all-reduce and the all-reduced one are two "
    "batch sizes; with grad_noise: true one replica uses its batch's two halves; grad_noise_method says more), during "
    "the first seconds of training on the teacher task. On the mlp it predicted the ratio of steps to a target loss "
    "at batches 32 and 512 6 % low with plain SGD (95 % CI -13 to +3 %, 10 seeds) and 22 % low with momentum 0.9 "
    "(docs/goodput.md): with momentum read statistical_efficiency as conservative. "
    "statistical_efficiency = (B_noise + B0) / (B_noise + B) with B the config's global batch and B0 its baseline's "
    "(Pollux, OSDI 2021), B_noise the config's own estimate or else the median of its workload's; goodput = "
    "throughput x statistical_efficiency; goodput_scaling_efficiency = goodput / (N x the baseline's throughput). "
    "The critical batch size of a workload is about its noise scale: past it, a bigger batch buys little progress. "
    "The noise scale is empty where its |G|^2 estimate summed to <= 0 (signal below noise), its CI where fewer than "
    "8 windows held a probed step, and its CI's high end alone where that end is unbounded (|G|^2 not resolved from "
    "0: the efficiency's high end is then 1); grad_noise_method says which."
)


def throughput_interval(row: pd.Series) -> tuple[float | None, float | None]:
    """Throughput's 95 % CI from the median step's: throughput x step / the CI's high and low ends (throughput is
    examples per median step, whether the global batch or, for ParameterServer, the examples completed)."""
    columns = (m.STEP_TIME_CI95_LOW_S, m.STEP_TIME_CI95_HIGH_S, m.STEP_TIME_MEDIAN_S)
    low, high, step = (_number(row.get(c)) for c in columns)
    if low is None or high is None or step is None or low <= 0:
        return None, None
    per_step = float(row[m.THROUGHPUT_EXAMPLES_PER_S]) * step
    return per_step / high, per_step / low


def add_goodput(out: pd.DataFrame, baselines: dict[tuple, pd.Series]) -> pd.DataFrame:
    """The goodput columns (GOODPUT_COLUMNS) of every ok teacher-task config with a baseline; empty elsewhere."""
    from tfscale.goodput import Goodput, NoiseScale

    own = _numeric(out, m.GRAD_NOISE_SCALE)
    keys = out.apply(workload_key, axis=1) if len(out) else pd.Series(dtype=object)
    pooled = {key: own[keys == key].median() for key in set(keys)}  # NaN where no config of the workload measured
    values: dict[str, list] = {c: [] for c in GOODPUT_COLUMNS}
    for index, row in out.iterrows():
        base = baselines.get(keys[index])
        figures = dict.fromkeys(GOODPUT_COLUMNS, math.nan)
        teacher = row.get(m.TASK) == TASK_TEACHER and row[m.STATUS] == m.STATUS_OK and base is not None
        mine = not math.isnan(own[index])
        noise = own[index] if mine else pooled.get(keys[index], math.nan)
        if teacher and not math.isnan(noise):
            scale = NoiseScale(
                noise,
                _number(row.get(m.GRAD_NOISE_SCALE_CI95_LOW)) if mine else None,
                _number(row.get(m.GRAD_NOISE_SCALE_CI95_HIGH)) if mine else None,
                0,
            )
            low, high = throughput_interval(row)
            result = Goodput.of(
                scale, int(row[m.GLOBAL_BATCH_SIZE]), int(base[m.GLOBAL_BATCH_SIZE]),
                float(row[m.THROUGHPUT_EXAMPLES_PER_S]), low, high,
            )  # fmt: skip
            figures = {
                m.NOISE_SCALE_USED: noise,
                m.STATISTICAL_EFFICIENCY: result.efficiency,
                m.STATISTICAL_EFFICIENCY_CI95_LOW: result.efficiency_low,
                m.STATISTICAL_EFFICIENCY_CI95_HIGH: result.efficiency_high,
                m.GOODPUT_EXAMPLES_PER_S: result.goodput,
                m.GOODPUT_CI95_LOW_EXAMPLES_PER_S: result.goodput_low,
                m.GOODPUT_CI95_HIGH_EXAMPLES_PER_S: result.goodput_high,
                m.GOODPUT_SCALING_EFFICIENCY: result.goodput
                / (int(row[m.DEVICES]) * float(base[m.THROUGHPUT_EXAMPLES_PER_S])),
            }
        for column in GOODPUT_COLUMNS:
            values[column].append(figures[column])
    for column, column_values in values.items():
        out[column] = pd.Series(column_values, index=out.index, dtype="float64")
    return out


def _numeric(frame: pd.DataFrame, name: str) -> pd.Series:
    """A column as floats: NaN where it is empty, and everywhere for records older than the column."""
    values = frame[name] if name in frame.columns else pd.Series(math.nan, index=frame.index)
    return pd.to_numeric(values, errors="coerce").astype("float64")


def energy_and_cost(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """joules_per_example and cost_per_million_examples of each config (tfscale.energy, which gives NaN for a
    missing figure: not measured, failed, no price)."""
    from tfscale.energy import cost_per_million_examples, joules_per_example

    joules, cost = [], []
    for _, row in frame.iterrows():
        throughput = row.get(m.THROUGHPUT_EXAMPLES_PER_S)
        joules.append(joules_per_example(row.get(m.ENERGY_J), row.get(m.ENERGY_WINDOW_S), throughput))
        cost.append(cost_per_million_examples(row.get(m.PRICE_PER_DEVICE_HOUR), int(row[m.DEVICES]), throughput))
    return pd.Series(joules, index=frame.index, dtype="float64"), pd.Series(cost, index=frame.index, dtype="float64")


def achieved_flops(frame: pd.DataFrame) -> pd.Series:
    """FLOP/s of each config: its FLOPs per example x its throughput (examples/s). Per example, not per step, so
    that ParameterServer configs, whose throughput counts completed examples, are measured the same way. Empty
    where flops_per_step is (not counted, or records older than the column)."""
    return (
        _numeric(frame, m.FLOPS_PER_STEP)
        / _numeric(frame, m.GLOBAL_BATCH_SIZE)
        * _numeric(frame, m.THROUGHPUT_EXAMPLES_PER_S)
    )


SCALING_FIGURES = (
    m.SPEEDUP,
    m.SPEEDUP_CI95_LOW,
    m.SPEEDUP_CI95_HIGH,
    m.SCALING_EFFICIENCY,
    m.SCALING_EFFICIENCY_CI95_LOW,
    m.SCALING_EFFICIENCY_CI95_HIGH,
)


def scaling_figures(row: pd.Series, base: pd.Series, kind: str) -> dict[str, float]:
    """Speedup and efficiency of `row` against `base`, each with its 95 % CI (tfscale.uncertainty).

    Both figures are the ratio of the baseline's median step to the config's, times a constant (strong: 1; weak:
    the ratio of examples per step, or of the throughputs the ranks reported): the CI is that of the ratio of
    medians, by bootstrap of the two sets of windows with each one's process offset (the run's spread between
    processes, where measured), scaled by the same constant. The baseline's own figures are 1 by definition, with
    no CI."""
    n = int(row[m.DEVICES])
    if kind == "strong":
        speedup = base[m.STEP_TIME_MEDIAN_S] / row[m.STEP_TIME_MEDIAN_S]
    else:
        speedup = row[m.THROUGHPUT_EXAMPLES_PER_S] / base[m.THROUGHPUT_EXAMPLES_PER_S]
    ratio = base[m.STEP_TIME_MEDIAN_S] / row[m.STEP_TIME_MEDIAN_S]
    interval = None  # the baseline against itself: 1 by definition, no CI applies
    if measurement_key(row) != measurement_key(base):
        spreads = [spread_of(base), spread_of(row)]  # the two ran in different processes: each one's offset counts
        interval = scaled(ratio_of_medians(samples_of(base), samples_of(row), spreads), speedup / ratio)
    low, high = (math.nan, math.nan) if interval is None else (interval.low, interval.high)
    return {
        m.SPEEDUP: speedup,
        m.SPEEDUP_CI95_LOW: low,
        m.SPEEDUP_CI95_HIGH: high,
        m.SCALING_EFFICIENCY: speedup / n,
        m.SCALING_EFFICIENCY_CI95_LOW: low / n,
        m.SCALING_EFFICIENCY_CI95_HIGH: high / n,
    }


def _why_no_figure(row: pd.Series, base: pd.Series | None) -> str | None:
    if row[m.STATUS] != m.STATUS_OK:
        return f"config {row[m.STATUS]}"
    if base is None:
        return (
            f"no baseline: no ok 1-node 1-device config of {row[m.MODEL]} with the same precision, "
            "batch policy, batch_size, jit and optimizer in this run"
        )
    return None


def _what(row: pd.Series) -> str:
    return f"Config {row[m.CONFIG_ID]} ({row[m.MODEL]}, {row[m.STRATEGY]}, x{row[m.DEVICES]})"


LOGICAL_CAVEAT = (
    "Logical CPU devices share the same cores and thread pools: the scaling figures of cpu-logical configs test "
    "the harness, not the hardware. Do not read them as speedups."
)


def caveat(frame: pd.DataFrame) -> str | None:
    """The line a reader must see before any figure (the report under its title, the terminal under its summary):
    LOGICAL_CAVEAT where any config ran on logical CPU devices, else None."""
    kinds = frame[m.DEVICE_KIND] if m.DEVICE_KIND in frame else pd.Series(dtype=object)
    return LOGICAL_CAVEAT if (kinds == "cpu-logical").any() else None


def warnings_for(frame: pd.DataFrame) -> list[str]:
    """Plain-sentence warnings a reader of the report must see; `frame` has gone through add_scaling."""
    notes = []
    if caveat(frame):
        notes.append(caveat(frame))
    ok = frame[m.STATUS] == m.STATUS_OK
    for _, row in frame[~ok].iterrows():
        notes.append(f"{_what(row)} {row[m.STATUS]}: {row[m.REASON]}")
    for _, row in frame[ok & (frame[m.STEP_TIME_CV] > HIGH_CV)].iterrows():
        notes.append(
            f"{_what(row)}: high step-time variation, MAD/median = {row[m.STEP_TIME_CV]:.1%} "
            f"(> {HIGH_CV:.0%}); its figures are less certain"
        )
    for _, row in frame[ok & frame[m.SCALING_EFFICIENCY].isna()].iterrows():
        notes.append(f"{_what(row)}: {row[m.BASELINE_NOTE]}")
    if m.WINDOW_DRIFT_REL in frame:
        drifted = ok & (pd.to_numeric(frame[m.WINDOW_DRIFT_REL], errors="coerce").abs() > DRIFT_FLAG)
        for _, row in frame[drifted].iterrows():
            if drift_beyond_noise(list(row[m.STEP_TIMES_S])):
                notes.append(
                    f"{_what(row)}: its timed windows drifted {fmt.change(row[m.WINDOW_DRIFT_REL])} from the first "
                    "third to the last (their 95 % CIs apart): the median's CI does not cover a trend; rerun it, or "
                    "raise max_warmup_s if it was still warming up"
                )
    if m.SCALING_EFFICIENCY_CI95_LOW in frame:
        impossible = ok & (frame[m.DEVICES] == 1) & (frame[m.SCALING_EFFICIENCY_CI95_LOW] > 1.0)
        for _, row in frame[impossible].iterrows():
            low, high = row[m.SCALING_EFFICIENCY_CI95_LOW], row[m.SCALING_EFFICIENCY_CI95_HIGH]
            notes.append(
                f"{_what(row)}: 1-device efficiency {row[m.SCALING_EFFICIENCY]:.2f} "
                f"{fmt.interval(f'{low:.2f}', f'{high:.2f}', '95 % CI ')} is above 1, "
                "which one device cannot be: its process and its baseline's ran at different speeds, a spread the "
                "CI covers only where both ran in several processes (repeats: 2 or more)"
            )
    return notes


PRECISION_NOTE = (
    "Step times of one config differ more between fresh processes than within one (process medians 4-16 % sd "
    "apart on a shared 2-core machine, against +-2 % within one process). Where configs of a run ran in two or "
    "more processes (repeats), the spread of their process medians beyond each process's own noise is pooled over "
    "the run (process_spread_sd_rel, with process_spread_df degrees of freedom) and every CI of the run covers it: "
    "a one-process CI widened on each side by Student's t times that spread, several processes' CI and every "
    "speedup, efficiency and gap CI by a bootstrap of each process's windows times a drawn process offset. Without "
    "such configs a CI covers the windows of its process only, and reruns land outside it most of the time (a "
    "one-process CI contained the other runs' median 34 % of the time here): set repeats: 2 on a few configs. Runs "
    "at other times can differ by more than processes of one run (tests/benchmarks/bench_coverage.py measures how "
    "often a stated CI contains the median of other runs). The target (+-2 %) is what each process measures to; "
    "the stated CI is wider. An efficiency whose CI contains 1.0 at one device is consistent with its baseline; a "
    "communication time whose CI reaches 0 is within noise."
)


@dataclass(frozen=True)
class Missed:
    """An ok config whose median's CI is wider than its target."""

    label: str
    half_width: float
    samples: int
    stop: str


@dataclass(frozen=True)
class PrecisionSummary:
    measured: int  # ok configs with precision columns
    met: int
    targets: str  # e.g. "+-2 %"
    missed: list[Missed]
    covers: dict[str, int] = field(default_factory=dict)  # ci_covers -> how many configs' CIs cover that spread

    def covers_text(self) -> str:
        """'What the step-time CIs cover: 12 config(s): within one process (...); 5 config(s): between 3 ...'."""
        parts = [f"{count} config(s): {what}" for what, count in sorted(self.covers.items(), key=lambda x: -x[1])]
        return f"What the step-time CIs cover: {'; '.join(parts)}." if parts else ""


def _why_wide(row: pd.Series) -> str:
    """Why a config's CI is what it is: how its timing stopped, or the spread of its processes' medians."""
    medians = process_medians(row)
    spread = spread_of(row)
    between = "" if spread is None else f"; the run's spread between processes, sd {spread.sd_log:.1%}"
    if medians:
        return f"{len(medians)} processes, medians " + ", ".join(f"{t * 1e3:.3g}" for t in medians) + f" ms{between}"
    return f"{row[m.MEASURE_STOP]}{between}"


def precision_summary(frame: pd.DataFrame) -> PrecisionSummary:
    """How many ok configs met their CI target, and which did not (the widest first)."""
    ok = frame[frame[m.STATUS] == m.STATUS_OK]
    if m.CI_MET not in ok:
        return PrecisionSummary(0, 0, "", [])
    ok = ok[ok[m.CI_TARGET].notna()]
    met = ok[m.CI_MET].astype(bool)
    targets = ", ".join(
        f"+-{t:.0%}" if t * 100 == round(t * 100) else f"+-{t:.1%}" for t in sorted(set(ok[m.CI_TARGET]))
    )
    missed = [
        Missed(
            f"{labels.model_label(r[m.MODEL], r.get(m.MODEL_SIZE))} {labels.record_mode(r)} x{r[m.DEVICES]} "
            f"({r[m.CONFIG_ID]})",
            float(r[m.CI_HALF_WIDTH_REL]) if not _missing(r[m.CI_HALF_WIDTH_REL]) else math.inf,
            int(r[m.SAMPLES]),
            _why_wide(r),
        )
        for _, r in ok[~met].iterrows()
    ]
    missed.sort(key=lambda x: -x.half_width)
    covers = ok[m.CI_COVERS].dropna().value_counts().to_dict() if m.CI_COVERS in ok else {}
    return PrecisionSummary(len(ok), int(met.sum()), targets, missed, {str(k): int(v) for k, v in covers.items()})


def layout_label(row: pd.Series) -> str:
    """labels.layout_label of a record row."""
    return labels.layout_label(
        row[m.NODES], row[m.DEVICES_PER_NODE], row[m.STRATEGY], row.get(m.NUM_PS), row.get(m.NETWORK_LINK)
    )


def layout_comparison(frame: pd.DataFrame) -> pd.DataFrame:
    """Ok configs of the same workload and total device count run in more than one layout (1 node x N devices
    vs N nodes x 1 device vs parameter servers), one row each; `frame` has gone through add_scaling."""
    ok = frame[frame[m.STATUS] == m.STATUS_OK].copy()
    if ok.empty:
        return ok.assign(
            **{m.LAYOUT: [], m.RANK_THROUGHPUT_MIN_EXAMPLES_PER_S: [], m.RANK_THROUGHPUT_MAX_EXAMPLES_PER_S: []}
        )
    ok[m.LAYOUT] = ok.apply(layout_label, axis=1)
    ok["group"] = ok.apply(lambda r: (*workload_key(r), r[m.DEVICES]), axis=1)
    layouts = ok.groupby("group")[m.LAYOUT].transform("nunique")
    rows = ok[layouts > 1].copy()
    ranks = rows.get(m.RANK_THROUGHPUT_EXAMPLES_PER_S, pd.Series(None, index=rows.index))
    rows[m.RANK_THROUGHPUT_MIN_EXAMPLES_PER_S] = [min(v) if isinstance(v, list) and v else math.nan for v in ranks]
    rows[m.RANK_THROUGHPUT_MAX_EXAMPLES_PER_S] = [max(v) if isinstance(v, list) and v else math.nan for v in ranks]
    return rows.sort_values([m.MODEL, m.DEVICES, m.NODES, m.STRATEGY]).drop(columns="group")


COMM_ESTIMATES = (
    ("exposed", m.COMM_TIME_EXPOSED_S),
    ("split", m.COMM_TIME_SPLIT_S),
    ("isolated", m.COMM_TIME_ISOLATED_S),
    ("trace", m.COMM_TIME_TRACE_S),
    ("model", m.COMM_TIME_MODEL_S),
)
DISAGREEMENT = 1.25  # two estimates whose ratio exceeds this are named in the cross-check


def _number(value) -> float | None:
    return None if _missing(value) else float(value)


def disagreements(estimates: dict[str, float | None], limit: float = DISAGREEMENT) -> list[str]:
    """'a vs b: r.rrx' for each pair of available estimates whose larger/smaller ratio exceeds `limit`."""
    present = [(name, v) for name, v in estimates.items() if v is not None and v > 0]
    found = []
    for i, (a, va) in enumerate(present):
        for b, vb in present[i + 1 :]:
            ratio = max(va, vb) / min(va, vb)
            if ratio > limit:
                found.append(f"{a} vs {b}: {ratio:.2f}x")
    return found


def comm_not_measured(row: pd.Series) -> str:
    """Why a config has no communication figures."""
    if row[m.STATUS] != m.STATUS_OK:
        return f"config {row[m.STATUS]}"
    if row[m.STRATEGY] == "parameter_server":
        pulled = not _missing(row.get(m.COMM_TIME_PULL_S))
        return "parameter_server: no all-reduce (variables live on the servers)" + (
            "; pull and push timed instead" if pulled else ""
        )
    if int(row[m.REPLICAS]) < 2:
        return "one replica: no gradient communication"
    method = row.get(m.COMM_METHOD)
    return method if isinstance(method, str) and method.startswith("not measured") else "not measured"


def comm_crosscheck(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per config: the communication estimates side by side, the exposed fraction of the step, and
    the pairs of estimates that disagree by more than 25 % (or why there are none)."""
    rows = []
    for _, r in frame.iterrows():
        estimates = {name: _number(r.get(column)) for name, column in COMM_ESTIMATES}
        if exposed_not_measured(str(r.get(m.STRATEGY))):
            estimates["exposed"] = None
        measured = estimates["split"] is not None
        shown, note = exposed_comm(r) if measured else (None, None)
        step = _number(r.get(m.STEP_TIME_MEDIAN_S))
        rows.append(
            {
                **dict(zip(MEASUREMENT_KEY, measurement_key(r), strict=True)),
                m.MODEL: r[m.MODEL],
                m.STRATEGY: r[m.STRATEGY],
                m.DEVICES: r[m.DEVICES],
                m.STEP_TIME_MEDIAN_S: step,
                m.COMPUTE_TIME_S: _number(r.get(m.COMPUTE_TIME_S)),
                **{column: estimates[name] for name, column in COMM_ESTIMATES},
                m.COMM_TIME_EXPOSED_CI95_LOW_S: _number(r.get(m.COMM_TIME_EXPOSED_CI95_LOW_S)),
                m.COMM_TIME_EXPOSED_CI95_HIGH_S: _number(r.get(m.COMM_TIME_EXPOSED_CI95_HIGH_S)),
                m.COMM_EXPOSED_S: shown,
                m.COMM_EXPOSED_NOTE: note,
                m.COMM_FRACTION: shown / step if measured and step else None,
                m.OVERLAP_FRACTION: _number(r.get(m.OVERLAP_FRACTION)),
                m.COMM_TIME_PULL_S: _number(r.get(m.COMM_TIME_PULL_S)),
                m.COMM_TIME_PUSH_S: _number(r.get(m.COMM_TIME_PUSH_S)),
                m.TRACE_PATH: None if _missing(r.get(m.TRACE_PATH)) else r.get(m.TRACE_PATH),
                "notes": "; ".join(disagreements(estimates)) if measured else comm_not_measured(r),
            }
        )
    return pd.DataFrame(rows)


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


def exposed_comm(row: pd.Series) -> tuple[float, str | None]:
    """The exposed communication a breakdown can draw (s), and why it is 0 or empty (NaN) when it is: a figure
    whose 95 % CI reaches 0 is within noise (0); one not measured, or whose CI lies wholly below 0 (the method does
    not apply: a communication time cannot be negative), is empty with the reason, never 0."""
    inapplicable = exposed_not_measured(str(row.get(m.STRATEGY)))  # records from before 0.4 still hold a figure
    exposed = None if inapplicable else _number(row.get(m.COMM_TIME_EXPOSED_S))
    if exposed is None:
        why = inapplicable or comm_not_measured(row)
        return math.nan, why if why.startswith("not measured") else f"not measured: {why}"
    low, high = _number(row.get(m.COMM_TIME_EXPOSED_CI95_LOW_S)), _number(row.get(m.COMM_TIME_EXPOSED_CI95_HIGH_S))
    if low is None:  # no CI (fewer than two samples): only a negative value is dropped
        return (exposed, None) if exposed >= 0 else (math.nan, f"not measurable ({exposed * 1e3:.3f} ms, no CI)")
    interval = fmt.interval(f"{low * 1e3:.3f}", f"{high * 1e3:.3f} ms", "95 % CI ")
    if high is not None and high < 0:  # not noise: the compute-only step is slower than the fused one
        return math.nan, f"not measurable: the compute-only step ran slower than the full step {interval}"
    if low <= 0:
        return 0.0, f"within noise {interval}"
    return exposed, None


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
            [samples_of(r), base_samples], lambda t, b, per=per: t - b * per, [spread_of(r), spread_of(base)]
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


def efficiency_text(row: pd.Series) -> str:
    """'80.3 % (78.1 to 82.9) weak': the efficiency, its 95 % CI where there is one (digits as the CI supports), and
    which scaling; '' if none."""
    value = row[m.SCALING_EFFICIENCY]
    if _missing(value):
        return ""
    low, high = row.get(m.SCALING_EFFICIENCY_CI95_LOW), row.get(m.SCALING_EFFICIENCY_CI95_HIGH)
    return f"{fmt.percent(value, low, high)} {row[m.SCALING]}"


def summary_rows(frame: pd.DataFrame) -> list[dict[str, str]]:
    """Short text rows for the terminal: one per config, figures formatted with their units."""
    rows = []
    files = m.DATA in frame.columns and bool((frame[m.DATA] == DATA_FILES).any())  # a data column only then
    for _, r in frame.iterrows():
        ok = r[m.STATUS] == m.STATUS_OK
        rows.append(
            {
                "config_id": r[m.CONFIG_ID],
                "model": labels.model_label(r[m.MODEL], r[m.MODEL_SIZE]),
                "strategy": labels.record_mode(r),
                "layout": layout_label(r),
                "global_batch": str(r[m.GLOBAL_BATCH_SIZE]),
                **({"data": labels.data_label(r) or DATA_SYNTHETIC} if files else {}),
                "status": r[m.STATUS],
                "step": fmt.ms(r[m.STEP_TIME_MEDIAN_S]) if ok else "",
                "examples/s": fmt.rate(r[m.THROUGHPUT_EXAMPLES_PER_S]) if ok else "",
                "efficiency": efficiency_text(r),
            }
        )
    return rows


NETWORK_METHOD = (
    "Each simulated node is a Linux network namespace joined to the others by a bridge; its veth link is shaped "
    "with tc tbf to link_bytes_per_s in each direction. link_measured_bytes_per_s: TCP goodput of a plain "
    "transfer node 0 -> node 1 just before the config (at most about 0.96 of the link: TCP/IP headers). "
    "busbw / link: the isolated all-reduce's bus bandwidth over the link rate; 1.0 is the link's limit. "
    "comm vs loopback: isolated all-reduce time over that of the same workload and layout on unshaped loopback."
)


def network_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Ok configs on simulated hosts with busbw / link and their all-reduce time against loopback; `frame` has
    gone through add_scaling."""
    ok = frame[(frame[m.STATUS] == m.STATUS_OK) & frame[m.NETWORK_LINK].notna()].copy()
    if ok.empty:
        return ok.assign(**{m.BUSBW_LINK_FRACTION: [], m.CHECK_LINK_FRACTION: [], m.COMM_VS_LOOPBACK: []})
    link = pd.to_numeric(ok[m.LINK_BYTES_PER_S], errors="coerce")
    ok[m.BUSBW_LINK_FRACTION] = pd.to_numeric(ok[m.BUSBW_BYTES_PER_S], errors="coerce") / link
    ok[m.CHECK_LINK_FRACTION] = pd.to_numeric(ok[m.LINK_MEASURED_BYTES_PER_S], errors="coerce") / link
    loopback = {}
    plain = frame[(frame[m.STATUS] == m.STATUS_OK) & frame[m.NETWORK_LINK].isna()]
    for _, row in plain.iterrows():
        where = (*workload_key(row), row[m.STRATEGY], row[m.NODES], row[m.DEVICES_PER_NODE])
        loopback[where] = row[m.COMM_TIME_ISOLATED_S]
    ratios = []
    for _, row in ok.iterrows():
        base = _number(loopback.get((*workload_key(row), row[m.STRATEGY], row[m.NODES], row[m.DEVICES_PER_NODE])))
        shaped = _number(row[m.COMM_TIME_ISOLATED_S])
        ratios.append(shaped / base if shaped is not None and base else math.nan)
    ok[m.COMM_VS_LOOPBACK] = ratios
    return ok.sort_values([m.MODEL, m.NODES, m.LINK_BYTES_PER_S])


CONFIG_AXES = (m.DEVICE, *AXES)  # what makes a config: every axis (a later axis included) and the device


def condense(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per distinct ok config over many runs, for the report's plots: numeric columns are the median over
    the runs, step_times_s the list of the runs' median steps, the CI columns the lowest and highest of those
    medians (so error bars show run-to-run spread), run_id "<k> runs". `frame` has gone through add_scaling."""
    ok = frame[frame[m.STATUS] == m.STATUS_OK]
    if ok.empty:
        return ok
    keys = [c for c in CONFIG_AXES if c in ok]
    numeric = [
        c
        for c in ok.columns
        if c not in keys and pd.api.types.is_numeric_dtype(ok[c]) and not pd.api.types.is_bool_dtype(ok[c])
    ]
    groups = ok.groupby(keys, dropna=False, sort=False)
    out = groups.first()
    out[numeric] = groups[numeric].median()
    medians = groups[m.STEP_TIME_MEDIAN_S]
    out[m.STEP_TIME_CI95_LOW_S] = medians.min()
    out[m.STEP_TIME_CI95_HIGH_S] = medians.max()
    out[m.STEP_TIMES_S] = medians.agg(list)
    out[m.RUN_ID] = groups[m.RUN_ID].nunique().map(lambda k: f"{k} runs")
    out = out.copy().reset_index()[list(frame.columns)]  # copy: defragments after the many column writes above
    out.attrs["condensed_runs"] = frame[m.RUN_ID].nunique()  # figures say their bars show run-to-run spread
    return out


MODES_NOTE = (
    "data: every device holds the whole model and computes on its share of the batch; the gradients are "
    "all-reduced every step. pipeline: each device holds a contiguous group of layers (stage) and passes "
    "activations to the next; memory per device falls with the stages, but a stage waits while the pipeline fills "
    "and drains (the bubble, (S-1)/(M+S-1) of the step with M micro-batches). tensor: each device holds 1/T of "
    "every sharded weight and computes 1/T of each layer; activations are exchanged inside every layer. hybrid: "
    "data-parallel copies of a tensor-parallel model. On logical CPU devices all modes share the same cores: these "
    "figures test the mechanics, not the speed a real multi-device host would give."
)


def mode_comparison(frame: pd.DataFrame) -> pd.DataFrame:
    """Ok configs of a workload run in more than one parallelism mode at the same device count, one row each,
    with a `mode` label; `frame` has gone through add_scaling."""
    ok = frame[frame[m.STATUS] == m.STATUS_OK].copy()
    if ok.empty or m.PARALLELISM not in ok:
        return ok.assign(**{m.MODE: []})
    ok["group"] = ok.apply(lambda r: (*workload_key(r), r[m.DEVICES]), axis=1)
    rows = ok[ok.groupby("group")[m.PARALLELISM].transform("nunique") > 1].copy()
    rows[m.MODE] = [mode_text(r) for _, r in rows.iterrows()]
    return rows.sort_values([m.MODEL, m.DEVICES, m.PARALLELISM]).drop(columns="group")


def mode_text(row: pd.Series) -> str:
    """'data (mirrored)', 'pipeline 4 stages x 4 micro-batches', 'hybrid 2 data x 2 tensor': the mode first, since
    the section that uses it compares modes."""
    mode = labels.record_mode(row)
    return f"data ({mode})" if (row.get(m.PARALLELISM) or "data") == "data" else mode


# What makes a data: files config and its data: synthetic twin one config apart from the input: every axis but the
# data ones, in the same run.
INPUT_TWIN_KEY = (m.RUN_ID, m.DEVICE, *(a for a in AXES if a != m.DATA and a not in DATA_AXES))


def _key(row: pd.Series, columns: tuple[str, ...]) -> tuple:
    return tuple(None if _missing(row.get(c)) else row.get(c) for c in columns)


def input_comparison(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per ok data: files config (frame through add_scaling): its throughput and scaling efficiency beside
    its synthetic twin's (empty where the sweep has none), the pipeline's own throughput, the wait and the verdict."""
    if m.DATA not in frame.columns:  # frames built without the data axis read synthetic data
        return pd.DataFrame()
    ok = frame[frame[m.STATUS] == m.STATUS_OK]
    twins = {_key(r, INPUT_TWIN_KEY): r for _, r in ok[ok[m.DATA] == DATA_SYNTHETIC].iterrows()}
    rows = []
    for _, r in ok[ok[m.DATA] == DATA_FILES].iterrows():
        twin = twins.get(_key(r, INPUT_TWIN_KEY))
        synthetic = None if twin is None else float(twin[m.THROUGHPUT_EXAMPLES_PER_S])
        throughput = float(r[m.THROUGHPUT_EXAMPLES_PER_S])
        rows.append(
            {
                **dict(zip(MEASUREMENT_KEY, measurement_key(r), strict=True)),
                m.MODEL: r[m.MODEL],
                m.MODEL_SIZE: r.get(m.MODEL_SIZE),
                m.STRATEGY: r[m.STRATEGY],
                m.DEVICES: int(r[m.DEVICES]),
                "pipeline": labels.data_label(r),
                m.DATA_SOURCE: r.get(m.DATA_SOURCE),
                m.THROUGHPUT_EXAMPLES_PER_S: throughput,
                m.SYNTHETIC_THROUGHPUT_EXAMPLES_PER_S: synthetic,
                m.FILES_VS_SYNTHETIC: None if synthetic is None else throughput / synthetic,
                m.SCALING_EFFICIENCY: _number(r.get(m.SCALING_EFFICIENCY)),
                m.SYNTHETIC_SCALING_EFFICIENCY: None if twin is None else _number(twin.get(m.SCALING_EFFICIENCY)),
                m.INPUT_THROUGHPUT_EXAMPLES_PER_S: _number(r.get(m.INPUT_THROUGHPUT_EXAMPLES_PER_S)),
                m.INPUT_HEADROOM: _number(r.get(m.INPUT_HEADROOM)),
                m.INPUT_WAIT_TIME_S: _number(r.get(m.INPUT_WAIT_TIME_S)),
                m.INPUT_WAIT_TIME_CI95_LOW_S: _number(r.get(m.INPUT_WAIT_TIME_CI95_LOW_S)),
                m.INPUT_WAIT_TIME_CI95_HIGH_S: _number(r.get(m.INPUT_WAIT_TIME_CI95_HIGH_S)),
                m.OP_TIME_INPUT_S: _number(r.get(m.OP_TIME_INPUT_S)),  # the trace's figure, with profile: true
                m.INPUT_BOUND: r.get(m.INPUT_BOUND),
                m.INPUT_BOUND_NOTE: r.get(m.INPUT_BOUND_NOTE),
            }
        )
    return pd.DataFrame(rows)


def input_hints(frame: pd.DataFrame) -> list[str]:
    """Where a sweep varied one pipeline setting with all else equal: which value gave the most throughput, against
    the least, and whether the difference is outside the noise (the median steps' 95 % CIs do not overlap)."""
    if m.DATA not in frame.columns:
        return []
    ok = frame[(frame[m.STATUS] == m.STATUS_OK) & (frame[m.DATA] == DATA_FILES)]
    hints = []
    for knob in (k for k in DATA_AXES if k in ok.columns):
        others = (*INPUT_TWIN_KEY, *(a for a in DATA_AXES if a != knob))
        for _, group in ok.groupby(ok.apply(lambda r, others=others: _key(r, others), axis=1), sort=False):
            if group[knob].nunique(dropna=False) < 2:
                continue
            best = group.loc[group[m.THROUGHPUT_EXAMPLES_PER_S].astype(float).idxmax()]
            worst = group.loc[group[m.THROUGHPUT_EXAMPLES_PER_S].astype(float).idxmin()]
            ratio = float(best[m.THROUGHPUT_EXAMPLES_PER_S]) / float(worst[m.THROUGHPUT_EXAMPLES_PER_S])
            apart = (
                _number(best.get(m.STEP_TIME_CI95_HIGH_S)) is not None
                and _number(worst.get(m.STEP_TIME_CI95_LOW_S)) is not None
                and float(best[m.STEP_TIME_CI95_HIGH_S]) < float(worst[m.STEP_TIME_CI95_LOW_S])
            )
            what = f"{labels.model_label(best[m.MODEL], best.get(m.MODEL_SIZE))} {best[m.STRATEGY]} x{best[m.DEVICES]}"
            verdict = "helped" if apart else "is within noise (the median steps' 95 % CIs overlap)"
            high, low = fmt.rate(best[m.THROUGHPUT_EXAMPLES_PER_S]), fmt.rate(worst[m.THROUGHPUT_EXAMPLES_PER_S])
            hints.append(
                f"{what}: {knob}={_plain(best[knob])} {verdict}: {high} examples/s, "
                f"{ratio:.2f}x {knob}={_plain(worst[knob])} ({low})"
            )
    return hints


def _plain(value):
    """A setting as written in a suite: 4, not 4.0 (a column with empty cells holds its counts as floats)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def critical_batches(frame: pd.DataFrame) -> list[str]:
    """One line per teacher-task workload with measured noise scales: the median estimate (its range over configs)
    and how many configs measured it."""
    ok = frame[(frame[m.STATUS] == m.STATUS_OK) & _numeric(frame, m.GRAD_NOISE_SCALE).notna()]
    lines = []
    for _, group in ok.groupby(ok.apply(workload_key, axis=1), sort=False):
        values = _numeric(group, m.GRAD_NOISE_SCALE)
        first = group.iloc[0]
        what = f"{labels.model_label(first[m.MODEL], first.get(m.MODEL_SIZE))}, batch {first[m.BATCH_SIZE]}"
        spread = f" ({values.min():,.0f} to {values.max():,.0f})" if len(values) > 1 else ""
        lines.append(
            f"{what}: about {values.median():,.0f} examples{spread}, from {len(values)} config(s); "
            f"global batches above it buy little convergence per example"
        )
    return lines


def analyze(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (records: tfscale.store.load_results) with every derived column of docs/records.md per config: the
    scaling figures (add_scaling), `mode` and `layout`, the loss breakdown, the communication share, and where they
    apply the simulated-network and input-twin figures; empty where a figure does not apply. What tfscale.run,
    tfscale.load_results and tfscale export give."""
    out = add_scaling(frame)
    out[m.MODE] = [mode_text(row) for _, row in out.iterrows()]
    out[m.LAYOUT] = [layout_label(row) for _, row in out.iterrows()]
    out[m.COMM_FRACTION] = _numeric(out, m.COMM_TIME_EXPOSED_S) / _numeric(out, m.STEP_TIME_MEDIAN_S)
    parts = (
        (loss_breakdown(out), (m.IDEAL_STEP_S, m.GAP_S, m.GAP_CI95_LOW_S, m.GAP_CI95_HIGH_S, m.GAP_FRACTION,
                               *BREAKDOWN_FRACTIONS, *BREAKDOWN_FRACTIONS.values(), m.COMM_EXPOSED_NOTE)),
        (network_rows(out), (m.BUSBW_LINK_FRACTION, m.CHECK_LINK_FRACTION, m.COMM_VS_LOOPBACK)),
        (input_comparison(out), (m.SYNTHETIC_THROUGHPUT_EXAMPLES_PER_S, m.FILES_VS_SYNTHETIC,
                                 m.SYNTHETIC_SCALING_EFFICIENCY)),
    )  # fmt: skip
    keys = [measurement_key(row) for _, row in out.iterrows()]
    for rows, columns in parts:
        found = by_measurement(rows)
        for column in columns:
            values = [found[key].get(column) if key in found else None for key in keys]
            out[column] = pd.Series(values, index=out.index, dtype=object if column == m.COMM_EXPOSED_NOTE else None)
    return out
