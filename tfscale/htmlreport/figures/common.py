"""What every figure of the report shares: colours per strategy family, config and workload labels, the facet layout,
error bars from CIs and the ideal-scaling line."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from tfscale import metrics as m
from tfscale.axes import PARALLELISMS, STRATEGIES
from tfscale.labels import input_tags, model_label, record_mode

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
