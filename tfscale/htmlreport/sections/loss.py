"""The report's section "Where the efficiency went": the gap to ideal scaling split into its causes."""

from __future__ import annotations

import html

import pandas as pd

from tfscale import metrics as m
from tfscale.analysis import BREAKDOWN_METHOD, loss_breakdown
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html, records_table
from tfscale.htmlreport.sections.base import Context, Omitted

ID = "loss"
TITLE = "Where the efficiency went"

COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.STRATEGY,
    m.DEVICES,
    m.SCALING,
    m.STEP_TIME_MEDIAN_S,
    m.IDEAL_STEP_S,
    m.GAP_S,
    m.GAP_CI95_LOW_S,
    m.GAP_CI95_HIGH_S,
    m.COMM_EXPOSED_S,
    m.COMM_EXPOSED_NOTE,
    m.STRAGGLER_WAIT_S,
    m.INPUT_WAIT_S,
    m.COMPUTE_GROWTH_S,
    m.REST_S,
    m.GAP_FRACTION,
)


def loss_section(frame: pd.DataFrame) -> str | Omitted:
    rows = loss_breakdown(frame)
    if rows.empty:
        return Omitted("no multi-device config with a 1-device baseline to compare with")
    return "\n".join(
        [
            figure_html(figures.loss_figure(rows)),
            f'<p class="method">{html.escape(BREAKDOWN_METHOD)}</p>',
            f'<div class="tablewrap">{records_table(rows.assign(status=m.STATUS_OK), COLUMNS)}</div>',
        ]
    )


def body(context: Context) -> str | Omitted:
    return loss_section(context.view)
