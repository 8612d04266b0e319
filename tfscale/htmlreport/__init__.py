"""One self-contained HTML report (plotly.js embedded once, gzip-compressed; viewable offline) from one or more runs.

Size and speed at scale: plots are drawn from the figure JSON after plotly.js is unpacked in the browser; with more
than MANY_RUNS runs the plots and section tables show one row per config (medians over the runs, run-to-run spread
as error bars), and tables longer than INLINE_ROWS travel compressed and are paged in the browser.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import itertools
import json
import re
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.offline

from tfscale import findings
from tfscale import formatting as fmt
from tfscale import metrics as m
from tfscale._version import __version__
from tfscale.analysis import (
    BREAKDOWN_METHOD,
    GOODPUT_COLUMNS,
    GOODPUT_METHOD,
    MODES_NOTE,
    NETWORK_METHOD,
    PRECISION_NOTE,
    add_scaling,
    caveat,
    comm_crosscheck,
    condense,
    critical_batches,
    input_comparison,
    input_hints,
    layout_comparison,
    loss_breakdown,
    mode_comparison,
    network_rows,
    precision_summary,
    warnings_for,
)
from tfscale.htmlreport import figures, sections
from tfscale.htmlreport.sections import Omitted, Section
from tfscale.opgroups import GROUP_COLUMNS
from tfscale.store import (
    COMMBENCH_FILE,
    ENV_FILE,
    check_output,
    find_records_files,
    load_env,
    load_results,
    read_records,
    write_atomic,
)
from tfscale.telemetry import read_series
from tfscale.untrusted import plot_text

TEMPLATE = Path(__file__).with_name("template.html")
LOADER = Path(__file__).with_name("loader.js")
MANY_RUNS = 6  # more runs than this: plots and section tables show each config once, over all runs
INLINE_ROWS = 200  # longer tables are packed (gzip + base64) and paged in the browser
MAX_WARNINGS = 50
_ids = itertools.count()


def pack(data: Any) -> str:
    """gzip + base64 of the JSON of `data`, as the report's loader unpacks it."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(gzip.compress(text.encode(), compresslevel=6, mtime=0)).decode()


@functools.lru_cache(maxsize=1)
def packed_plotlyjs() -> str:
    """plotly.js (4.8 MB) gzip-compressed and base64-encoded (about 1.9 MB), once per process."""
    code = plotly.offline.get_plotlyjs().encode()
    return base64.b64encode(gzip.compress(code, compresslevel=9, mtime=0)).decode()


def plotly_scripts() -> str:
    """plotly.js packed, and the loader that unpacks it, draws every figure and renders packed tables."""
    return (
        f'<script id="plotlyjs-gz" type="application/octet-stream">{packed_plotlyjs()}</script>\n'
        f"<script>{LOADER.read_text(encoding='utf-8')}</script>"
    )


TITLE_WIDTH = 110  # characters of a plot title's line (a 1400 px wide page shows about 120 of plotly's title font)
# Templates plotly express writes: its line breaks, between the values of a trace's columns put in as text.
TEMPLATE_KEYS = ("hovertemplate", "texttemplate")
LINE_BREAK = "<br>"


def _shown_as_text(value: Any, key: str = "") -> Any:
    """A figure's JSON with every string (labels, categories, names, titles, templates: many come from records) as
    plotly.js shows it literally (untrusted.plot_text: it reads a subset of HTML in all of them), but for the line
    breaks of templates. Every string alike, so that a category keeps matching its name elsewhere in the figure;
    tfscale's own titles hold no markup."""
    if isinstance(value, str):
        text = plot_text(value)
        return text.replace(plot_text(LINE_BREAK), LINE_BREAK) if key in TEMPLATE_KEYS else text
    if isinstance(value, list):
        return [_shown_as_text(v, key) for v in value]
    if isinstance(value, dict):
        return {k: _shown_as_text(v, k) for k, v in value.items()}
    return value


def figure_html(fig) -> str:
    """A placeholder div and the figure's JSON; the loader draws it once plotly.js is unpacked."""
    if fig is None:
        return ""
    return figure_data_html(json.loads(fig.to_json()))


