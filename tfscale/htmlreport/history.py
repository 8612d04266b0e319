"""`tfscale history`'s outputs: its terminal lines, a Markdown table of the steps and one self-contained HTML page
(a table of the steps first, then one small chart per config and figure, each run with its 95 % CI, steps marked)."""

from __future__ import annotations

import functools
import html
import xml.etree.ElementTree as ET

import pandas as pd
import plotly.io as pio

from tfscale import metrics as m
from tfscale.analysis.history import (
    CHANGES,
    COMMIT,
    CONFIG,
    FIGURE,
    FIRST_RUN,
    HIGH,
    LABEL,
    LOW,
    MACHINE,
    ORDER,
    PENDING,
    PREVIOUS_RUN,
    VALUE,
    WORSE,
    History,
    step_line,
)
from tfscale.htmlreport.parts import figure_data_html, plotly_scripts
from tfscale.untrusted import markdown_text as plain_markdown
from tfscale.untrusted import visible, xml_text


def summary_lines(found: History) -> list[str]:
    """What the terminal shows: the runs and series read, each step (worse first), what a gate would fail on."""
    machines = found.runs[MACHINE].nunique() if not found.runs.empty else 0
    series = found.series.groupby([MACHINE, m.CONFIG_ID, FIGURE]).ngroups if not found.series.empty else 0
    lines = [*found.notes, f"{len(found.runs)} run(s) on {machines} machine(s); {series} series"]
    lines[-1] += f"; method: {found.method}"
    if found.steps.empty:
        return [*lines, "no step found"]
    ordered = found.steps.sort_values([WORSE, ORDER], ascending=[False, True], kind="stable")
    for _, row in ordered.iterrows():
        lines.append(("step: " if not row[PENDING] else "pending: ") + step_line(row))
        lines.append(f"  since run {row[PREVIOUS_RUN]}: {row[CHANGES] or 'nothing recorded differs'}")
    failing = found.failing()
    if not failing.empty:
        lines.append(f"{len(failing)} step(s) for the worse start in the newest runs (--fail-on-change fails)")
    return lines


def markdown_text(found: History) -> str:
    """The steps as a Markdown table (a pull-request or job summary); text from records and environments as plain
    text (untrusted.markdown_text)."""
    if found.steps.empty:
        return "No step found in the history.\n"
    rows = ["| machine | step | since the run before |", "|---|---|---|"]
    for _, row in found.steps.iterrows():
        changes = f"{row[PREVIOUS_RUN]}: {row[CHANGES] or 'nothing recorded differs'}"
        bold = "**" if row[WORSE] else ""
        cells = (plain_markdown(row[MACHINE]), f"{bold}{plain_markdown(step_line(row))}{bold}", plain_markdown(changes))
        rows.append(f"| {' | '.join(cells)} |")
    return "\n".join(rows) + "\n"


JUNIT_SUITE = "tfscale history"


def junit_xml(found: History) -> str:
    """The history as JUnit XML: one <testcase> per series (machine, config, figure), failed where the newest runs
    start a step for the worse (what --fail-on-change fails on), its steps in the output otherwise."""
    suite = ET.Element("testsuite", name=JUNIT_SUITE)
    failing = found.failing()
    failures = 0
    groups = found.series.groupby([MACHINE, m.CONFIG_ID, FIGURE], sort=False)
    for (machine, config_id, figure), points in groups:
        name = xml_text(visible(f"{points[CONFIG].iloc[0]} · {figure} ({config_id}) on {machine}"))
        case = ET.SubElement(suite, "testcase", classname=JUNIT_SUITE, name=name)
        own = (found.steps[MACHINE] == machine) & (found.steps[m.CONFIG_ID] == config_id)
        own &= found.steps[FIGURE] == figure
        fails = failing[failing.index.isin(found.steps.index[own])]
        lines = [step_line(row) for _, row in found.steps[own].iterrows()] or ["no step"]
        if not fails.empty:
            failures += 1
            message = xml_text(visible("; ".join(step_line(row) for _, row in fails.iterrows())))
            ET.SubElement(case, "failure", message=message, type="step for the worse").text = message
        else:
            ET.SubElement(case, "system-out").text = xml_text(visible("; ".join(lines)))
    tests = str(groups.ngroups if not found.series.empty else 0)
    suite.attrib.update(tests=tests, failures=str(failures), errors="0", skipped="0")
    root = ET.Element("testsuites", name=JUNIT_SUITE, tests=tests, failures=str(failures), errors="0")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _rounded(values: list, digits: int) -> list:
    """Values to `digits` significant digits (a page of 250 charts x 200 runs is mostly numbers), None for missing."""
    return [None if v is None or v != v else float(f"{v:.{digits}g}") for v in values]


@functools.cache
def _template() -> dict:
    """plotly's default template as JSON, what every go.Figure of the report carries."""
    return pio.templates[pio.templates.default].to_plotly_json()


