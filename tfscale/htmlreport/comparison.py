"""One self-contained HTML page comparing two sweeps (tfscale.analysis.compare rows + environment differences)."""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from tfscale import metrics as m
from tfscale.analysis.compare import GATE_MIN_PROCESSES, NO_VERDICT_NOTE, TESTED_ON, Lost
from tfscale.htmlreport.parts import figure_html, plotly_scripts, records_table

COLUMNS = (
    m.CONFIG_ID,
    "matched_by",
    m.MODEL,
    "mode",
    "layout",
    "base_throughput",
    "new_throughput",
    "throughput_change",
    "throughput_change_ci95_low",
    "throughput_change_ci95_high",
    "base_efficiency",
    "new_efficiency",
    "efficiency_change",
    "step_time_ratio",
    "shift_rel",
    "shift_ci95_low_rel",
    "shift_ci95_high_rel",
    TESTED_ON,
    "mann_whitney_u",
    "p_value",
    "q_value",
    "significant",
    "verdict",
    "no_verdict",
)


def change_figure(rows: pd.DataFrame) -> go.Figure:
    labels = [f"{r[m.MODEL]} {r['mode']} {r['layout']} · {r[m.CONFIG_ID]}" for _, r in rows.iterrows()]
    colours = [
        "#d62728" if r["regression"] else "#2ca02c" if r["improvement"] else "#7f7f7f" for _, r in rows.iterrows()
    ]
    fig = go.Figure(go.Bar(x=labels, y=rows["throughput_change"] * 100, marker_color=colours))
    fig.update_layout(
        title="Throughput change, NEW vs BASE (red: significant regression, green: significant "
        "improvement, grey: within the threshold or not significant)",
        yaxis_title="%",
        height=460,
        xaxis_tickangle=-30,
        margin={"b": 160},
    )
    return fig


def lost_section(lost: list[Lost]) -> str:
    """The configs ok in BASE that NEW cannot be compared on, each with its status and reason."""
    if not lost:
        return "<p>None: every config ok in BASE is ok in NEW.</p>"
    rows = "".join(
        f"<tr><td>{html.escape(c.config_id)}</td><td>{html.escape(c.model)}</td><td>{html.escape(c.mode)}</td>"
        f"<td>{html.escape(c.layout)}</td><td><b>{html.escape(c.status)}</b></td>"
        f"<td>{html.escape(c.reason or '')}</td></tr>"
        for c in lost
    )
    return (
        "<table><tr><th>config_id</th><th>model</th><th>mode</th><th>layout</th><th>in NEW</th><th>reason</th></tr>"
        f"{rows}</table>"
    )


def _warnings(lines) -> str:
    """What makes BASE and NEW unlike, before any figure."""
    if not lines:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return f'<ul class="loaderror">{items}</ul>'


def render_comparison(
    rows: pd.DataFrame,
    env_diffs: list[tuple[str, str, str]],
    base: str,
    new: str,
    threshold: float,
    lost: list[Lost] | None = None,
    warnings: list[str] | tuple[str, ...] = (),
) -> str:
    plot = figure_html(change_figure(rows)) if not rows.empty else ""
    regressions = int(rows["regression"].sum()) if not rows.empty else 0
    env_rows = "".join(
        f'<tr class="differs"><th>{html.escape(k)}</th><td>{html.escape(a)}</td><td>{html.escape(b)}</td></tr>'
        for k, a, b in env_diffs
    )
    table = records_table(rows.assign(status=m.STATUS_OK), COLUMNS) if not rows.empty else "<p>No config matched.</p>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tfscale compare</title>
<style>body {{ font-family: system-ui, sans-serif; margin: 1.5em; }} table {{ border-collapse: collapse;
font-size: .82em; }} th, td {{ border: 1px solid #ddd; padding: 2px 6px; }} tr.differs td {{ background: #fff3cd; }}
.pager {{ margin: .4em 0; }} .loaderror {{ font-weight: bold; background: #fde8e8; padding: .5em; }}
</style></head><body>
<h1>tfscale compare</h1>
<p>BASE: {html.escape(base)}<br>NEW: {html.escape(new)}</p>
{_warnings(warnings)}
<p>{len(rows)} configs matched (by config_id, else by axes); {regressions} significant regression(s) beyond
{threshold:.0%}. Verdict: the 95 % CI of the throughput change (throughput_change_ci95_*) from each side's
process medians, where both sides ran the config in {GATE_MIN_PROCESSES} or more fresh processes (Hodges-Lehmann
shift of the log medians with its Mann-Whitney order-statistic CI): a regression where the CI lies wholly beyond the
threshold, slower or faster where it lies wholly on one side of 0, else the same within noise. Configs
{html.escape(NO_VERDICT_NOTE)}. For reading: a two-sided Mann-Whitney U test on what was measured (tested_on:
process medians, else each side's windows of its one process), q-values by Benjamini-Hochberg, and the
Hodges-Lehmann step-time shift NEW - BASE relative to BASE's median step with its 95 % CI (shift_ci95_*).</p>
{plot}
<h2>Per config</h2>{table}
<h2>Ok in BASE, not ok in NEW</h2>{lost_section(lost or [])}
<h2>Environment differences</h2>
<table><tr><th>key</th><th>BASE</th><th>NEW</th></tr>{env_rows or '<tr><td colspan="3">none</td></tr>'}</table>
{plotly_scripts()}
</body></html>"""
