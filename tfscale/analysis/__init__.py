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

import pandas as pd

from tfscale import metrics as m
from tfscale.analysis.breakdown import BREAKDOWN_FRACTIONS, BREAKDOWN_METHOD, input_wait, loss_breakdown
from tfscale.analysis.comm import (
    COMM_ESTIMATES,
    DISAGREEMENT,
    NETWORK_METHOD,
    comm_crosscheck,
    comm_not_measured,
    disagreements,
    exposed_comm,
    network_rows,
)
from tfscale.analysis.goodput import GOODPUT_COLUMNS, GOODPUT_METHOD, add_goodput, critical_batches
from tfscale.analysis.inputs import INPUT_TWIN_KEY, input_comparison, input_hints
from tfscale.analysis.keys import (
    CONFIG_AXES,
    MEASUREMENT_KEY,
    WORKLOAD_KEY,
    _numeric,
    baseline_key,
    by_measurement,
    measurement_key,
    throughput_interval,
    workload_key,
)
from tfscale.analysis.layouts import MODES_NOTE, condense, layout_comparison, layout_label, mode_comparison, mode_text
from tfscale.analysis.precision import PRECISION_NOTE, Missed, PrecisionSummary, precision_summary
from tfscale.analysis.scaling import SCALING_FIGURES, achieved_flops, add_scaling, energy_and_cost, scaling_figures
from tfscale.analysis.summary import efficiency_text, summary_rows
from tfscale.analysis.warnings import HIGH_CV, LOGICAL_CAVEAT, caveat, warnings_for

__all__ = [
    "BREAKDOWN_FRACTIONS",
    "BREAKDOWN_METHOD",
    "COMM_ESTIMATES",
    "CONFIG_AXES",
    "DISAGREEMENT",
    "GOODPUT_COLUMNS",
    "GOODPUT_METHOD",
    "HIGH_CV",
    "INPUT_TWIN_KEY",
    "LOGICAL_CAVEAT",
    "MEASUREMENT_KEY",
    "MODES_NOTE",
    "Missed",
    "NETWORK_METHOD",
    "PRECISION_NOTE",
    "PrecisionSummary",
    "SCALING_FIGURES",
    "WORKLOAD_KEY",
    "achieved_flops",
    "add_goodput",
    "add_scaling",
    "analyze",
    "baseline_key",
    "by_measurement",
    "caveat",
    "comm_crosscheck",
    "comm_not_measured",
    "condense",
    "critical_batches",
    "disagreements",
    "efficiency_text",
    "energy_and_cost",
    "exposed_comm",
    "input_comparison",
    "input_hints",
    "input_wait",
    "layout_comparison",
    "layout_label",
    "loss_breakdown",
    "measurement_key",
    "mode_comparison",
    "mode_text",
    "network_rows",
    "precision_summary",
    "scaling_figures",
    "summary_rows",
    "throughput_interval",
    "warnings_for",
    "workload_key",
]


def analyze(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (records: store.records.load_results) with every derived column of docs/records.md per config: the
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