def series_figure(points: pd.DataFrame, steps: pd.DataFrame, title: str) -> dict:
    """One series as plotly JSON: each run's figure with its 95 % CI, the steps as dashed lines at their first run
    (red: for the worse). Run ids are categories (one that reads as a number or a date stays in run order), so a
    step's line is at its first run's place in the series: plotly reads a shape's x on a category axis as a number
    (run id 20261204 drew the line at x = 20 million and squeezed the points into one)."""
    values, runs = points[VALUE].tolist(), points[m.RUN_ID].astype(str).tolist()
    low = [None if lo is None or lo != lo else v - lo for v, lo in zip(values, points[LOW].tolist(), strict=True)]
    high = [None if hi is None or hi != hi else hi - v for v, hi in zip(values, points[HIGH].tolist(), strict=True)]
    error = {"type": "data", "array": _rounded(high, 4), "arrayminus": _rounded(low, 4), "visible": True}
    trace = {"type": "scatter", "mode": "lines+markers", "x": runs}
    trace |= {"y": _rounded(values, 6), "error_y": error}
    shapes = [
        {
            "type": "line",
            "xref": "x",
            "x0": runs.index(str(step[FIRST_RUN])),
            "x1": runs.index(str(step[FIRST_RUN])),
            "yref": "y domain",
            "y0": 0,
            "y1": 1,
            "line": {"dash": "dash", "color": "#d62728" if step[WORSE] else "#2ca02c"},
        }
        for _, step in steps.iterrows()
    ]
    layout = {"title": {"text": title}, "height": 260, "margin": {"l": 50, "r": 10, "t": 40, "b": 40}}
    layout |= {"showlegend": False, "xaxis": {"type": "category"}, "shapes": shapes, "template": _template()}
    return {"data": [trace], "layout": layout}


def _step_rows(steps: pd.DataFrame) -> str:
    cells = []
    for _, row in steps.iterrows():
        changes = row.get(CHANGES) or f"nothing recorded differs from run {row[PREVIOUS_RUN]}"
        cells.append(
            f'<tr class="{"worse" if row[WORSE] else "better"}"><td>{html.escape(row[MACHINE])}</td>'
            f"<td>{html.escape(step_line(row))}</td><td>{html.escape(str(row[PREVIOUS_RUN]))}</td>"
            f"<td>{html.escape(changes)}</td></tr>"
        )
    return "".join(cells) or '<tr><td colspan="4">none</td></tr>'


def _run_rows(runs: pd.DataFrame) -> str:
    machines = {text: n + 1 for n, text in enumerate(runs[MACHINE].unique())}
    return "".join(
        f"<tr><td>{html.escape(str(r[m.RUN_ID]))}</td><td>{html.escape(str(r[m.STARTED_AT]))}</td>"
        f"<td>{machines[r[MACHINE]]}</td><td>{html.escape(str(r[COMMIT] or ''))}</td>"
        f"<td>{html.escape(str(r[LABEL] or ''))}</td></tr>"
        for _, r in runs.iterrows()
    )


def page(found: History, suite: str) -> str:
    """The history page: steps first (with what changed between the runs on either side), then the series, one
    chart each, then the runs."""
    steps = found.steps
    charts = []
    for (machine, config_id, figure), points in found.series.groupby([MACHINE, m.CONFIG_ID, FIGURE], sort=False):
        own = steps[(steps[MACHINE] == machine) & (steps[m.CONFIG_ID] == config_id) & (steps[FIGURE] == figure)]
        title = f"{points[CONFIG].iloc[0]} · {figure}"
        charts.append(figure_data_html(series_figure(points.sort_values(ORDER), own, title)))
    machines = "".join(f"<li>{n + 1}: {html.escape(t)}</li>" for n, t in enumerate(found.runs[MACHINE].unique()))
    notes = "".join(f'<p class="note">{html.escape(note)}</p>' for note in found.notes)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tfscale history: {html.escape(suite)}</title>
<style>body {{ font-family: system-ui, sans-serif; margin: 1.5em; }} table {{ border-collapse: collapse;
font-size: .85em; }} th, td {{ border: 1px solid #ddd; padding: 2px 6px; }} tr.worse td {{ background: #fde8e8; }}
.note {{ color: #8a6d00; }} .plot {{ display: inline-block; width: 32%; min-width: 380px; }}</style></head><body>
<h1>tfscale history: {html.escape(suite)}</h1>
{notes}<p>{len(found.runs)} run(s); series per machine (never mixed):</p><ul>{machines}</ul>
<p>Steps: {html.escape(found.method)}.</p>
<h2>Steps found</h2>
<table><tr><th>machine</th><th>step</th><th>run before</th><th>what changed since the run before</th></tr>
{_step_rows(steps)}</table>
<h2>Series</h2>
{"".join(charts)}
<h2>Runs</h2>
<table><tr><th>run</th><th>started</th><th>machine</th><th>commit</th><th>label</th></tr>{_run_rows(found.runs)}</table>
{plotly_scripts()}
</body></html>
"""
