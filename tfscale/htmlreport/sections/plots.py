"""The report's section "Plots": throughput, efficiency, MFU, step time and memory against devices."""

from __future__ import annotations

import html

from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html
from tfscale.htmlreport.sections.base import Context, Omitted

ID = "plots"
TITLE = "Plots"

FIGURES = (
    figures.throughput_figure,
    figures.efficiency_figure,
    figures.mfu_figure,
    figures.step_time_figure,
    figures.memory_figure,
)


def body(context: Context) -> str | Omitted:
    plots = [p for p in (figure_html(build(context.view)) for build in FIGURES) if p]
    if not plots:
        return Omitted("no successful config to plot")
    if context.view_note:
        plots.insert(0, f'<p class="method">{html.escape(context.view_note)}</p>')
    return "\n".join(plots)
