"""The report's section "Telemetry": host and GPU use sampled while each config ran."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from tfscale import metrics as m
from tfscale.host.telemetry import read_series
from tfscale.htmlreport import figures
from tfscale.htmlreport.parts import figure_html, joined, table_html
from tfscale.htmlreport.sections.base import Context, Omitted

ID = "telemetry"
TITLE = "Telemetry"

INTRO = """<p class="method">Sampled by the parent process (telemetry_hz per second, default 10) while each config
ran: host CPU use and network bytes (psutil, whole host), the resident memory of the config's worker process trees,
and per GPU of the config (by UUID) through NVML utilisation, memory used, power, SM clock and PCIe throughput. Means
are over the timed windows, or over the run after the model was built when the timed steps were shorter than the
sampling interval (telemetry_window says which). The series of each config is in the run folder (telemetry_path,
CSV); pick a config in each plot's menu.</p>"""


COLUMNS = (
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


def body(context: Context) -> str | Omitted:
    frame, series = context.view, context.series
    if m.TELEMETRY_PATH not in frame or frame[m.TELEMETRY_PATH].isna().all():
        return Omitted("no telemetry in these runs (telemetry_hz: 0, or records from before telemetry)")
    notes = sorted(set(frame[m.GPU_TELEMETRY_NOTE].dropna()))
    return joined(
        INTRO,
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
        "<p>GPU telemetry is empty: " + html.escape("; ".join(notes)) + "</p>" if notes else "",
        table_html(frame, COLUMNS),
    )


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