def figure_data_html(figure: dict) -> str:
    """figure_html of a figure given as plotly's JSON ({"data": [...], "layout": {...}}): pages of hundreds of
    small charts build that directly (a plotly Figure object costs ~8 ms to make and serialise)."""
    div = f"plot-{next(_ids)}"
    plain = _shown_as_text(figure)
    title = plain.get("layout", {}).get("title", {})
    if isinstance(title.get("text"), str):  # plotly.js never wraps a title: a long one ran off the plot
        title["text"] = LINE_BREAK.join(textwrap.wrap(title["text"], TITLE_WIDTH)) or title["text"]
    data = json.dumps(plain, separators=(",", ":")).replace("</", "<\\/")  # "</script>" must not end the element
    return (
        f'<div class="plot"><div id="{div}" class="plotly-graph-div"></div>'
        f'<script type="application/json" class="figure-data" data-for="{div}">{data}</script></div>'
    )


TABLE_COLUMNS = (
    m.CONFIG_ID,
    m.RUN_ID,
    m.STATUS,
    m.REASON,
    m.MODEL,
    m.MODEL_SIZE,
    m.STRATEGY,
    m.CROSS_DEVICE_OPS,
    m.COLLECTIVE,
    m.NUM_PS,
    m.PARTITIONER,
    m.PARALLELISM,
    m.STAGES,
    m.MICRO_BATCHES,
    m.TENSOR_PARALLEL,
    m.NODES,
    m.NETWORK_LINK,
    m.DEVICES_PER_NODE,
    m.REPLICAS,
    m.DEVICE_KIND,
    m.GLOBAL_BATCH_SIZE,
    m.BATCH_POLICY,
    m.PRECISION,
    m.JIT,
    m.PARAMS,
    m.FIRST_STEP_S,
    m.STEP_TIME_MEDIAN_S,
    m.STEP_TIME_CI95_LOW_S,
    m.STEP_TIME_CI95_HIGH_S,
    m.STEP_TIME_MAD_S,
    m.STEP_TIME_CV,
    m.CI_HALF_WIDTH_REL,
    m.CI_MET,
    m.SAMPLES,
    m.MEASURE_STOP,
    m.THROUGHPUT_EXAMPLES_PER_S,
    m.THROUGHPUT_PER_REPLICA_EXAMPLES_PER_S,
    m.SPEEDUP,
    m.SCALING_EFFICIENCY,
    m.SCALING_EFFICIENCY_CI95_LOW,
    m.SCALING_EFFICIENCY_CI95_HIGH,
    m.SCALING,
    m.PEAK_MEMORY_BYTES,
    m.MEMORY_KIND,
    m.HOST_RSS_PEAK_BYTES,
    m.HOST_CPU_UTIL_MEAN_PCT,
    m.GPU_UTIL_MEAN_PCT,
    m.GPU_MEM_PEAK_BYTES,
    m.GPU_POWER_MEAN_W,
    m.NET_BYTES_PER_S,
    m.RANK_THROUGHPUT_EXAMPLES_PER_S,
    m.STRAGGLER,
    m.PORT_RETRIES,
)


