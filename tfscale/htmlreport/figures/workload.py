"""The report's figures of what a step does besides scaling: energy and cost, input pipelines, goodput, op groups and
telemetry over time."""

from __future__ import annotations

import math

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from tfscale import metrics as m
from tfscale.htmlreport.figures.common import _ci_error_columns, _facet_rows, _layout, _ok, _per_layout_line
from tfscale.labels import data_label, model_label
from tfscale.measures.opgroups import GROUP_COLUMNS


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
    return _layout(fig, f"{label} vs devices (higher is better; tfscale.measures.energy)", _facet_rows(ok, wrap))


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
    """Stacked bars: per profiled config, ms per traced step of each op group (tfscale.measures.opgroups)."""
    if rows.empty:
        return None
    long = rows.melt(id_vars=["config"], value_vars=list(GROUP_COLUMNS.values()), var_name="column", value_name="s")
    long["group"] = long["column"].map({column: group for group, column in GROUP_COLUMNS.items()})
    long["ms per step"] = long["s"] * 1e3
    fig = px.bar(long, x="config", y="ms per step", color="group", category_orders={"group": list(GROUP_COLUMNS)})
    fig.update_layout(barmode="stack", legend_title_text="")
    return _layout(fig, OPS_TITLE, 1)


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
