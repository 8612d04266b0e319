"""The report's communication figures: the estimates of gradient communication, bus bandwidth, links of simulated
hosts, and where the efficiency went."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from tfscale import metrics as m
from tfscale.htmlreport.figures.common import FAMILY_COLORS, config_label, workload_label


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
