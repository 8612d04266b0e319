"""One self-contained HTML report (plotly.js embedded once, gzip-compressed; viewable offline) from one or more runs.

Size and speed at scale: plots are drawn from the figure JSON after plotly.js is unpacked in the browser; with more
than MANY_RUNS runs the plots and section tables show one row per config (medians over the runs, run-to-run spread
as error bars), and tables longer than INLINE_ROWS travel compressed and are paged in the browser.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pandas as pd

from tfscale import metrics as m
from tfscale._version import __version__
from tfscale.analysis import add_scaling, caveat, condense, findings
from tfscale.htmlreport.parts import (  # noqa: F401  (the names other pages and tests use)
    INLINE_ROWS,
    TITLE_WIDTH,
    _td,
    figure_data_html,
    figure_html,
    pack,
    plotly_scripts,
    records_table,
    reset_ids,
)
from tfscale.htmlreport.sections import Context, Omitted, Section, build
from tfscale.htmlreport.sections.telemetry import load_series
from tfscale.htmlreport.sections.warnings import MAX_WARNINGS, warnings_html  # noqa: F401
from tfscale.store.records import (
    COMMBENCH_FILE,
    ENV_FILE,
    check_output,
    find_records_files,
    load_env,
    load_results,
    read_records,
    write_atomic,
)

TEMPLATE = Path(__file__).with_name("template.html")

MANY_RUNS = 6  # more runs than this: plots and section tables show each config once, over all runs


def plot_view(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The frame the plots and section tables show, and a sentence saying what it is. `frame` is analysed."""
    runs = frame[m.RUN_ID].nunique()
    if runs <= MANY_RUNS:
        return frame, ""
    return condense(frame), (
        f"These {runs} runs are shown one config at a time in the plots and section tables: "
        "medians over the runs, error bars and boxes showing the spread of the runs' medians. "
        "The last table lists every record."
    )


def render(
    frame: pd.DataFrame,
    envs: dict[str, dict[str, Any]],
    title: str,
    sweeps: list[dict] | None = None,
    series: dict[str, pd.DataFrame] | None = None,
) -> str:
    """The report's HTML text for an (unanalysed) records frame."""
    reset_ids()
    frame = add_scaling(frame)
    view, view_note = plot_view(frame)
    parts = build(Context(frame, view, view_note, envs, sweeps or [], series or {}))
    counts = frame[m.STATUS].value_counts().to_dict()
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    replacements = {
        "{{title}}": html.escape(title),
        "{{plotlyjs}}": plotly_scripts(),
        "{{summary}}": html.escape(
            f"{len(frame)} configs: {summary}; runs: {', '.join(envs) or 'n/a'}; tfscale {__version__}"
        ),
        "{{caveat}}": f'<p class="caveat">{html.escape(caveat(frame))}</p>' if caveat(frame) else "",
        "{{findings}}": findings_section(view),
        "{{contents}}": contents(parts),
        "{{sections}}": "\n".join(
            f'<h2 id="{part.id}">{html.escape(part.title)}</h2>\n{part.body}'
            for part in parts
            if not isinstance(part.body, Omitted)
        ),
    }
    # One pass over the template, so text inserted for one slot is never scanned for another.
    return re.sub(r"\{\{\w+\}\}", lambda match: replacements[match.group(0)], TEMPLATE.read_text(encoding="utf-8"))


def contents(parts: list[Section]) -> str:
    """Links to the sections shown, and one line naming those left out and why."""
    shown = "".join(
        f'<li><a href="#{p.id}">{html.escape(p.title)}</a></li>' for p in parts if not isinstance(p.body, Omitted)
    )
    left = "; ".join(f"{p.title}: {p.body.reason}" for p in parts if isinstance(p.body, Omitted))
    return f"<ol>{shown}</ol>" + (f"<p>Left out, nothing to show: {html.escape(left)}.</p>" if left else "")


FINDINGS_COLUMNS = ("devices", "examples/s", "speedup", "efficiency")  # right-aligned figures


def findings_section(frame: pd.DataFrame) -> str:
    """The headline: per workload the best layout at each device count, the loss at the largest count and its
    largest cause, and the configs that failed (tfscale.analysis.findings)."""
    best = findings.best_rows(frame)
    failed = findings.failed_lines(frame)
    if best.empty:
        table = "<p>No config succeeded.</p>"
    else:
        rows = findings.findings_table(best)
        head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
        body = "".join(
            "<tr>" + "".join(_td(v, cls="figure" if c in FINDINGS_COLUMNS else "") for c, v in row.items()) + "</tr>"
            for row in rows
        )
        table = f'<table class="findings"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    items = [loss.sentence() for loss in findings.losses(frame, best)]
    if failed:
        shown = failed[:MAX_WARNINGS]
        items.append(f"{len(failed)} config(s) did not succeed: " + "; ".join(shown))
    else:
        items.append(f"All {len(frame)} configs succeeded.")
    notes = "".join(f"<li>{html.escape(item)}</li>" for item in items)
    return f'{table}<ul class="findings">{notes}</ul><p class="method">{html.escape(findings.METHOD)}</p>'


def write_report(paths: list[str | Path], output: str | Path, title: str | None = None) -> Path:
    """Load records under `paths`, render, and write one HTML file. Returns its path."""
    files = [f for p in paths for f in find_records_files(p)]
    read = [*files, *(f.parent / name for f in files for name in (ENV_FILE, COMMBENCH_FILE))]
    output = check_output(output, read)
    frame = load_results(*paths)
    envs, sweeps, run_dirs = {}, [], {}
    for records_file in files:
        run_dirs[(records_file.parent.parent.name, records_file.parent.name)] = records_file.parent
        env = load_env(records_file.parent)
        if env:
            envs[f"{records_file.parent.parent.name}/{records_file.parent.name}"] = env
        if (records_file.parent / COMMBENCH_FILE).is_file():
            sweeps += list(read_records(records_file.parent / COMMBENCH_FILE))
    if title is None:
        title = "tfscale report: " + ", ".join(sorted(frame[m.SUITE].dropna().unique()))
    # over many runs the telemetry table is per config; one time series per record would drown the plots
    series = load_series(frame, run_dirs) if frame[m.RUN_ID].nunique() <= MANY_RUNS else {}
    write_atomic(output, render(frame, envs, title, sweeps, series))
    return output
