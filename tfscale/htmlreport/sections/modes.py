"""The report's section "Data vs model parallelism at equal device counts": throughput, memory and bubble per
parallelism mode."""

from __future__ import annotations

from tfscale import metrics as m
from tfscale.analysis import MODES_NOTE, mode_comparison
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html, joined, method_html, table_html
from tfscale.htmlreport.sections.base import Context, Omitted

ID = "modes"
TITLE = "Data vs model parallelism at equal device counts"

COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.MODEL_SIZE,
    m.DEVICES,
    m.MODE,
    m.THROUGHPUT_EXAMPLES_PER_S,
    m.STEP_TIME_MEDIAN_S,
    m.SCALING_EFFICIENCY,
    m.PARAM_BYTES_PER_DEVICE,
    m.STAGE_PARAM_BYTES,
    m.PEAK_MEMORY_BYTES,
    m.MEMORY_KIND,
    m.BUBBLE_FRACTION,
    m.BUBBLE_FRACTION_THEORY,
)


def body(context: Context) -> str | Omitted:
    rows = mode_comparison(context.view)
    if rows.empty:
        return Omitted("no workload ran in more than one parallelism mode at the same device count (axis parallelism)")
    methods = sorted(set(rows[m.MODEL_PARALLEL_METHOD].dropna()))
    pipeline = rows[rows[m.PARALLELISM] == "pipeline"]
    return joined(
        method_html(MODES_NOTE),
        figure_html(
            figures.modes_figure(
                rows, m.THROUGHPUT_EXAMPLES_PER_S, "Throughput per parallelism mode", "examples/s (global)"
            )
        ),
        figure_html(
            figures.modes_figure(
                rows, m.PARAM_BYTES_PER_DEVICE, "Parameters held by the most loaded device", "MiB per device", 1 / 2**20
            )
        ),
        figure_html(
            figures.modes_figure(
                pipeline, m.BUBBLE_FRACTION, "Pipeline bubble, measured (hover: theory (S-1)/(M+S-1))", "idle fraction"
            )
        ),
        "".join(method_html(text) for text in methods),
        table_html(rows, COLUMNS),
    )