def _cell(column: str, value: Any) -> tuple[str, str]:
    """(display text, sort key) of a table cell: the text with its unit (tfscale.formatting.cell), sorted by the
    raw value; empty for missing values, never 0."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "", ""
    if isinstance(value, bool):
        return ("on" if value else "off"), str(int(value))
    if isinstance(value, float | int):
        return fmt.cell(column, value), repr(value)
    if isinstance(value, list):
        return fmt.cell(column, value), str(value)
    return str(value), str(value)


def _column_cells(column: str, values) -> tuple[list[str], list[str]]:
    cells = [_cell(column, v) for v in values]
    return [c[0] for c in cells], [c[1] for c in cells]


LONG_CELL = 40  # characters: a longer cell may be cut by the one-line rows (CSS); its title shows all of it


def _td(text: str, key: str | None = None, cls: str = "") -> str:
    """A table cell: its sort key (sortable tables), a class, and its whole text as a title where it may be cut."""
    sort = f' data-sort="{html.escape(key)}"' if key is not None else ""
    style = f' class="{cls}"' if cls else ""
    title = f' title="{html.escape(text)}"' if len(text) > LONG_CELL else ""
    return f"<td{sort}{style}{title}>{html.escape(text)}</td>"


def packed_table(frame: pd.DataFrame, columns: tuple[str, ...]) -> str:
    """A long table as packed rows (display text, sort keys, failed flag), paged and sorted by the loader."""
    texts, keys = zip(
        *(_column_cells(c, frame[c] if c in frame else [None] * len(frame)) for c in columns), strict=True
    )
    bad = list(frame[m.STATUS] != m.STATUS_OK)
    rows = [{"text": [t[i] for t in texts], "key": [k[i] for k in keys], "bad": bad[i]} for i in range(len(frame))]
    holder = f"table-{next(_ids)}"
    return (
        f'<div id="{holder}" class="bigtable"><p>{len(frame)} rows: unpacking...</p></div>'
        f'<script type="application/octet-stream" class="table-data" data-for="{holder}">'
        f"{pack({'columns': list(columns), 'rows': rows, 'long_cell': LONG_CELL})}</script>"
    )


def records_table(frame: pd.DataFrame, columns: tuple[str, ...] = TABLE_COLUMNS) -> str:
    if len(frame) > INLINE_ROWS:
        return packed_table(frame, columns)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    rows = []
    for _, row in frame.iterrows():
        cls = "" if row[m.STATUS] == m.STATUS_OK else ' class="bad"'
        cells = [_td(*_cell(column, row.get(column))) for column in columns]
        rows.append(f"<tr{cls}>{''.join(cells)}</tr>")
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


LAYOUT_COLUMNS = (
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


def layout_section(rows: pd.DataFrame) -> str | Omitted:
    if rows.empty:
        return Omitted(
            "no workload ran in more than one layout at the same device count (e.g. mirrored with "
            "devices_per_node: 2 and multi_worker_mirrored with nodes: 2)"
        )
    return (
        sections.LAYOUTS
        + figure_html(figures.layout_figure(rows))
        + f'<div class="tablewrap">{records_table(rows, LAYOUT_COLUMNS)}</div>'
    )


CROSSCHECK_COLUMNS = (
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


LOSS_COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.STRATEGY,
    m.DEVICES,
    m.SCALING,
    m.STEP_TIME_MEDIAN_S,
    m.IDEAL_STEP_S,
    m.GAP_S,
    m.GAP_CI95_LOW_S,
    m.GAP_CI95_HIGH_S,
    m.COMM_EXPOSED_S,
    m.COMM_EXPOSED_NOTE,
    m.STRAGGLER_WAIT_S,
    m.INPUT_WAIT_S,
    m.COMPUTE_GROWTH_S,
    m.REST_S,
    m.GAP_FRACTION,
)


def loss_section(frame: pd.DataFrame) -> str | Omitted:
    rows = loss_breakdown(frame)
    if rows.empty:
        return Omitted("no multi-device config with a 1-device baseline to compare with")
    return "\n".join(
        [
            figure_html(figures.loss_figure(rows)),
            f'<p class="method">{html.escape(BREAKDOWN_METHOD)}</p>',
            f'<div class="tablewrap">{records_table(rows.assign(status=m.STATUS_OK), LOSS_COLUMNS)}</div>',
        ]
    )


OPS_COLUMNS = (
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


def ops_section(frame: pd.DataFrame) -> str | Omitted:
    """Per profiled config: ms per traced step of each op group (stacked bars) and its top ops."""
    ok = frame[frame[m.STATUS] == m.STATUS_OK]
    rows = ok[pd.to_numeric(ok[m.OP_WINDOW_S], errors="coerce").notna()] if m.OP_WINDOW_S in ok.columns else ok[:0]
    if rows.empty:
        return Omitted("no config was profiled (profile: true) with op events in its trace")
    rows = rows.assign(config=[figures.config_label(r) for _, r in rows.iterrows()])
    return "\n".join(
        [
            figure_html(figures.ops_figure(rows)),
            f'<p class="method">{sections.OPS}</p>',
            f'<div class="tablewrap">{records_table(rows, OPS_COLUMNS)}</div>',
        ]
    )


INPUT_TABLE_COLUMNS = (
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


def input_section(frame: pd.DataFrame) -> str | Omitted:
    """Synthetic vs files per config, the input-bound verdicts, and which pipeline setting helped."""
    rows = input_comparison(frame)
    if rows.empty:
        return Omitted("no config read files (data: files)")
    bound = int(rows[m.INPUT_BOUND].fillna(False).astype(bool).sum())
    hints = input_hints(frame)
    parts = [
        f"<p>{bound} of {len(rows)} configs that read files are input-bound.</p>",
        *([f"<ul>{''.join(f'<li>{html.escape(h)}</li>' for h in hints)}</ul>"] if hints else []),
    ]
    plot = figures.input_figure(frame)
    if plot is not None:
        parts.append(figure_html(plot))
    parts += [
        f'<p class="method">{sections.INPUT}</p>',
        f'<div class="tablewrap">{records_table(rows.assign(status=m.STATUS_OK), INPUT_TABLE_COLUMNS)}</div>',
    ]
    return "\n".join(parts)


GOODPUT_TABLE_COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.STRATEGY,
    m.DEVICES,
    m.GLOBAL_BATCH_SIZE,
    m.THROUGHPUT_EXAMPLES_PER_S,
    m.GRAD_NOISE_SCALE,
    m.GRAD_NOISE_SCALE_CI95_LOW,
    m.GRAD_NOISE_SCALE_CI95_HIGH,
    m.SCALING_EFFICIENCY,
    *GOODPUT_COLUMNS,
)


def goodput_section(frame: pd.DataFrame) -> str | Omitted:
    """Goodput beside throughput, the critical batch size per workload, and how they were estimated."""
    goodput = pd.to_numeric(frame.get(m.GOODPUT_EXAMPLES_PER_S, pd.Series(dtype=float)), errors="coerce")
    if goodput.isna().all():
        return Omitted("no config of the teacher task (task: teacher) with a measured gradient noise scale")
    rows = frame[goodput.notna()]
    critical = critical_batches(frame)
    items = "".join(f"<li>{html.escape(line)}</li>" for line in critical)
    parts = [f"<p>Critical batch size (about the gradient noise scale) per workload:</p><ul>{items}</ul>"]
    plot = figures.goodput_figure(frame)
    if plot is not None:
        parts.append(figure_html(plot))
    parts += [
        f'<p class="method">{html.escape(GOODPUT_METHOD)}</p>',
        f'<div class="tablewrap">{records_table(rows, GOODPUT_TABLE_COLUMNS)}</div>',
    ]
    return "\n".join(parts)


def energy_section(frame: pd.DataFrame) -> str | Omitted:
    """Examples per joule and per unit of money vs devices, where counters or a price gave them."""
    plots = [
        figures.energy_figure(frame, m.JOULES_PER_EXAMPLE, "examples per joule"),
        figures.energy_figure(frame, m.COST_PER_MILLION_EXAMPLES, "examples per unit of money"),
    ]
    plots = [figure_html(p) for p in plots if p is not None]
    if not plots:
        methods = sorted({str(v) for v in frame.get(m.ENERGY_METHOD, pd.Series(dtype=object)).dropna()})
        why = methods[0] if len(methods) == 1 else "no energy counter read and no price_per_device_hour given"
        return Omitted(why)
    return "\n".join([*plots, f'<p class="method">{sections.ENERGY}</p>'])


def precision_section(frame: pd.DataFrame) -> str:
    """How sure the figures are: how many ok configs met their CI target, which did not and why, and what the CIs
    cover (tfscale.analysis.precision_summary)."""
    summary = precision_summary(frame)
    if summary.measured == 0:
        return "<p>No ok config with a precision record (records from before tfscale 0.4 carry none).</p>"
    items = "".join(
        f"<li>{html.escape(r.label)}: 95 % CI of the median step &plusmn;{r.half_width * 100:.3g} % "
        f"({r.samples} windows; {html.escape(r.stop)})</li>"
        for r in summary.missed
    )
    missed = f"<p>Not within their target:</p><ul>{items}</ul>" if items else ""
    return (
        f"<p><b>{summary.met} of {summary.measured}</b> ok configs have the 95 % CI of their median step within "
        f"their target ({summary.targets}). {html.escape(summary.covers_text())} {html.escape(PRECISION_NOTE)}</p>"
        f"{missed}"
    )


def prediction_section(frame: pd.DataFrame) -> str | Omitted:
    from tfscale.predict import LOGICAL_WARNING, METHOD, holdout, unmodelled

    caveats = "".join(
        f"<li>not predicted: {html.escape(what)}: {html.escape(why)}</li>" for what, why in unmodelled(frame)
    )
    if (frame.get(m.DEVICE_KIND) == "cpu-logical").any():
        caveats += f"<li>warning: {html.escape(LOGICAL_WARNING)}</li>"
    caveats = f"<ul>{caveats}</ul>" if caveats else ""
    checks = holdout(frame)
    if checks.empty:
        return Omitted(
            "no workload and strategy measured at three or more device counts above one with communication timed "
            "(fitted on fewer points, the model's two parameters fit any points: a check would validate nothing)"
        )
    columns = (
        m.MODEL,
        m.STRATEGY,
        m.NETWORK_LINK,
        m.DEVICES,
        m.FITTED_ON,
        m.MEASURED_STEP_S,
        m.PREDICTED_STEP_S,
        m.PREDICTED_STEP_CI95_LOW_S,
        m.PREDICTED_STEP_CI95_HIGH_S,
        m.PREDICTION_ERROR,
        m.INSIDE_INTERVAL,
    )
    return (
        f'<p class="method">{html.escape(METHOD)} <code>tfscale predict RUN --devices 8 16 64</code> '
        f"predicts other counts.</p>{caveats}" + records_table(checks.assign(status=m.STATUS_OK, config_id=""), columns)
    )


def comm_section(frame: pd.DataFrame, sweeps: list[dict]) -> str | Omitted:
    checks = comm_crosscheck(frame)
    if checks.empty and not sweeps:
        return Omitted("no multi-replica data-parallel config and no commbench sweep")
    parts = [
        sections.COMM,
        figure_html(figures.comm_breakdown_figure(checks)),
        figure_html(figures.comm_fraction_figure(checks)),
        figure_html(figures.busbw_figure(sweeps)),
    ]
    if not sweeps:
        parts.append(
            "<p>No commbench sweep in these runs (suite option <code>commbench: true</code> or "
            "<code>tfscale commbench</code>): no bandwidth curve and no comm_time_model_s.</p>"
        )
    checks = checks.assign(status=m.STATUS_OK)  # the table shades failed rows; these are all shown plainly
    parts.append(f'<div class="tablewrap">{records_table(checks, CROSSCHECK_COLUMNS)}</div>')
    return "\n".join(p for p in parts if p)


NETWORK_COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.MODEL_SIZE,
    m.STRATEGY,
    m.NODES,
    m.NETWORK_LINK,
    m.LINK_BYTES_PER_S,
    m.LINK_MEASURED_BYTES_PER_S,
    m.CHECK_LINK_FRACTION,
    m.GRAD_BYTES,
    m.COMM_TIME_ISOLATED_S,
    m.BUSBW_BYTES_PER_S,
    m.BUSBW_LINK_FRACTION,
    m.COMM_VS_LOOPBACK,
    m.STEP_TIME_MEDIAN_S,
    m.SCALING_EFFICIENCY,
)


def network_section(frame: pd.DataFrame) -> str | Omitted:
    rows = network_rows(frame)
    if rows.empty:
        return Omitted("no config ran on simulated hosts (the axis network_link; needs root)")
    return "\n".join(
        p
        for p in [
            f'<p class="method">{html.escape(NETWORK_METHOD)}</p>',
            figure_html(figures.link_fraction_figure(rows)),
            figure_html(figures.efficiency_vs_link_figure(rows)),
            f'<div class="tablewrap">{records_table(rows, NETWORK_COLUMNS)}</div>',
        ]
        if p
    )


MODE_COLUMNS = (
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


def modes_section(frame: pd.DataFrame) -> str | Omitted:
    rows = mode_comparison(frame)
    if rows.empty:
        return Omitted("no workload ran in more than one parallelism mode at the same device count (axis parallelism)")
    methods = sorted(set(rows[m.MODEL_PARALLEL_METHOD].dropna()))
    return "\n".join(
        p
        for p in [
            f'<p class="method">{html.escape(MODES_NOTE)}</p>',
            figure_html(
                figures.modes_figure(
                    rows, m.THROUGHPUT_EXAMPLES_PER_S, "Throughput per parallelism mode", "examples/s (global)"
                )
            ),
            figure_html(
                figures.modes_figure(
                    rows,
                    m.PARAM_BYTES_PER_DEVICE,
                    "Parameters held by the most loaded device",
                    "MiB per device",
                    1 / 2**20,
                )
            ),
            figure_html(
                figures.modes_figure(
                    rows[rows[m.PARALLELISM] == "pipeline"],
                    m.BUBBLE_FRACTION,
                    "Pipeline bubble, measured (hover: theory (S-1)/(M+S-1))",
                    "idle fraction",
                )
            ),
            "".join(f'<p class="method">{html.escape(text)}</p>' for text in methods),
            f'<div class="tablewrap">{records_table(rows, MODE_COLUMNS)}</div>',
        ]
        if p
    )


TELEMETRY_COLUMNS = (
    m.CONFIG_ID,
    m.MODEL,
    m.STRATEGY,
    m.DEVICES,
    m.HOST_CPU_UTIL_MEAN_PCT,
    m.NET_BYTES_PER_S,
    m.GPU_UTIL_MEAN_PCT,
    m.GPU_MEM_PEAK_BYTES,
    m.GPU_POWER_MEAN_W,
    m.TELEMETRY_SAMPLES,
    m.TELEMETRY_WINDOW,
    m.GPU_TELEMETRY_NOTE,
    m.TELEMETRY_PATH,
)


def telemetry_section(frame: pd.DataFrame, series: dict[str, pd.DataFrame]) -> str | Omitted:
    if m.TELEMETRY_PATH not in frame or frame[m.TELEMETRY_PATH].isna().all():
        return Omitted("no telemetry in these runs (telemetry_hz: 0, or records from before telemetry)")
    parts = [
        sections.TELEMETRY,
        figure_html(figures.telemetry_figure(series, "host_cpu_percent", 1.0, "Host CPU use over time", "%")),
        figure_html(
            figures.telemetry_figure(
                series,
                "workers_rss_bytes",
                1 / 2**20,
                "Workers' resident memory over time (process trees summed)",
                "MiB",
            )
        ),
        figure_html(figures.telemetry_figure(series, "gpu_util_percent", 1.0, "GPU utilisation over time (NVML)", "%")),
        figure_html(
            figures.telemetry_figure(series, "gpu_mem_used_bytes", 1 / 2**20, "GPU memory used over time (NVML)", "MiB")
        ),
    ]
    notes = sorted(set(frame[m.GPU_TELEMETRY_NOTE].dropna()))
    if notes:
        parts.append("<p>GPU telemetry is empty: " + html.escape("; ".join(notes)) + "</p>")
    parts.append(f'<div class="tablewrap">{records_table(frame, TELEMETRY_COLUMNS)}</div>')
    return "\n".join(p for p in parts if p)


def load_series(frame: pd.DataFrame, run_dirs: dict[tuple[str, str], Path]) -> dict[str, pd.DataFrame]:
    """The telemetry CSV of each config that has one, by a short label (telemetry.read_series: only a file inside
    the record's own run folder)."""
    series = {}
    for _, row in frame.iterrows():
        path, folder = row.get(m.TELEMETRY_PATH), run_dirs.get((row[m.SUITE], row[m.RUN_ID]))
        table = read_series(folder, path) if isinstance(path, str) and folder is not None else None
        if table is not None:
            series[figures.config_label(row)] = table
    return series


def _env_rows(prefix: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [row for k, v in value.items() for row in _env_rows(f"{prefix}.{k}" if prefix else k, v)]
    return [(prefix, json.dumps(value) if isinstance(value, list) else str(value))]


def env_section(envs: dict[str, dict[str, Any]]) -> str:
    """Environment of each run, one column per run; rows where runs differ are highlighted."""
    if not envs:
        return "<p>No env.json found beside these records.</p>"
    flat = {run: dict(_env_rows("", env)) for run, env in envs.items()}
    keys = sorted({k for env in flat.values() for k in env} - {"captured_at"})
    head = "".join(f"<th>{html.escape(run)}</th>" for run in flat)
    rows = []
    for key in keys:
        values = [flat[run].get(key, "") for run in flat]
        cls = ' class="differs"' if len(set(values)) > 1 else ""
        cells = "".join(f"<td>{html.escape(v)}</td>" for v in values)
        rows.append(f"<tr{cls}><th>{html.escape(key)}</th>{cells}</tr>")
    return f'<table class="env"><thead><tr><th>key</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


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


def warnings_html(notes: list[str]) -> str:
    """The warnings as a list: a warning repeated by several runs once with its count, at most MAX_WARNINGS."""
    if not notes:
        return "<p>None.</p>"
    counts = Counter(notes)
    notes = [n + (f" (in {counts[n]} records)" if counts[n] > 1 else "") for n in dict.fromkeys(notes)]
    items = "".join(
        f'<li class="{"prominent" if i == 0 and "Logical CPU" in n else ""}">{html.escape(n)}</li>'
        for i, n in enumerate(notes[:MAX_WARNINGS])
    )
    more = f"<li>... and {len(notes) - MAX_WARNINGS} more (see the table)</li>" if len(notes) > MAX_WARNINGS else ""
    return f"<ul>{items}{more}</ul>"


def render(
    frame: pd.DataFrame,
    envs: dict[str, dict[str, Any]],
    title: str,
    sweeps: list[dict] | None = None,
    series: dict[str, pd.DataFrame] | None = None,
) -> str:
    """The report's HTML text for an (unanalysed) records frame."""
    global _ids
    _ids = itertools.count()  # the same records give the same HTML
    frame = add_scaling(frame)
    view, view_note = plot_view(frame)
    plots = [
        figure_html(build(view))
        for build in (
            figures.throughput_figure,
            figures.efficiency_figure,
            figures.mfu_figure,
            figures.step_time_figure,
            figures.memory_figure,
        )
    ]
    plots = [p for p in plots if p]
    if view_note and plots:
        plots.insert(0, f'<p class="method">{html.escape(view_note)}</p>')
    counts = frame[m.STATUS].value_counts().to_dict()
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    parts = [
        Section("precision", "How sure are these numbers", precision_section(frame)),
        Section("warnings", "Warnings", f'<div class="warnings">{warnings_html(warnings_for(frame))}</div>'),
        Section("method", "How these figures were measured", sections.MEASURED),
        Section("plots", "Plots", "\n".join(plots) if plots else Omitted("no successful config to plot")),
        Section("layouts", "One node vs several nodes at equal device counts", layout_section(layout_comparison(view))),
        Section("communication", "Gradient communication", comm_section(view, sweeps or [])),
        Section("modes", "Data vs model parallelism at equal device counts", modes_section(view)),
        Section("network", "Simulated hosts: communication against the link", network_section(view)),
        Section("loss", "Where the efficiency went", loss_section(view)),
        Section("input", "Input pipelines: synthetic vs files", input_section(view)),
        Section("goodput", "Goodput: what a bigger batch costs in convergence", goodput_section(view)),
        Section("ops", "Where the step goes, by op", ops_section(view)),
        Section("energy", "Energy and cost per example", energy_section(view)),
        Section(
            "prediction", "Prediction check: the largest device count from the smaller ones", prediction_section(view)
        ),
        Section("telemetry", "Telemetry", telemetry_section(view, series or {})),
        Section(
            "configs", "Every config", f'{sections.EVERY_CONFIG}<div class="tablewrap">{records_table(frame)}</div>'
        ),
        Section("environment", "Environment", sections.ENVIRONMENT + env_section(envs)),
    ]
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
    largest cause, and the configs that failed (tfscale.findings)."""
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
