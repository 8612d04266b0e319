"""Speedup and scaling efficiency of every config against its workload's 1-device baseline (with 95 % CIs), MFU, energy
and cost per example. Pure pandas, no TensorFlow."""

from __future__ import annotations

import math

import pandas as pd

from tfscale import metrics as m
from tfscale.analysis.goodput import add_goodput
from tfscale.analysis.keys import _numeric, measurement_key, workload_key
from tfscale.stats.repeats import offsets_of, samples_of  # samples: per process for configs run with repeats
from tfscale.stats.uncertainty import ratio_of_medians, scaled


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


def energy_and_cost(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """joules_per_example and cost_per_million_examples of each config (tfscale.measures.energy, which gives NaN for a
    missing figure: not measured, failed, no price)."""
    from tfscale.measures.energy import cost_per_million_examples, joules_per_example

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
    """Speedup and efficiency of `row` against `base`, each with its 95 % CI (tfscale.stats.uncertainty).

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
        spreads = [offsets_of(base), offsets_of(row)]  # the two ran in different processes: each one's offset counts
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
