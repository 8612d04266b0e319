"""The report's section "Gradient communication": every estimate of the time gradients take, side by side."""

from __future__ import annotations

from tfscale import metrics as m
from tfscale.analysis import comm_crosscheck
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html, joined, table_html
from tfscale.htmlreport.sections.base import Context, Omitted

ID = "communication"
TITLE = "Gradient communication"

INTRO = """<p class="method">For each multi-replica data-parallel config, beside the fused step: <b>compute</b> = a step
that only computes per-replica gradients; <b>exposed</b> = fused step &minus; compute; <b>split</b> = the all-reduce of
computed gradients plus the optimizer update, through the strategy's own path; <b>isolated</b> = the all-reduce alone
of tensors shaped like the gradients; <b>trace</b> = per step, the union of collective-op intervals in the profiler
trace of extra untimed steps (<code>profile: true</code>; it includes waiting for peers; open a trace with
<code>tensorboard --logdir results/&lt;suite&gt;/&lt;run&gt;/&lt;trace_path&gt;</code>); <b>model</b> = the
commbench &alpha;-&beta; fit at the gradient bytes.
overlap_fraction = (compute + split &minus; fused) / split, clamped to [0, 1]. All are medians. The notes column
names every pair of estimates that disagree by more than 25&nbsp;%, or says why a config has no figures.</p>"""


COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.STRATEGY,
    m.DEVICES,
    m.STEP_TIME_MEDIAN_S,
    m.COMPUTE_TIME_S,
    m.COMM_EXPOSED_S,
    m.COMM_TIME_EXPOSED_CI95_LOW_S,
    m.COMM_TIME_EXPOSED_CI95_HIGH_S,
    m.COMM_EXPOSED_NOTE,
    m.COMM_TIME_SPLIT_S,
    m.COMM_TIME_ISOLATED_S,
    m.COMM_TIME_TRACE_S,
    m.COMM_TIME_MODEL_S,
    m.COMM_FRACTION,
    m.OVERLAP_FRACTION,
    m.COMM_TIME_PULL_S,
    m.COMM_TIME_PUSH_S,
    m.TRACE_PATH,
    "notes",
)


NO_SWEEP = (
    "<p>No commbench sweep in these runs (suite option <code>commbench: true</code> or "
    "<code>tfscale commbench</code>): no bandwidth curve and no comm_time_model_s.</p>"
)


def body(context: Context) -> str | Omitted:
    checks, sweeps = comm_crosscheck(context.view), context.sweeps
    if checks.empty and not sweeps:
        return Omitted("no multi-replica data-parallel config and no commbench sweep")
    return joined(
        INTRO,
        figure_html(figures.comm_breakdown_figure(checks)),
        figure_html(figures.comm_fraction_figure(checks)),
        figure_html(figures.busbw_figure(sweeps)),
        "" if sweeps else NO_SWEEP,
        table_html(checks, COLUMNS, derived=True),
    )
