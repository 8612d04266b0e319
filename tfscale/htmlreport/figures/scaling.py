"""The report's scaling figures: throughput, efficiency, MFU, step time and memory against devices; layouts and
parallelism modes at equal device counts."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from tfscale import metrics as m
from tfscale.htmlreport.figures.common import (
    DATA_COLOR,
    FAMILY_COLORS,
    IDEAL,
    MIB,
    _bars,
    _ci_error_columns,
    _facet_rows,
    _layout,
    _ok,
    _per_layout_line,
    config_label,
    ideal_rows,
    label_colors,
    workload_label,
)


def throughput_figure(frame: pd.DataFrame, wrap: int = 3) -> go.Figure | None:
    ok = _ok(frame)
    if ok.empty:
        return None
    ok = _ci_error_columns(ok)
    ok = pd.concat([ok, ideal_rows(ok)], ignore_index=True)
    fig = px.line(
        ok,
        x=m.DEVICES,
        y=m.THROUGHPUT_EXAMPLES_PER_S,
        color="strategy_label",
        color_discrete_map=label_colors(ok),
        symbol="strategy_label",
        facet_col="workload",
        facet_col_wrap=wrap,
        markers=True,
        line_dash=m.RUN_ID if ok[m.RUN_ID].nunique() > 1 else None,
        error_y="ci_plus",
        error_y_minus="ci_minus",
        hover_data=[m.CONFIG_ID, m.GLOBAL_BATCH_SIZE, m.STEP_TIME_MEDIAN_S],
        labels={
            m.DEVICES: "devices (nodes x devices per node)",
            m.THROUGHPUT_EXAMPLES_PER_S: "examples/s (global, median step)",
        },
    )
    fig.update_yaxes(rangemode="tozero")  # a throughput axis that starts at 0: heights compare as ratios
    fig.update_traces(line_dash="dot", marker_symbol="line-ew", selector={"name": IDEAL})
    return _layout(fig, f"Throughput vs devices (bars: {_bars(frame)}; dotted: ideal)", _facet_rows(ok, wrap))


def efficiency_figure(frame: pd.DataFrame, wrap: int = 3) -> go.Figure | None:
    ok = _ok(frame)
    ok = ok[ok[m.SCALING_EFFICIENCY].notna()]
    if ok.empty:
        return None
    ok["workload"] = ok["workload"] + " (" + ok[m.SCALING] + " scaling)"
    efficiency = ok[m.SCALING_EFFICIENCY].astype(float)
    ok["ci_plus"] = pd.to_numeric(ok.get(m.SCALING_EFFICIENCY_CI95_HIGH), errors="coerce") - efficiency
    ok["ci_minus"] = efficiency - pd.to_numeric(ok.get(m.SCALING_EFFICIENCY_CI95_LOW), errors="coerce")
    fig = _per_layout_line(ok, m.SCALING_EFFICIENCY, "scaling efficiency", [m.SPEEDUP, m.BASELINE_CONFIG_ID], wrap)
    fig.add_hline(y=1.0, line_dash="dot", line_color="grey", annotation_text="ideal", annotation_position="top left")
    fig.update_yaxes(rangemode="tozero")
    return _layout(
        fig,
        "Scaling efficiency vs devices (1.0 = ideal; strong: T1/(N*TN), weak: thr_N/(N*thr_1); bars: 95 % CI, "
        "bootstrap of both configs' windows)",
        _facet_rows(ok, wrap),
    )


MFU_TITLE = (
    "Model FLOPs utilisation vs devices (achieved FLOP/s / (devices x peak); FLOPs counted from each config's "
    "gradient graph; peak: GPU datasheet, or the CPU matmul microbenchmark, where N logical devices share the "
    "host's peak; bars: from the step time's 95 % CI)"
)


def mfu_figure(frame: pd.DataFrame, wrap: int = 3) -> go.Figure | None:
    """MFU against devices per layout, beside scaling efficiency: how much of the hardware's limit each device
    count uses, not only how much of the 1-device speed survives."""
    ok = _ok(frame)
    if m.MFU not in ok.columns:
        return None
    ok = ok[pd.to_numeric(ok[m.MFU], errors="coerce").notna()]
    if ok.empty:
        return None
    ok = _ci_error_columns(ok)  # the throughput's error bars, scaled: MFU is proportional to throughput
    scale = ok[m.MFU].astype(float) / ok[m.THROUGHPUT_EXAMPLES_PER_S].astype(float)
    ok["ci_plus"], ok["ci_minus"] = ok["ci_plus"] * scale, ok["ci_minus"] * scale
    hover = [m.ACHIEVED_FLOPS_PER_S, m.PEAK_FLOPS_PER_S, m.SCALING_EFFICIENCY]
    fig = _per_layout_line(ok, m.MFU, "MFU", hover, wrap)
    fig.update_yaxes(rangemode="tozero", tickformat=".0%")
    return _layout(fig, MFU_TITLE, _facet_rows(ok, wrap))


def step_time_figure(frame: pd.DataFrame) -> go.Figure | None:
    ok = _ok(frame)
    if ok.empty:
        return None
    fig = go.Figure()
    for _, row in ok.iterrows():
        fig.add_trace(
            go.Box(
                y=[t * 1e3 for t in row[m.STEP_TIMES_S]],
                name=config_label(row),
                boxpoints="all",
                jitter=0.3,
                pointpos=0,
                marker_size=3,
                showlegend=False,
            )
        )
    runs = frame.attrs.get("condensed_runs")
    fig.update_layout(
        title=f"Median step time of each of {runs} runs"
        if runs
        else "Step-time distributions (timed windows only; warm-up excluded)",
        yaxis_title="step time (ms, log scale)",  # 1 ms and 100 ms steps readable on one axis
        yaxis_type="log",
        height=520,
        xaxis_tickangle=-40,
        margin={"b": 220},
    )
    return fig


def memory_figure(frame: pd.DataFrame) -> go.Figure | None:
    ok = _ok(frame)
    ok = ok[ok[m.PEAK_MEMORY_BYTES].notna()]
    if ok.empty:
        return None
    ok["label"] = ok.apply(config_label, axis=1)
    ok["peak_mib"] = ok[m.PEAK_MEMORY_BYTES] / MIB
    kinds = ", ".join(sorted(ok[m.MEMORY_KIND].dropna().unique()))
    fig = px.bar(
        ok,
        x="label",
        y="peak_mib",
        color="strategy_label",
        color_discrete_map=label_colors(ok),
        hover_data=[m.MEMORY_KIND],
        labels={"label": "config", "peak_mib": "peak memory per device (MiB)"},
    )
    fig.update_layout(
        title=f"Peak memory per device ({kinds})",
        height=520,
        xaxis_tickangle=-40,
        margin={"b": 220},
        legend_title_text="strategy",
    )
    return fig


def layout_figure(rows: pd.DataFrame, wrap: int = 3) -> go.Figure | None:
    """Throughput of each layout at equal total devices (rows from analysis.layout_comparison)."""
    if rows.empty:
        return None
    rows = _ci_error_columns(rows.copy())
    rows["panel"] = rows.apply(lambda r: f"{workload_label(r)} @ {r[m.DEVICES]} devices", axis=1)
    rows["efficiency"] = rows[m.SCALING_EFFICIENCY].map(lambda e: "" if pd.isna(e) else f"eff {e * 100:.0f} %")
    fig = px.bar(
        rows,
        x=m.LAYOUT,
        y=m.THROUGHPUT_EXAMPLES_PER_S,
        color=m.STRATEGY,
        color_discrete_map=FAMILY_COLORS,
        facet_col="panel",
        facet_col_wrap=wrap,
        text="efficiency",
        error_y="ci_plus",
        error_y_minus="ci_minus",
        hover_data=[m.CONFIG_ID, m.RANK_THROUGHPUT_EXAMPLES_PER_S, m.STRAGGLER, m.STEP_TIME_MEDIAN_S],
        barmode="group",
        labels={m.THROUGHPUT_EXAMPLES_PER_S: "examples/s (global)", m.LAYOUT: ""},
    )
    rows_count = max(1, -(-rows["panel"].nunique() // wrap))
    fig.update_layout(
        title="Same device count, different layouts: 1 node x N devices vs N nodes x 1 device vs "
        f"parameter servers (bars: {_bars(rows)}; text: scaling efficiency)",
        height=380 * rows_count + 80,
        margin={"t": 90},
        legend_title_text="strategy",
    )
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    # the efficiency text sits inside each bar's foot, clear of the error bar at its top
    fig.update_traces(textposition="inside", insidetextanchor="start", textangle=0)
    fig.update_yaxes(matches=None, showticklabels=True, rangemode="tozero")
    fig.update_xaxes(matches=None, showticklabels=True)
    return fig


def modes_figure(
    rows: pd.DataFrame, column: str, title: str, axis: str, scale: float = 1.0, wrap: int = 3
) -> go.Figure | None:
    """One bar per parallelism mode, a panel per workload and device count (rows from analysis.mode_comparison)."""
    rows = rows[rows[column].notna()].copy()
    if rows.empty:
        return None
    rows["panel"] = rows.apply(lambda r: f"{workload_label(r)} @ {r[m.DEVICES]} devices", axis=1)
    rows["value"] = rows[column].astype(float) * scale
    fig = px.bar(
        rows,
        x=m.MODE,
        y="value",
        color=m.PARALLELISM,
        color_discrete_map={**FAMILY_COLORS, "data": DATA_COLOR},
        facet_col="panel",
        facet_col_wrap=wrap,
        hover_data=[m.CONFIG_ID, m.STEP_TIME_MEDIAN_S, m.BUBBLE_FRACTION, m.BUBBLE_FRACTION_THEORY],
        labels={"value": axis, m.MODE: ""},
    )
    panels = max(1, -(-rows["panel"].nunique() // wrap))
    fig.update_layout(title=title, height=460 * panels + 80, margin={"t": 90}, legend_title_text="parallelism")
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    fig.update_yaxes(matches=None, showticklabels=True)
    fig.update_xaxes(matches=None, showticklabels=True)
    return fig
