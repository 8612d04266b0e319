"""The report's section "One node vs several nodes at equal device counts": each workload in every layout it ran in at
one device count."""

from __future__ import annotations

from tfscale import metrics as m
from tfscale.analysis import layout_comparison
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html, table_html
from tfscale.htmlreport.sections.base import Context, Omitted

ID = "layouts"
TITLE = "One node vs several nodes at equal device counts"

INTRO = """<p>Layouts: "1 node × 4" is one process with 4 devices; "2 nodes × 2" a cluster of processes (one per node
or TF task) talking gRPC; "2 workers + 1 PS" a parameter-server cluster. rank_throughput min/max: the spread of the
training ranks' own throughputs; straggler: a rank more than 10&nbsp;% slower than the median rank.</p>"""


COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.MODEL_SIZE,
    m.DEVICES,
    m.LAYOUT,
    m.STRATEGY,
    m.THROUGHPUT_EXAMPLES_PER_S,
    m.SCALING_EFFICIENCY,
    m.STEP_TIME_MEDIAN_S,
    m.RANK_THROUGHPUT_MIN_EXAMPLES_PER_S,
    m.RANK_THROUGHPUT_MAX_EXAMPLES_PER_S,
    m.STRAGGLER,
)


def body(context: Context) -> str | Omitted:
    rows = layout_comparison(context.view)
    if rows.empty:
        return Omitted(
            "no workload ran in more than one layout at the same device count (e.g. mirrored with "
            "devices_per_node: 2 and multi_worker_mirrored with nodes: 2)"
        )
    return INTRO + figure_html(figures.layout_figure(rows)) + table_html(rows, COLUMNS)
