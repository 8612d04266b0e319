"""The report's section "Input pipelines: synthetic vs files": configs reading files against their synthetic twins."""

from __future__ import annotations

import html

from tfscale import metrics as m
from tfscale.analysis import input_comparison, input_hints
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html, joined, table_html
from tfscale.htmlreport.sections.base import Context, Omitted

ID = "input"
TITLE = "Input pipelines: synthetic vs files"

INTRO = """With <code>data: files</code> the step reads TFRecord files written once per workload into tfscale's
cache (or the model's own <code>dataset_fn</code>) through a tf.data pipeline: files sharded per input pipeline,
parallel interleave, parse and decode map, shuffle, repeat, augmentation, batch, prefetch. Input wait per step: the
median step minus the median of the same step fed one of the pipeline's batches held in memory, with a bootstrap 95
% CI (with <code>profile: true</code>, <code>op_time_input_s</code> is the trace's figure: the iterator ops per
traced step); input-bound: a wait above 10 % of the step whose CI is above 0. Input-only throughput: the pipeline
drained alone (no model) after warm-up, summed over a cluster's workers; headroom = that / the training throughput
(above 1, the pipeline alone outruns the step: a wait then comes from sharing the CPU with it, not from its speed).
Logical CPU devices share the host's cores with the pipeline (<code>tfscale/measures/inputs.py</code>)."""


COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.STRATEGY,
    m.DEVICES,
    "pipeline",
    m.DATA_SOURCE,
    m.THROUGHPUT_EXAMPLES_PER_S,
    m.SYNTHETIC_THROUGHPUT_EXAMPLES_PER_S,
    m.FILES_VS_SYNTHETIC,
    m.SCALING_EFFICIENCY,
    m.SYNTHETIC_SCALING_EFFICIENCY,
    m.INPUT_THROUGHPUT_EXAMPLES_PER_S,
    m.INPUT_HEADROOM,
    m.INPUT_WAIT_TIME_S,
    m.INPUT_WAIT_TIME_CI95_LOW_S,
    m.INPUT_WAIT_TIME_CI95_HIGH_S,
    m.OP_TIME_INPUT_S,
    m.INPUT_BOUND,
    m.INPUT_BOUND_NOTE,
)


def body(context: Context) -> str | Omitted:
    """Synthetic vs files per config, the input-bound verdicts, and which pipeline setting helped."""
    frame = context.view
    rows = input_comparison(frame)
    if rows.empty:
        return Omitted("no config read files (data: files)")
    bound = int(rows[m.INPUT_BOUND].fillna(False).astype(bool).sum())
    hints = input_hints(frame)
    parts = [
        f"<p>{bound} of {len(rows)} configs that read files are input-bound.</p>",
        *([f"<ul>{''.join(f'<li>{html.escape(h)}</li>' for h in hints)}</ul>"] if hints else []),
    ]
    plot = figure_html(figures.input_figure(frame))
    return joined(*parts, plot, f'<p class="method">{INTRO}</p>', table_html(rows, COLUMNS, derived=True))
