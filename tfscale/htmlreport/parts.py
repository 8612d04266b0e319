"""The report pages' shared pieces: plotly.js packed once, figures as JSON for the loader, and tables (inline and
sortable, or packed and paged in the browser past INLINE_ROWS rows)."""

from __future__ import annotations

import base64
import functools
import gzip
import html
import itertools
import json
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.offline

from tfscale import formatting as fmt
from tfscale import metrics as m
from tfscale.untrusted import plot_text

LOADER = Path(__file__).with_name("loader.js")

INLINE_ROWS = 200  # longer tables are packed (gzip + base64) and paged in the browser

_ids = itertools.count()


def reset_ids() -> None:
    """Number a page's plots and tables from 0 again: the same records give the same HTML."""
    global _ids
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


def method_html(text: str) -> str:
    """A note on how a section's figures were made, as plain text."""
    return f'<p class="method">{html.escape(text)}</p>'


def table_html(rows: pd.DataFrame, columns: tuple[str, ...], derived: bool = False) -> str:
    """A section's table, scrolled sideways where wide. `derived`: rows a section computed (not records), shown
    plainly (the table shades the rows of failed configs)."""
    rows = rows.assign(**{m.STATUS: m.STATUS_OK}) if derived else rows
    return f'<div class="tablewrap">{records_table(rows, columns)}</div>'


def joined(*pieces: str) -> str:
    """A section's pieces in order, the empty ones (a figure with nothing to plot) left out."""
    return "\n".join(piece for piece in pieces if piece)
