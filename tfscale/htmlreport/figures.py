"""Plotly figures of a scaling-analysed records frame. Formatting only: every number comes from the frame."""

from __future__ import annotations

import math

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from tfscale import metrics as m
from tfscale.axes import PARALLELISMS, STRATEGIES
from tfscale.labels import data_label, input_tags, model_label, record_mode
from tfscale.opgroups import GROUP_COLUMNS

MIB = 1024.0 * 1024.0
# One colour per strategy and model-parallel mode in every plot (plotly gave each plot's labels its palette in the
# order it met them): from the registries' order, plotly's own palette.
FAMILIES = (*STRATEGIES, *(name for name in PARALLELISMS if name != "data"))
FAMILY_COLORS = {name: px.colors.qualitative.Plotly[i % 10] for i, name in enumerate(FAMILIES)}
DATA_COLOR = "#7f7f7f"  # data parallelism, where the parallelism mode is what is coloured


def family(row: pd.Series) -> str:
    """A row's strategy, or its model-parallel mode (no tf.distribute strategy there)."""
    mode = row.get(m.PARALLELISM) or "data"
    return row[m.STRATEGY] if mode == "data" and isinstance(row.get(m.STRATEGY), str) else mode


def label_colors(ok: pd.DataFrame) -> dict[str, str]:
    """strategy_label -> the colour of its strategy or mode; variants (cross-device ops, nodes, links) share it and
    are told apart by their marker."""
    firsts = ok[ok["strategy_label"] != IDEAL].drop_duplicates("strategy_label")
    colours = {row["strategy_label"]: FAMILY_COLORS.get(family(row), DATA_COLOR) for _, row in firsts.iterrows()}
    return colours | {IDEAL: IDEAL_COLOR}


def workload_label(row: pd.Series) -> str:
    model = model_label(row[m.MODEL], row[m.MODEL_SIZE])
    text = f"{model} {row[m.PRECISION]} batch {row[m.BATCH_SIZE]} {row[m.BATCH_POLICY]}"
    return " ".join([text, *(["xla"] if row[m.JIT] else []), *input_tags(row)])


def strategy_label(row: pd.Series) -> str:
    if row.get(m.PARALLELISM, "data") not in ("data", None) or not isinstance(row[m.STRATEGY], str):
        return record_mode(row)
    ops = row.get(m.CROSS_DEVICE_OPS)
    nodes = f" {row[m.NODES]} nodes" if row[m.NODES] > 1 else ""
    link = row.get(m.NETWORK_LINK)
    link = f" @{link}" if isinstance(link, str) and link else ""
    return row[m.STRATEGY] + ("" if pd.isna(ops) or not ops else f" ({ops})") + nodes + link


def config_label(row: pd.Series) -> str:
    """Short axis label: model, strategy and devices, then the id that finds the rest in the table."""
    return (
        f"{model_label(row[m.MODEL], row[m.MODEL_SIZE])} {strategy_label(row)} x{row[m.DEVICES]} · {row[m.CONFIG_ID]}"
    )


def _bars(frame: pd.DataFrame) -> str:
    """What the error bars show: the CI of one run's median, or the spread over runs of a condensed frame."""
    runs = frame.attrs.get("condensed_runs")
    return f"lowest to highest median of {runs} runs" if runs else "95 % CI of the median step"


def _ok(frame: pd.DataFrame) -> pd.DataFrame:
    ok = frame[frame[m.STATUS] == m.STATUS_OK].copy()
    ok["workload"] = ok.apply(workload_label, axis=1)
    ok["strategy_label"] = ok.apply(strategy_label, axis=1)
    return ok.sort_values([m.RUN_ID, "workload", "strategy_label", m.DEVICES])


def _layout(fig: go.Figure, title: str, rows: int) -> go.Figure:
    fig.update_layout(title=title, height=320 * rows + 80, legend_title_text="strategy", margin={"t": 90})
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    fig.update_yaxes(matches=None, showticklabels=True)
    # ticks at the device counts run (1, 2, 4, 8, ...), not at every integer between them
    xs = pd.to_numeric(pd.Series([x for t in fig.data for x in (t.x if t.x is not None else ())]), errors="coerce")
    if len(xs) and xs.notna().all():
        fig.update_xaxes(tickmode="array", tickvals=sorted({int(x) for x in xs}))
    return fig


