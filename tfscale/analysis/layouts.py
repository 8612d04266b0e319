"""One workload in several layouts or parallelism modes at one device count; many runs condensed to one row per config.
Pure pandas, no TensorFlow."""

from __future__ import annotations

import math

import pandas as pd

from tfscale import labels
from tfscale import metrics as m
from tfscale.analysis.keys import CONFIG_AXES, workload_key


def layout_label(row: pd.Series) -> str:
    """labels.layout_label of a record row."""
    return labels.layout_label(
        row[m.NODES], row[m.DEVICES_PER_NODE], row[m.STRATEGY], row.get(m.NUM_PS), row.get(m.NETWORK_LINK)
    )


def layout_comparison(frame: pd.DataFrame) -> pd.DataFrame:
    """Ok configs of the same workload and total device count run in more than one layout (1 node x N devices
    vs N nodes x 1 device vs parameter servers), one row each; `frame` has gone through add_scaling."""
    ok = frame[frame[m.STATUS] == m.STATUS_OK].copy()
    if ok.empty:
        return ok.assign(
            **{m.LAYOUT: [], m.RANK_THROUGHPUT_MIN_EXAMPLES_PER_S: [], m.RANK_THROUGHPUT_MAX_EXAMPLES_PER_S: []}
        )
    ok[m.LAYOUT] = ok.apply(layout_label, axis=1)
    ok["group"] = ok.apply(lambda r: (*workload_key(r), r[m.DEVICES]), axis=1)
    layouts = ok.groupby("group")[m.LAYOUT].transform("nunique")
    rows = ok[layouts > 1].copy()
    ranks = rows.get(m.RANK_THROUGHPUT_EXAMPLES_PER_S, pd.Series(None, index=rows.index))
    rows[m.RANK_THROUGHPUT_MIN_EXAMPLES_PER_S] = [min(v) if isinstance(v, list) and v else math.nan for v in ranks]
    rows[m.RANK_THROUGHPUT_MAX_EXAMPLES_PER_S] = [max(v) if isinstance(v, list) and v else math.nan for v in ranks]
    return rows.sort_values([m.MODEL, m.DEVICES, m.NODES, m.STRATEGY]).drop(columns="group")


def condense(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per distinct ok config over many runs, for the report's plots: numeric columns are the median over
    the runs, step_times_s the list of the runs' median steps, the CI columns the lowest and highest of those
    medians (so error bars show run-to-run spread), run_id "<k> runs". `frame` has gone through add_scaling."""
    ok = frame[frame[m.STATUS] == m.STATUS_OK]
    if ok.empty:
        return ok
    keys = [c for c in CONFIG_AXES if c in ok]
    numeric = [
        c
        for c in ok.columns
        if c not in keys and pd.api.types.is_numeric_dtype(ok[c]) and not pd.api.types.is_bool_dtype(ok[c])
    ]
    groups = ok.groupby(keys, dropna=False, sort=False)
    out = groups.first()
    out[numeric] = groups[numeric].median()
    medians = groups[m.STEP_TIME_MEDIAN_S]
    out[m.STEP_TIME_CI95_LOW_S] = medians.min()
    out[m.STEP_TIME_CI95_HIGH_S] = medians.max()
    out[m.STEP_TIMES_S] = medians.agg(list)
    out[m.RUN_ID] = groups[m.RUN_ID].nunique().map(lambda k: f"{k} runs")
    out = out.copy().reset_index()[list(frame.columns)]  # copy: defragments after the many column writes above
    out.attrs["condensed_runs"] = frame[m.RUN_ID].nunique()  # figures say their bars show run-to-run spread
    return out


MODES_NOTE = (
    "data: every device holds the whole model and computes on its share of the batch; the gradients are "
    "all-reduced every step. pipeline: each device holds a contiguous group of layers (stage) and passes "
    "activations to the next; memory per device falls with the stages, but a stage waits while the pipeline fills "
    "and drains (the bubble, (S-1)/(M+S-1) of the step with M micro-batches). tensor: each device holds 1/T of "
    "every sharded weight and computes 1/T of each layer; activations are exchanged inside every layer. hybrid: "
    "data-parallel copies of a tensor-parallel model. On logical CPU devices all modes share the same cores: these "
    "figures test the mechanics, not the speed a real multi-device host would give."
)


def mode_comparison(frame: pd.DataFrame) -> pd.DataFrame:
    """Ok configs of a workload run in more than one parallelism mode at the same device count, one row each,
    with a `mode` label; `frame` has gone through add_scaling."""
    ok = frame[frame[m.STATUS] == m.STATUS_OK].copy()
    if ok.empty or m.PARALLELISM not in ok:
        return ok.assign(**{m.MODE: []})
    ok["group"] = ok.apply(lambda r: (*workload_key(r), r[m.DEVICES]), axis=1)
    rows = ok[ok.groupby("group")[m.PARALLELISM].transform("nunique") > 1].copy()
    rows[m.MODE] = [mode_text(r) for _, r in rows.iterrows()]
    return rows.sort_values([m.MODEL, m.DEVICES, m.PARALLELISM]).drop(columns="group")


def mode_text(row: pd.Series) -> str:
    """'data (mirrored)', 'pipeline 4 stages x 4 micro-batches', 'hybrid 2 data x 2 tensor': the mode first, since
    the section that uses it compares modes."""
    mode = labels.record_mode(row)
    return f"data ({mode})" if (row.get(m.PARALLELISM) or "data") == "data" else mode
