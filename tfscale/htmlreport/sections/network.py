"""The report's section "Simulated hosts: communication against the link": configs on simulated hosts against their
link rate."""

from __future__ import annotations

from tfscale import metrics as m
from tfscale.analysis import NETWORK_METHOD, network_rows
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html, joined, method_html, table_html
from tfscale.htmlreport.sections.base import Context, Omitted

ID = "network"
TITLE = "Simulated hosts: communication against the link"

COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.MODEL_SIZE,
    m.STRATEGY,
    m.NODES,
    m.NETWORK_LINK,
    m.LINK_BYTES_PER_S,
    m.LINK_MEASURED_BYTES_PER_S,
    m.CHECK_LINK_FRACTION,
    m.GRAD_BYTES,
    m.COMM_TIME_ISOLATED_S,
    m.BUSBW_BYTES_PER_S,
    m.BUSBW_LINK_FRACTION,
    m.COMM_VS_LOOPBACK,
    m.STEP_TIME_MEDIAN_S,
    m.SCALING_EFFICIENCY,
)


def body(context: Context) -> str | Omitted:
    frame = context.view
    rows = network_rows(frame)
    if rows.empty:
        return Omitted("no config ran on simulated hosts (the axis network_link; needs root)")
    return joined(
        method_html(NETWORK_METHOD),
        figure_html(figures.link_fraction_figure(rows)),
        figure_html(figures.efficiency_vs_link_figure(rows)),
        table_html(rows, COLUMNS),
    )
