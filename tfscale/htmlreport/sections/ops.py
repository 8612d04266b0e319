"""The report's section "Where the step goes, by op": op time per traced step by group, and the top ops."""

from __future__ import annotations

import pandas as pd

from tfscale import metrics as m
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html, joined, table_html
from tfscale.htmlreport.sections.base import Context, Omitted
from tfscale.measures.opgroups import GROUP_COLUMNS

ID = "ops"
TITLE = "Where the step goes, by op"

INTRO = """From the profiler trace of the extra, untimed steps of configs with <code>profile: true</code>: TF's
executor records each op as an event. Ops of one step run at once on several threads, so each instant of the traced
window (first op's start to last op's end) is shared equally by the ops running then, and an instant with none
running (the host launching the step, syncing) counts as other: the groups add up to the window
(<code>op_window_s</code>) exactly. <code>traced_step_s</code>: wall time of each traced step, a host sync after
each. Top ops: each op's own duration per step, overlaps included (<code>tfscale/measures/opgroups.py</code>)."""


COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.STRATEGY,
    m.DEVICES,
    m.STEP_TIME_MEDIAN_S,
    m.TRACED_STEP_S,
    m.OP_WINDOW_S,
    *GROUP_COLUMNS.values(),
    m.TOP_OPS,
)


def body(context: Context) -> str | Omitted:
    """Per profiled config: ms per traced step of each op group (stacked bars) and its top ops."""
    frame = context.view
    ok = frame[frame[m.STATUS] == m.STATUS_OK]
    rows = ok[pd.to_numeric(ok[m.OP_WINDOW_S], errors="coerce").notna()] if m.OP_WINDOW_S in ok.columns else ok[:0]
    if rows.empty:
        return Omitted("no config was profiled (profile: true) with op events in its trace")
    rows = rows.assign(config=[figures.config_label(r) for _, r in rows.iterrows()])
    return joined(figure_html(figures.ops_figure(rows)), f'<p class="method">{INTRO}</p>', table_html(rows, COLUMNS))
