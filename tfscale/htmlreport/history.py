"""`tfscale history`'s outputs: its terminal lines, a Markdown table of the steps and one self-contained HTML page
(a table of the steps first, then one small chart per config and figure, each run with its 95 % CI, steps marked)."""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from tfscale import metrics as m
from tfscale.htmlreport import figure_html, plotly_scripts
from tfscale.runhistory import CONFIG, FIGURE, HIGH, LOW, MACHINE, ORDER, PENDING, VALUE, WORSE, History, step_line


def summary_lines(found: History) -> list[str]:
    """What the terminal shows: the runs and series read, each step (worse first), what a gate would fail on."""
    machines = found.runs[MACHINE].nunique() if not found.runs.empty else 0
    series = found.series.groupby([MACHINE, m.CONFIG_ID, FIGURE]).ngroups if not found.series.empty else 0
    lines = [f"{len(found.runs)} run(s) on {machines} machine(s); {series} series; method: {found.method}"]
    if found.steps.empty:
        return [*lines, "no step found"]
    ordered = found.steps.sort_values([WORSE, ORDER], ascending=[False, True], kind="stable")
    lines += [("step: " if not row[PENDING] else "pending: ") + step_line(row) for _, row in ordered.iterrows()]
    failing = found.failing()
    if not failing.empty:
        lines.append(f"{len(failing)} step(s) for the worse start in the newest runs (--fail-on-change fails)")
    return lines


def markdown_text(found: History) -> str:
    """The steps as a Markdown table (a pull-request or job summary)."""
    if found.steps.empty:
        return "No step found in the history.\n"
    rows = ["| machine | step |", "|---|---|"]
    for _, row in found.steps.iterrows():
        text = step_line(row).replace("|", "\\|")
        rows.append(
            f"| {row[MACHINE].replace('|', '/')} | {'**' if row[WORSE] else ''}{text}{'**' if row[WORSE] else ''} |"
        )
    return "\n".join(rows) + "\n"


def series_figure(points: pd.DataFrame, steps: pd.DataFrame, title: str) -> go.Figure:
    """One series: each run's figure with its 95 % CI, the steps as vertical lines at their first run."""
    low = (points[VALUE] - points[LOW]).where(points[LOW].notna())
    high = (points[HIGH] - points[VALUE]).where(points[HIGH].notna())
    fig = go.Figure(
        go.Scatter(
            x=points[m.RUN_ID],
            y=points[VALUE],
            mode="lines+markers",
            error_y={"type": "data", "array": high, "arrayminus": low, "visible": True},
        )
    )
    for _, step in steps.iterrows():
        fig.add_vline(x=step["first_run"], line_dash="dash", line_color="#d62728" if step[WORSE] else "#2ca02c")
    fig.update_layout(title=title, height=260, margin={"l": 50, "r": 10, "t": 40, "b": 40}, showlegend=False)
    return fig


def page(found: History, suite: str) -> str:
    """The history page: steps first, then the series, one chart each."""
    steps = found.steps
    step_rows = "".join(
        f'<tr class="{"worse" if r[WORSE] else "better"}"><td>{html.escape(r[MACHINE])}</td>'
        f"<td>{html.escape(step_line(r))}</td></tr>"
        for _, r in steps.iterrows()
    )
    charts = []
    for (machine, config_id, figure), points in found.series.groupby([MACHINE, m.CONFIG_ID, FIGURE], sort=False):
        own = steps[(steps[MACHINE] == machine) & (steps[m.CONFIG_ID] == config_id) & (steps[FIGURE] == figure)]
        title = f"{points[CONFIG].iloc[0]} · {figure}"
        charts.append(figure_html(series_figure(points.sort_values(ORDER), own, title)))
    machines = "".join(f"<li>{html.escape(text)}</li>" for text in found.runs[MACHINE].unique())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tfscale history: {html.escape(suite)}</title>
<style>body {{ font-family: system-ui, sans-serif; margin: 1.5em; }} table {{ border-collapse: collapse;
font-size: .85em; }} th, td {{ border: 1px solid #ddd; padding: 2px 6px; }} tr.worse td {{ background: #fde8e8; }}
.plot {{ display: inline-block; width: 32%; min-width: 380px; }}</style></head><body>
<h1>tfscale history: {html.escape(suite)}</h1>
<p>{len(found.runs)} run(s); series per machine (never mixed):</p><ul>{machines}</ul>
<p>Steps: {html.escape(found.method)}.</p>
<h2>Steps found</h2>
<table><tr><th>machine</th><th>step</th></tr>{step_rows or '<tr><td colspan="2">none</td></tr>'}</table>
<h2>Series</h2>
{"".join(charts)}
{plotly_scripts()}
</body></html>
"""
