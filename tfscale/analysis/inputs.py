"""Input pipelines: each config that reads files beside its synthetic twin, and which pipeline setting helped. Pure
pandas, no TensorFlow."""

from __future__ import annotations

import pandas as pd

from tfscale import formatting as fmt
from tfscale import labels
from tfscale import metrics as m
from tfscale.analysis.keys import MEASUREMENT_KEY, _missing, _number, _plain, measurement_key
from tfscale.axes import AXES, DATA_AXES, DATA_FILES, DATA_SYNTHETIC

# What makes a data: files config and its data: synthetic twin one config apart from the input: every axis but the
# data ones, in the same run.
INPUT_TWIN_KEY = (m.RUN_ID, m.DEVICE, *(a for a in AXES if a != m.DATA and a not in DATA_AXES))


def _key(row: pd.Series, columns: tuple[str, ...]) -> tuple:
    return tuple(None if _missing(row.get(c)) else row.get(c) for c in columns)


def input_comparison(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per ok data: files config (frame through add_scaling): its throughput and scaling efficiency beside
    its synthetic twin's (empty where the sweep has none), the pipeline's own throughput, the wait and the verdict."""
    if m.DATA not in frame.columns:  # frames built without the data axis read synthetic data
        return pd.DataFrame()
    ok = frame[frame[m.STATUS] == m.STATUS_OK]
    twins = {_key(r, INPUT_TWIN_KEY): r for _, r in ok[ok[m.DATA] == DATA_SYNTHETIC].iterrows()}
    rows = []
    for _, r in ok[ok[m.DATA] == DATA_FILES].iterrows():
        twin = twins.get(_key(r, INPUT_TWIN_KEY))
        synthetic = None if twin is None else float(twin[m.THROUGHPUT_EXAMPLES_PER_S])
        throughput = float(r[m.THROUGHPUT_EXAMPLES_PER_S])
        rows.append(
            {
                **dict(zip(MEASUREMENT_KEY, measurement_key(r), strict=True)),
                m.MODEL: r[m.MODEL],
                m.MODEL_SIZE: r.get(m.MODEL_SIZE),
                m.STRATEGY: r[m.STRATEGY],
                m.DEVICES: int(r[m.DEVICES]),
                "pipeline": labels.data_label(r),
                m.DATA_SOURCE: r.get(m.DATA_SOURCE),
                m.THROUGHPUT_EXAMPLES_PER_S: throughput,
                m.SYNTHETIC_THROUGHPUT_EXAMPLES_PER_S: synthetic,
                m.FILES_VS_SYNTHETIC: None if synthetic is None else throughput / synthetic,
                m.SCALING_EFFICIENCY: _number(r.get(m.SCALING_EFFICIENCY)),
                m.SYNTHETIC_SCALING_EFFICIENCY: None if twin is None else _number(twin.get(m.SCALING_EFFICIENCY)),
                m.INPUT_THROUGHPUT_EXAMPLES_PER_S: _number(r.get(m.INPUT_THROUGHPUT_EXAMPLES_PER_S)),
                m.INPUT_HEADROOM: _number(r.get(m.INPUT_HEADROOM)),
                m.INPUT_WAIT_TIME_S: _number(r.get(m.INPUT_WAIT_TIME_S)),
                m.INPUT_WAIT_TIME_CI95_LOW_S: _number(r.get(m.INPUT_WAIT_TIME_CI95_LOW_S)),
                m.INPUT_WAIT_TIME_CI95_HIGH_S: _number(r.get(m.INPUT_WAIT_TIME_CI95_HIGH_S)),
                m.OP_TIME_INPUT_S: _number(r.get(m.OP_TIME_INPUT_S)),  # the trace's figure, with profile: true
                m.INPUT_BOUND: r.get(m.INPUT_BOUND),
                m.INPUT_BOUND_NOTE: r.get(m.INPUT_BOUND_NOTE),
            }
        )
    return pd.DataFrame(rows)


def input_hints(frame: pd.DataFrame) -> list[str]:
    """Where a sweep varied one pipeline setting with all else equal: which value gave the most throughput, against
    the least, and whether the difference is outside the noise (the median steps' 95 % CIs do not overlap)."""
    if m.DATA not in frame.columns:
        return []
    ok = frame[(frame[m.STATUS] == m.STATUS_OK) & (frame[m.DATA] == DATA_FILES)]
    hints = []
    for knob in (k for k in DATA_AXES if k in ok.columns):
        others = (*INPUT_TWIN_KEY, *(a for a in DATA_AXES if a != knob))
        for _, group in ok.groupby(ok.apply(lambda r, others=others: _key(r, others), axis=1), sort=False):
            if group[knob].nunique(dropna=False) < 2:
                continue
            best = group.loc[group[m.THROUGHPUT_EXAMPLES_PER_S].astype(float).idxmax()]
            worst = group.loc[group[m.THROUGHPUT_EXAMPLES_PER_S].astype(float).idxmin()]
            ratio = float(best[m.THROUGHPUT_EXAMPLES_PER_S]) / float(worst[m.THROUGHPUT_EXAMPLES_PER_S])
            apart = (
                _number(best.get(m.STEP_TIME_CI95_HIGH_S)) is not None
                and _number(worst.get(m.STEP_TIME_CI95_LOW_S)) is not None
                and float(best[m.STEP_TIME_CI95_HIGH_S]) < float(worst[m.STEP_TIME_CI95_LOW_S])
            )
            what = f"{labels.model_label(best[m.MODEL], best.get(m.MODEL_SIZE))} {best[m.STRATEGY]} x{best[m.DEVICES]}"
            verdict = "helped" if apart else "is within noise (the median steps' 95 % CIs overlap)"
            high, low = fmt.rate(best[m.THROUGHPUT_EXAMPLES_PER_S]), fmt.rate(worst[m.THROUGHPUT_EXAMPLES_PER_S])
            hints.append(
                f"{what}: {knob}={_plain(best[knob])} {verdict}: {high} examples/s, "
                f"{ratio:.2f}x {knob}={_plain(worst[knob])} ({low})"
            )
    return hints
