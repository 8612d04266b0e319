"""Predict step time, throughput and efficiency at device counts that were not run. Pure (pandas, no TF).

Model, per workload, strategy and link (simulated hosts) of a sweep:
step(N) = compute(N) + alpha + beta * S * 2(N-1)/N. compute(N) is fitted by least squares to the compute-only step
measured at each N and the 1-device baseline's median step T1 at N = 1, linear in N for weak scaling (replicas
sharing cores slow each other down; on separate devices the slope comes out near 0) and in 1/N for strong scaling;
with T1 alone it is T1 (weak) or T1 / N (strong). alpha and beta are fitted to the exposed communication measured at
each N (zero at N = 1); S is the gradient bytes. It assumes the overlap stays what it was. Validation: hold out the
largest measured N, fit on the others, and compare.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from tfscale import metrics as m
from tfscale.analysis import WORKLOAD_KEY, add_scaling
from tfscale.comm import bus_factor

METHOD = __doc__.split("\n\n", 1)[1].replace("\n", " ").strip()


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line through the points."""
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0
    return mean_y - slope * mean_x, slope


def _scaled(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with the scaling columns (the report passes one that has them already: not computed twice)."""
    return frame if m.BASELINE_CONFIG_ID in frame else add_scaling(frame)


def _groups(frame: pd.DataFrame):
    """Per workload, strategy and link (each topology has its own alpha and beta): (strategy, first multi-device
    row, 1-device median step, multi-device rows with exposed communication)."""
    ok = frame[(frame[m.STATUS] == m.STATUS_OK) & frame[m.BASELINE_CONFIG_ID].notna()]
    steps = frame.set_index(m.CONFIG_ID)[m.STEP_TIME_MEDIAN_S].to_dict()
    links = pd.Series(
        [link if isinstance(link, str) else "" for link in ok.get(m.NETWORK_LINK, [None] * len(ok))], index=ok.index
    )
    for (_, strategy, _), group in ok.groupby(
        [ok.apply(lambda r: tuple(r[k] for k in WORKLOAD_KEY), axis=1), m.STRATEGY, links]
    ):
        multi = group[(group[m.DEVICES] > 1) & group[m.COMM_TIME_EXPOSED_S].notna()].sort_values(m.DEVICES)
        if multi.empty:
            continue
        first = multi.iloc[0]
        yield strategy, first, float(steps[first[m.BASELINE_CONFIG_ID]]), multi


def link_of(row: pd.Series) -> str | None:
    """The row's simulated link, or None over loopback (pandas gives NaN for a missing one)."""
    link = row.get(m.NETWORK_LINK)
    return link if isinstance(link, str) else None


def _predict(first: pd.Series, t1: float, points: pd.DataFrame, n: int) -> dict:
    size = float(first[m.GRAD_BYTES])
    xs = [0.0] + [size * bus_factor(int(d)) for d in points[m.DEVICES]]
    alpha, beta = fit_line(xs, [0.0] + [float(c) for c in points[m.COMM_TIME_EXPOSED_S]])
    strong = first[m.SCALING] == "strong"
    basis = (lambda d: 1.0 / d) if strong else (lambda d: float(d))
    measured = points[points[m.COMPUTE_TIME_S].notna()] if m.COMPUTE_TIME_S in points else points.iloc[:0]
    if measured.empty:
        compute = t1 / n if strong else t1
    else:
        a, b = fit_line(
            [basis(1)] + [basis(int(d)) for d in measured[m.DEVICES]],
            [t1] + [float(c) for c in measured[m.COMPUTE_TIME_S]],
        )
        compute = a + b * basis(n)
    step = compute + (alpha + beta * size * bus_factor(n) if n > 1 else 0.0)
    global_batch = int(first[m.BATCH_SIZE]) * (1 if strong else n)
    efficiency = t1 / (n * step) if strong else (global_batch / step) / (n * (int(first[m.BATCH_SIZE]) / t1))
    return {
        "alpha_s": alpha,
        "beta_s_per_byte": beta,
        m.PREDICTED_STEP_S: step,
        "predicted_throughput": global_batch / step,
        "predicted_efficiency": efficiency,
    }


def predict(frame: pd.DataFrame, devices: Sequence[int]) -> pd.DataFrame:
    """Predictions at `devices` (total devices) for each workload and strategy with measured communication."""
    frame = _scaled(frame)
    rows = []
    for strategy, first, t1, multi in _groups(frame):
        for n in devices:
            rows.append(
                {
                    m.MODEL: first[m.MODEL],
                    m.MODEL_SIZE: first[m.MODEL_SIZE],
                    m.STRATEGY: strategy,
                    m.NETWORK_LINK: link_of(first),
                    m.SCALING: first[m.SCALING],
                    m.DEVICES: n,
                    "fitted_on": list(multi[m.DEVICES]),
                    **_predict(first, t1, multi, n),
                }
            )
    return pd.DataFrame(rows)


def holdout(frame: pd.DataFrame) -> pd.DataFrame:
    """Per workload and strategy with two or more measured device counts: the largest predicted from the others."""
    frame = _scaled(frame)
    rows = []
    for strategy, first, t1, multi in _groups(frame):
        if len(multi) < 2:
            continue
        held, rest = multi.iloc[-1], multi.iloc[:-1]
        guess = _predict(first, t1, rest, int(held[m.DEVICES]))
        rows.append(
            {
                m.MODEL: first[m.MODEL],
                m.STRATEGY: strategy,
                m.NETWORK_LINK: link_of(first),
                m.DEVICES: int(held[m.DEVICES]),
                "fitted_on": list(rest[m.DEVICES]),
                "measured_step_s": float(held[m.STEP_TIME_MEDIAN_S]),
                m.PREDICTED_STEP_S: guess[m.PREDICTED_STEP_S],
                "error": guess[m.PREDICTED_STEP_S] / float(held[m.STEP_TIME_MEDIAN_S]) - 1.0,
            }
        )
    return pd.DataFrame(rows)
