"""The report's section "Goodput: what a bigger batch costs in convergence": goodput beside throughput and the critical
batch size."""

from __future__ import annotations

import html

import pandas as pd

from tfscale import metrics as m
from tfscale.analysis import GOODPUT_COLUMNS, GOODPUT_METHOD, critical_batches
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html, joined, method_html, table_html
from tfscale.htmlreport.sections.base import Context, Omitted

ID = "goodput"
TITLE = "Goodput: what a bigger batch costs in convergence"

COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.STRATEGY,
    m.DEVICES,
    m.GLOBAL_BATCH_SIZE,
    m.THROUGHPUT_EXAMPLES_PER_S,
    m.GRAD_NOISE_SCALE,
    m.GRAD_NOISE_SCALE_CI95_LOW,
    m.GRAD_NOISE_SCALE_CI95_HIGH,
    m.SCALING_EFFICIENCY,
    *GOODPUT_COLUMNS,
)


def body(context: Context) -> str | Omitted:
    """Goodput beside throughput, the critical batch size per workload, and how they were estimated."""
    frame = context.view
    goodput = pd.to_numeric(frame.get(m.GOODPUT_EXAMPLES_PER_S, pd.Series(dtype=float)), errors="coerce")
    if goodput.isna().all():
        return Omitted("no config of the teacher task (task: teacher) with a measured gradient noise scale")
    rows = frame[goodput.notna()]
    critical = critical_batches(frame)
    items = "".join(f"<li>{html.escape(line)}</li>" for line in critical)
    parts = [f"<p>Critical batch size (about the gradient noise scale) per workload:</p><ul>{items}</ul>"]
    return joined(
        *parts, figure_html(figures.goodput_figure(frame)), method_html(GOODPUT_METHOD), table_html(rows, COLUMNS)
    )
