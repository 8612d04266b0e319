"""The report's section "Where the efficiency went": the gap to ideal scaling split into its causes."""

from __future__ import annotations

from tfscale import metrics as m
from tfscale.analysis import BREAKDOWN_METHOD, loss_breakdown
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html, joined, method_html, table_html
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


def body(context: Context) -> str | Omitted:
    frame = context.view
    rows = loss_breakdown(frame)
    if rows.empty:
        return Omitted("no multi-device config with a 1-device baseline to compare with")
    return joined(
        figure_html(figures.loss_figure(rows)), method_html(BREAKDOWN_METHOD), table_html(rows, COLUMNS, derived=True)
    )