def _facet_rows(frame: pd.DataFrame, wrap: int) -> int:
    return max(1, -(-frame["workload"].nunique() // wrap))


def _ci_error_columns(ok: pd.DataFrame) -> pd.DataFrame:
    """Throughput error bars implied by the 95 % CI of the median step time (empty below 6 samples)."""
    batch, thr = ok[m.GLOBAL_BATCH_SIZE].astype(float), ok[m.THROUGHPUT_EXAMPLES_PER_S].astype(float)
    ok["ci_plus"] = batch / pd.to_numeric(ok[m.STEP_TIME_CI95_LOW_S], errors="coerce") - thr
    ok["ci_minus"] = thr - batch / pd.to_numeric(ok[m.STEP_TIME_CI95_HIGH_S], errors="coerce")
    return ok


IDEAL = "ideal: N x the 1-device baseline"
IDEAL_COLOR = "#bbbbbb"


def ideal_rows(ok: pd.DataFrame) -> pd.DataFrame:
    """Per workload (and run), the throughput linear scaling would give at each device count it ran: N x the
    baseline's (thr_N / speedup is the baseline's throughput, weak or strong), as rows labelled IDEAL."""
    rows = []
    for _, group in ok[ok[m.SPEEDUP].notna() & (ok[m.SPEEDUP] > 0)].groupby(["workload", m.RUN_ID], sort=False):
        first = group.iloc[0]
        baseline = float(first[m.THROUGHPUT_EXAMPLES_PER_S]) / float(first[m.SPEEDUP])
        for devices in sorted(
            ok[(ok["workload"] == first["workload"]) & (ok[m.RUN_ID] == first[m.RUN_ID])][m.DEVICES].unique()
        ):
            rows.append(
                {"workload": first["workload"], m.RUN_ID: first[m.RUN_ID], "strategy_label": IDEAL,
                 m.DEVICES: devices, m.THROUGHPUT_EXAMPLES_PER_S: baseline * devices}
            )  # fmt: skip
    return pd.DataFrame(rows)


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


def _per_layout_line(
    ok: pd.DataFrame, y: str, label: str, hover: list[str], wrap: int, dash: str | None = None
) -> go.Figure:
    """`y` against devices, one line per strategy and layout (and per value of the column `dash`, dashed apart),
    one panel per workload, with the CI columns ci_plus and ci_minus as error bars."""
    return px.line(
        ok,
        x=m.DEVICES,
        y=y,
        color="strategy_label",
        color_discrete_map=label_colors(ok),
        symbol="strategy_label",
        line_dash=dash,
        facet_col="workload",
        facet_col_wrap=wrap,
        markers=True,
        error_y="ci_plus",
        error_y_minus="ci_minus",
        hover_data=[m.CONFIG_ID, *hover],
        labels={m.DEVICES: "devices", y: label},
    )


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


def energy_figure(frame: pd.DataFrame, column: str, label: str, wrap: int = 3) -> go.Figure | None:
    """Examples per joule or per unit of money (1 / the per-example figure in `column`) vs devices per layout."""
    ok = _ok(frame)
    if column not in ok.columns:
        return None
    per = pd.to_numeric(ok[column], errors="coerce")
    ok = ok[per.notna() & (per > 0)]
    if ok.empty:
        return None
    scale = 1e6 if column == m.COST_PER_MILLION_EXAMPLES else 1.0  # the cost is per million examples
    ok["value"] = scale / pd.to_numeric(ok[column], errors="coerce")
    ok["ci_plus"] = ok["ci_minus"] = math.nan
    fig = _per_layout_line(ok, "value", label, [column], wrap)
    fig.update_yaxes(rangemode="tozero")
    return _layout(fig, f"{label} vs devices (higher is better; tfscale.energy)", _facet_rows(ok, wrap))


INPUT_TITLE = (
    "Synthetic vs files: throughput vs devices (solid: one in-memory batch; dashed: the tf.data pipeline over the "
    "dataset files or the model's dataset_fn; bars: 95 % CI of the median step)"
)


def input_figure(frame: pd.DataFrame, wrap: int = 3) -> go.Figure | None:
    """Throughput against devices per strategy, synthetic and files side by side, one panel per workload (whatever
    the data), only for workloads that read files somewhere in the frame."""
    ok = _ok(frame)
    if m.DATA not in ok.columns or not (ok[m.DATA] == "files").any():
        return None
    ok["pipeline"] = ok.apply(lambda r: data_label(r) or "synthetic", axis=1)
    ok["workload"] = ok.apply(
        lambda r: f"{model_label(r[m.MODEL], r[m.MODEL_SIZE])} batch {r[m.BATCH_SIZE]} {r[m.BATCH_POLICY]}", axis=1
    )
    ok = _ci_error_columns(ok[ok["workload"].isin(ok.loc[ok[m.DATA] == "files", "workload"])])
    hover = [m.INPUT_BOUND, m.INPUT_HEADROOM]
    fig = _per_layout_line(ok, m.THROUGHPUT_EXAMPLES_PER_S, "examples/s", hover, wrap, dash="pipeline")
    fig.update_yaxes(rangemode="tozero")
    return _layout(fig, INPUT_TITLE, _facet_rows(ok, wrap))


GOODPUT_TITLE = (
    "Goodput beside throughput vs devices (teacher task; goodput = throughput x statistical efficiency of the "
    "config's global batch, from the gradient noise scale; bars: 95 % CI)"
)


def goodput_figure(frame: pd.DataFrame, wrap: int = 3) -> go.Figure | None:
    """Throughput (solid) and goodput (dashed) against devices per strategy, one panel per teacher-task workload."""
    ok = _ok(frame)
    if m.GOODPUT_EXAMPLES_PER_S not in ok.columns:
        return None
    ok = ok[pd.to_numeric(ok[m.GOODPUT_EXAMPLES_PER_S], errors="coerce").notna()]
    if ok.empty:
        return None
    ok = _ci_error_columns(ok)
    throughput = ok.assign(figure="throughput", value=ok[m.THROUGHPUT_EXAMPLES_PER_S])
    goodput = ok.assign(
        figure="goodput",
        value=ok[m.GOODPUT_EXAMPLES_PER_S],
        ci_plus=pd.to_numeric(ok[m.GOODPUT_CI95_HIGH_EXAMPLES_PER_S], errors="coerce") - ok[m.GOODPUT_EXAMPLES_PER_S],
        ci_minus=ok[m.GOODPUT_EXAMPLES_PER_S] - pd.to_numeric(ok[m.GOODPUT_CI95_LOW_EXAMPLES_PER_S], errors="coerce"),
    )
    hover = [m.GLOBAL_BATCH_SIZE, m.STATISTICAL_EFFICIENCY, m.NOISE_SCALE_USED]
    fig = _per_layout_line(pd.concat([throughput, goodput]), "value", "examples/s", hover, wrap, dash="figure")
    fig.update_yaxes(rangemode="tozero")
    return _layout(fig, GOODPUT_TITLE, _facet_rows(ok, wrap))


OPS_TITLE = (
    "Where the step goes, by op (profiled configs; ms per traced step: each instant of the trace shared by the ops "
    "running then; other: ops of no group, and instants with no op running)"
)


def ops_figure(rows: pd.DataFrame) -> go.Figure | None:
    """Stacked bars: per profiled config, ms per traced step of each op group (tfscale.opgroups)."""
    if rows.empty:
        return None
    long = rows.melt(id_vars=["config"], value_vars=list(GROUP_COLUMNS.values()), var_name="column", value_name="s")
    long["group"] = long["column"].map({column: group for group, column in GROUP_COLUMNS.items()})
    long["ms per step"] = long["s"] * 1e3
    fig = px.bar(long, x="config", y="ms per step", color="group", category_orders={"group": list(GROUP_COLUMNS)})
    fig.update_layout(barmode="stack", legend_title_text="")
    return _layout(fig, OPS_TITLE, 1)


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


def comm_breakdown_figure(checks: pd.DataFrame) -> go.Figure | None:
    """Per config: compute-only time and exposed communication, stacked to the median fused step."""
    rows = checks[checks[m.COMM_TIME_SPLIT_S].notna()]
    if rows.empty:
        return None
    labels = [f"{r[m.MODEL]} {r[m.STRATEGY]} x{r[m.DEVICES]} · {r[m.CONFIG_ID]}" for _, r in rows.iterrows()]
    shown = rows[m.COMM_EXPOSED_S].astype(float)
    # a communication within noise is drawn as 0 and the whole step as compute, with its CI in the hover text
    compute = rows[m.STEP_TIME_MEDIAN_S].astype(float) - shown
    notes = [note if isinstance(note, str) else "" for note in rows[m.COMM_EXPOSED_NOTE]]
    measured = [not note for note in notes]
    high = pd.to_numeric(rows[m.COMM_TIME_EXPOSED_CI95_HIGH_S], errors="coerce")
    low = pd.to_numeric(rows[m.COMM_TIME_EXPOSED_CI95_LOW_S], errors="coerce")
    fig = go.Figure(
        [
            go.Bar(name="compute (gradients only)", x=labels, y=compute * 1e3),
            go.Bar(
                name="exposed communication (fused - compute; bars: 95 % CI)",
                x=labels,
                y=shown * 1e3,
                error_y={
                    "type": "data",
                    "array": ((high - shown) * 1e3).where(measured),
                    "arrayminus": ((shown - low) * 1e3).where(measured),
                },
                hovertext=notes,
            ),
        ]
    )
    fig.update_layout(
        barmode="stack",
        title="Step time breakdown: the two parts add up to the median fused step (an exposed communication whose "
        "CI reaches 0 is within noise: drawn as 0)",
        yaxis_title="ms per step",
        height=480,
        xaxis_tickangle=-30,
        margin={"b": 160},
    )
    return fig


def comm_fraction_figure(checks: pd.DataFrame) -> go.Figure | None:
    rows = checks[checks[m.COMM_FRACTION].notna()].sort_values([m.MODEL, m.STRATEGY, m.DEVICES])
    if rows.empty:
        return None
    fig = px.line(
        rows,
        x=m.DEVICES,
        y=m.COMM_FRACTION,
        color=m.STRATEGY,
        color_discrete_map=FAMILY_COLORS,
        facet_col=m.MODEL,
        markers=True,
        labels={"comm_fraction": "exposed communication / step", m.DEVICES: "devices"},
    )
    fig.update_layout(title="Share of the step spent in exposed gradient communication", height=400)
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    fig.update_xaxes(dtick=1)
    return fig


def busbw_figure(sweeps: list[dict]) -> go.Figure | None:
    """busbw vs message size, one line per swept topology (commbench)."""
    if not sweeps:
        return None
    fig = go.Figure()
    for sweep in sweeps:
        link = sweep.get("network_link")
        name = (
            f"{sweep['strategy']} {sweep['nodes']}x{sweep['devices_per_node']} {sweep['device']}"
            f" ({sweep['replicas']} replicas)" + (f" @{link}" if link else "")
        )
        sizes = [r["size_bytes"] for r in sweep["rows"]]
        fig.add_trace(
            go.Scatter(
                x=sizes, mode="lines+markers", name=name, y=[r["busbw_bytes_per_s"] / 1e9 for r in sweep["rows"]]
            )
        )
        if sweep.get("link_bytes_per_s"):  # the simulated link's limit, to read the curve against
            fig.add_trace(
                go.Scatter(
                    x=[sizes[0], sizes[-1]],
                    y=[sweep["link_bytes_per_s"] / 1e9] * 2,
                    mode="lines",
                    line={"dash": "dash"},
                    name=f"link {link} (limit)",
                )
            )
    fig.update_layout(
        title="All-reduce bus bandwidth vs message size (commbench; busbw = S/t x 2(n-1)/n)",
        xaxis_title="message size (bytes)",
        yaxis_title="busbw (GB/s)",
        height=420,
    )
    fig.update_xaxes(type="log", dtick="D2")
    return fig


def telemetry_figure(
    series: dict[str, pd.DataFrame], column: str, scale: float, title: str, axis: str
) -> go.Figure | None:
    """A sampled column over time, one config at a time: a menu picks the config (every config's line drawn over
    the others was unreadable past a few configs). GPU columns have one line per GPU of the config."""
    lines = {label: frame for label, frame in series.items() if column in frame and frame[column].notna().any()}
    if not lines:
        return None
    fig = go.Figure()
    owner = []
    for index, (label, frame) in enumerate(lines.items()):
        gpus = frame.groupby("gpu") if "gpu" in column and "gpu" in frame and frame["gpu"].notna().any() else None
        groups = (
            [(f"GPU {int(g)}", rows) for g, rows in gpus] if gpus is not None else [("", frame.drop_duplicates("t_s"))]
        )
        for name, rows in groups:
            fig.add_trace(
                go.Scatter(
                    x=rows["t_s"],
                    y=rows[column] * scale,
                    mode="lines",
                    name=name or label,
                    visible=index == 0,
                    showlegend=bool(name),
                )
            )
            owner.append(index)
    buttons = [
        {
            "label": label,
            "method": "update",
            "args": [{"visible": [o == index for o in owner]}, {"title.text": f"{title}: {label}"}],
        }
        for index, label in enumerate(lines)
    ]
    first = next(iter(lines))
    fig.update_layout(
        title=f"{title}: {first}",
        xaxis_title="seconds since the config started",
        yaxis_title=axis,
        height=420,
        updatemenus=[{"buttons": buttons, "x": 1.0, "xanchor": "right", "y": 1.18, "yanchor": "top"}],
    )
    fig.update_yaxes(rangemode="tozero")
    return fig


BREAKDOWN_TERMS = (
    ("comm_exposed_fraction", "exposed communication"),
    ("straggler_wait_fraction", "straggler wait"),
    ("input_wait_fraction", "input wait"),
    ("compute_growth_fraction", "compute growth (compute-only step - ideal)"),
    ("rest_fraction", "rest (overheads; compute growth where not timed)"),
)


def loss_figure(rows: pd.DataFrame) -> go.Figure | None:
    """Per multi-device config, the gap to the ideal step split into its terms, as fractions of the step."""
    if rows.empty:
        return None
    labels = [f"{r[m.MODEL]} {r[m.STRATEGY]} x{r[m.DEVICES]} · {r[m.CONFIG_ID]}" for _, r in rows.iterrows()]
    fig = go.Figure([go.Bar(name=name, x=labels, y=rows[column]) for column, name in BREAKDOWN_TERMS])
    fig.update_layout(
        barmode="relative",
        title="Where the efficiency went: gap to the ideal step, as a fraction of "
        "the measured step (the bars add up to the gap)",
        yaxis_title="fraction of the step",
        height=480,
        xaxis_tickangle=-30,
        margin={"b": 160},
    )
    return fig


def link_fraction_figure(rows: pd.DataFrame) -> go.Figure | None:
    """Per config on simulated hosts: busbw of the isolated all-reduce and the TCP check, over the link rate."""
    if rows.empty:
        return None
    labels = [config_label(r) for _, r in rows.iterrows()]
    fig = go.Figure(
        [
            go.Bar(name="all-reduce busbw / link", x=labels, y=rows[m.BUSBW_LINK_FRACTION]),
            go.Bar(name="TCP check / link", x=labels, y=rows[m.CHECK_LINK_FRACTION]),
        ]
    )
    fig.add_hline(y=1.0, line_dash="dash", annotation_text="link rate")
    fig.update_layout(
        title="Bandwidth reached on simulated hosts, as a fraction of the shaped link",
        yaxis_title="fraction of link rate",
        barmode="group",
        height=480,
        xaxis_tickangle=-30,
        margin={"b": 180},
    )
    return fig


def efficiency_vs_link_figure(rows: pd.DataFrame) -> go.Figure | None:
    """Scaling efficiency against link rate, one curve per model and node count."""
    rows = rows[rows[m.SCALING_EFFICIENCY].notna()].copy()
    if rows.empty:
        return None
    rows["curve"] = rows.apply(lambda r: f"{workload_label(r)}, {r[m.STRATEGY]} {r[m.NODES]} nodes", axis=1)
    rows["link_gbit_s"] = rows[m.LINK_BYTES_PER_S].astype(float) * 8 / 1e9
    fig = px.line(
        rows.sort_values("link_gbit_s"),
        x="link_gbit_s",
        y=m.SCALING_EFFICIENCY,
        color="curve",
        markers=True,
        hover_data=[m.CONFIG_ID, m.NETWORK_LINK, m.STEP_TIME_MEDIAN_S],
        labels={"link_gbit_s": "link rate per node (Gbit/s)", "curve": ""},
    )
    fig.update_layout(title="Scaling efficiency vs link rate (simulated hosts)", height=440)
    fig.update_xaxes(type="log")
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
