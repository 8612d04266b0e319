"""Goodput: throughput times the statistical efficiency of the config's batch, from the gradient noise scale. Pure
pandas, no TensorFlow."""

from __future__ import annotations

import math

import pandas as pd

from tfscale import labels
from tfscale import metrics as m
from tfscale.analysis.keys import _number, _numeric, throughput_interval, workload_key
from tfscale.axes import TASK_TEACHER

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


def add_goodput(out: pd.DataFrame, baselines: dict[tuple, pd.Series]) -> pd.DataFrame:
    """The goodput columns (GOODPUT_COLUMNS) of every ok teacher-task config with a baseline; empty elsewhere."""
    from tfscale.measures.goodput import Goodput, NoiseScale

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
