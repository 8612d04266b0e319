"""The report's section "Simulated hosts: communication against the link": configs on simulated hosts against their
link rate."""

from __future__ import annotations

import html

import pandas as pd

from tfscale import metrics as m
from tfscale.analysis import NETWORK_METHOD, network_rows
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html, records_table
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


def network_section(frame: pd.DataFrame) -> str | Omitted:
    rows = network_rows(frame)
    if rows.empty:
        return Omitted("no config ran on simulated hosts (the axis network_link; needs root)")
    return "\n".join(
        p
        for p in [
            f'<p class="method">{html.escape(NETWORK_METHOD)}</p>',
            figure_html(figures.link_fraction_figure(rows)),
            figure_html(figures.efficiency_vs_link_figure(rows)),
            f'<div class="tablewrap">{records_table(rows, COLUMNS)}</div>',
        ]
        if p
    )


def body(context: Context) -> str | Omitted:
    return network_section(context.view)
