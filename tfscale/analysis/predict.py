"""Predict step time, throughput and efficiency at device counts that were not run. Pure (pandas, no TF).

Model, per workload, strategy and link (simulated hosts) of a sweep:
step(N) = compute(N) + alpha + beta * S * 2(N-1)/N. compute(N) is fitted by least squares to the compute-only step
measured at each N and the 1-device baseline's median step T1 at N = 1, linear in N for weak scaling (replicas
sharing cores slow each other down; on separate devices the slope comes out near 0) and in 1/N for strong scaling;
with T1 alone it is T1 (weak) or T1 / N (strong). alpha and beta are fitted to the exposed communication measured at
each N > 1 (two counts at least: no point at N = 1, where a model with alpha > 0 does not pass through 0); S is the
gradient bytes. It assumes the overlap stays what it was. Prediction intervals (95 %), only from three or more
multi-device counts (through two, the line fits them exactly and nothing measures its error): the fits repeated on
bootstrap resamples of every fitted point's samples (measurement noise), widened by the model's error: 1.96 x the
root mean square of the leave-one-out relative errors of the step at the measured counts (each predicted from the
others), added in quadrature. A prediction no device can reach is refused with the reason: a step <= 0, or an
efficiency above 1 (a superlinear fit). Validation: hold out the largest measured N, fit on the others, and
compare; only where the fits keep more points than their two parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tfscale import metrics as m
from tfscale.analysis import add_scaling, baseline_key, by_measurement, workload_key
from tfscale.measures.comm import bus_factor, exposed_not_measured
from tfscale.stats.core import Z_975
from tfscale.stats.repeats import offsets_of, samples_of
from tfscale.stats.uncertainty import BOOTSTRAP_SEED, groups_of, offset_factors, resampled_medians, size_of

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
    row, the 1-device baseline row, multi-device rows with exposed communication)."""
    ok = frame[(frame[m.STATUS] == m.STATUS_OK) & frame[m.BASELINE_CONFIG_ID].notna()]
    rows_by_key = by_measurement(frame)
    links = pd.Series(
        [link if isinstance(link, str) else "" for link in ok.get(m.NETWORK_LINK, [None] * len(ok))], index=ok.index
    )
    for (_, strategy, _), group in ok.groupby([ok.apply(lambda r: workload_key(r), axis=1), m.STRATEGY, links]):
        if exposed_not_measured(strategy):  # older records still hold a figure the method does not give
            continue
        multi = group[(group[m.DEVICES] > 1) & group[m.COMM_TIME_EXPOSED_S].notna()].sort_values(m.DEVICES)
        if multi.empty:
            continue
        first = multi.iloc[0]
        yield strategy, first, rows_by_key[baseline_key(first)], multi


def link_of(row: pd.Series) -> str | None:
    """The row's simulated link, or None over loopback (pandas gives NaN for a missing one)."""
    link = row.get(m.NETWORK_LINK)
    return link if isinstance(link, str) else None


PARAMETERS = 2  # of each fitted line: communication (alpha, beta) and compute (intercept, slope)


@dataclass(frozen=True)
class Points:
    """What a prediction is fitted to: the baseline's median step (s), and per multi-device count its exposed
    communication and (where measured) its compute-only step (s)."""

    t1: float
    devices: list[int]
    exposed: list[float]
    compute_devices: list[int]
    compute: list[float]


def _points(t1: float, points: pd.DataFrame) -> Points:
    devices = [int(d) for d in points[m.DEVICES]]
    exposed = [float(c) for c in points[m.COMM_TIME_EXPOSED_S]]
    if m.COMPUTE_TIME_S not in points:
        return Points(t1, devices, exposed, [], [])
    measured = points[points[m.COMPUTE_TIME_S].notna()]
    return Points(
        t1, devices, exposed, [int(d) for d in measured[m.DEVICES]], [float(c) for c in measured[m.COMPUTE_TIME_S]]
    )


def _model(first: pd.Series, fit: Points, n: int) -> tuple[float, float, float, float]:
    """(alpha, beta, predicted step, predicted efficiency) at n devices."""
    size = float(first[m.GRAD_BYTES])
    alpha, beta = fit_line([size * bus_factor(d) for d in fit.devices], fit.exposed)
    strong = first[m.SCALING] == "strong"
    basis = (lambda d: 1.0 / d) if strong else (lambda d: float(d))
    if not fit.compute:
        compute = fit.t1 / n if strong else fit.t1
    else:
        a, b = fit_line([basis(1)] + [basis(d) for d in fit.compute_devices], [fit.t1, *fit.compute])
        compute = a + b * basis(n)
    step = compute + (alpha + beta * size * bus_factor(n) if n > 1 else 0.0)
    # weak: (global batch / step) / (n x per-replica batch / T1) = T1 / step; strong: T1 / (n x step)
    efficiency = fit.t1 / (n * step) if strong else fit.t1 / step
    return alpha, beta, step, efficiency


def _samples(row: pd.Series, column: str) -> list[float]:
    values = row.get(column)
    return list(values) if isinstance(values, (list, tuple)) else []


def _resampled(base: pd.Series, points: pd.DataFrame) -> list[Points] | None:
    """BOOTSTRAP_RESAMPLES sets of fitted points, each from resampled medians of every point's samples; None when a
    point lacks its samples (records from before 0.4, or no compute-only samples)."""
    t1 = samples_of(base)  # per process where the config ran in several (repeats)
    fused = [samples_of(r) for _, r in points.iterrows()]
    compute = [_samples(r, m.COMPUTE_TIMES_S) for _, r in points.iterrows()]
    if size_of(t1) < 2 or any(size_of(f) < 2 or len(c) < 2 for f, c in zip(fused, compute, strict=True)):
        return None
    t1_star = resampled_medians(t1, 0, offsets_of(base))
    # A point's fused and compute-only samples come from the same processes: one drawn offset moves both.
    rng = np.random.default_rng(BOOTSTRAP_SEED - 1)
    rows = [r for _, r in points.iterrows()]
    factors = [offset_factors(offsets_of(r), len(groups_of(f)), rng) for r, f in zip(rows, fused, strict=True)]
    fused_star = [resampled_medians(f, 1 + 2 * i) * factors[i] for i, f in enumerate(fused)]
    compute_star = [resampled_medians(c, 2 + 2 * i) * factors[i] for i, c in enumerate(compute)]
    devices = [int(d) for d in points[m.DEVICES]]
    return [
        Points(
            float(t1_star[b]),
            devices,
            [float(f[b] - c[b]) for f, c in zip(fused_star, compute_star, strict=True)],
            devices,
            [float(c[b]) for c in compute_star],
        )
        for b in range(len(t1_star))
    ]


def model_error(first: pd.Series, t1: float, points: pd.DataFrame) -> float | None:
    """Root mean square of the leave-one-out relative errors of the step at each measured multi-device count (the
    count predicted from the others); None below three counts (two left would fit a line exactly)."""
    if len(points) <= PARAMETERS:
        return None
    errors = []
    for i in range(len(points)):
        held, rest = points.iloc[i], points.drop(points.index[i])
        step = _model(first, _points(t1, rest), int(held[m.DEVICES]))[2]
        errors.append(step / float(held[m.STEP_TIME_MEDIAN_S]) - 1.0)
    return float(np.sqrt(np.mean(np.square(errors))))


def _widened(step: float, interval: tuple[float, float], error: float) -> tuple[float, float]:
    """The measurement-noise interval of a predicted step widened by the model error (relative), in quadrature."""
    spread = Z_975 * error * step
    low, high = interval
    return step - float(np.hypot(step - low, spread)), step + float(np.hypot(high - step, spread))


def _predict(first: pd.Series, base: pd.Series, points: pd.DataFrame, n: int) -> dict:
    t1 = float(base[m.STEP_TIME_MEDIAN_S])
    alpha, beta, step, efficiency = _model(first, _points(t1, points), n)
    global_batch = int(first[m.BATCH_SIZE]) * (1 if first[m.SCALING] == "strong" else n)
    error = model_error(first, t1, points)
    resampled = None if error is None else _resampled(base, points)
    step_ci = efficiency_ci = None
    if resampled is not None:
        steps = [_model(first, fit, n)[2] for fit in resampled]
        step_ci = _widened(step, _percentiles(steps), error)
        # efficiency is T1 / step (weak) or T1 / (n step) (strong): its interval follows from the step's
        per = n if first[m.SCALING] == "strong" else 1
        if step_ci[0] > 0:  # else the step's interval reaches 0: the efficiency's has no upper end
            efficiency_ci = (t1 / (per * step_ci[1]), t1 / (per * step_ci[0]))
    return {
        m.ALPHA_S: alpha,
        m.BETA_S_PER_BYTE: beta,
        m.PREDICTED_STEP_S: step,
        m.PREDICTED_STEP_CI95_LOW_S: None if step_ci is None else step_ci[0],
        m.PREDICTED_STEP_CI95_HIGH_S: None if step_ci is None else step_ci[1],
        m.PREDICTED_THROUGHPUT_EXAMPLES_PER_S: global_batch / step,
        m.PREDICTED_EFFICIENCY: efficiency,
        m.PREDICTED_EFFICIENCY_CI95_LOW: None if efficiency_ci is None else efficiency_ci[0],
        m.PREDICTED_EFFICIENCY_CI95_HIGH: None if efficiency_ci is None else efficiency_ci[1],
    }


def _percentiles(values) -> tuple[float, float]:
    low, high = np.percentile(np.asarray(values, dtype=float), [2.5, 97.5])
    return float(low), float(high)


EXTRAPOLATION_LIMIT = 4  # a prediction beyond this many times the largest measured count gets a warning
LOGICAL_WARNING = "fitted on logical CPU devices that share cores: it tests the harness, not the hardware"


def warnings_of(devices: int, fitted_on: Sequence[int], device_kind: str) -> list[str]:
    """Why a prediction at `devices` deserves less trust: far beyond the measured counts, fitted on logical CPU
    devices, or on no more points than the model's parameters (a line through them fits exactly)."""
    warnings = []
    largest = max(fitted_on)
    if devices > EXTRAPOLATION_LIMIT * largest:
        warnings.append(f"{devices / largest:.0f}x beyond the largest measured count ({largest})")
    if device_kind == "cpu-logical":
        warnings.append(LOGICAL_WARNING)
    if len(fitted_on) <= PARAMETERS:  # the communication line's points: the multi-device counts
        warnings.append(
            f"fitted on {len(fitted_on)} points for {PARAMETERS} parameters: nothing checks the fit, so no interval"
        )
    return warnings


def impossible(step: float, efficiency: float) -> str | None:
    """Why a predicted step no device can reach is refused (None where it is possible)."""
    if not step > 0:
        return f"refused: the fit predicts a step of {step * 1e3:.3g} ms (<= 0)"
    if efficiency > 1:
        return f"refused: the fit predicts efficiency {efficiency:.2f} (> 1: the compute fitted as superlinear)"
    return None


PREDICTED = (
    m.PREDICTED_STEP_S,
    m.PREDICTED_STEP_CI95_LOW_S,
    m.PREDICTED_STEP_CI95_HIGH_S,
    m.PREDICTED_THROUGHPUT_EXAMPLES_PER_S,
    m.PREDICTED_EFFICIENCY,
    m.PREDICTED_EFFICIENCY_CI95_LOW,
    m.PREDICTED_EFFICIENCY_CI95_HIGH,
)


def _checked(predicted: dict, warnings: list[str]) -> tuple[dict, list[str]]:
    """The prediction, or its figures emptied with the reason first among the warnings where it is impossible."""
    why = impossible(predicted[m.PREDICTED_STEP_S], predicted[m.PREDICTED_EFFICIENCY])
    if why is None:
        return predicted, warnings
    return predicted | dict.fromkeys(PREDICTED), [why, *warnings]


def predict(frame: pd.DataFrame, devices: Sequence[int]) -> pd.DataFrame:
    """Predictions at `devices` (total devices) for each workload and strategy with measured communication; each
    row's `warnings` (warnings_of) joined by "; ", empty when none."""
    frame = _scaled(frame)
    rows = []
    for strategy, first, base, multi in _groups(frame):
        fitted_on = [int(d) for d in multi[m.DEVICES]]
        if len(fitted_on) < PARAMETERS:  # unmodelled() names it
            continue
        for n in devices:
            predicted, warnings = _checked(
                _predict(first, base, multi, n), warnings_of(n, fitted_on, str(first.get(m.DEVICE_KIND)))
            )
            rows.append(
                {
                    m.MODEL: first[m.MODEL],
                    m.MODEL_SIZE: first[m.MODEL_SIZE],
                    m.STRATEGY: strategy,
                    m.NETWORK_LINK: link_of(first),
                    m.SCALING: first[m.SCALING],
                    m.DEVICES: n,
                    m.FITTED_ON: fitted_on,
                    **predicted,
                    m.PREDICTION_WARNINGS: "; ".join(warnings),
                }
            )
    return pd.DataFrame(rows)


# Why a mode with multi-device configs is not predicted: the model is an all-reduce of the gradients.
NOT_MODELLED = {
    "parameter_server": "asynchronous steps through parameter servers: no all-reduce for alpha + beta x bytes to fit",
    "pipeline": "model parallelism moves activations between stages, not an all-reduce of gradients",
    "tensor": "model parallelism: DTensor collectives inside the layers, not an all-reduce of gradients",
    "hybrid": "model parallelism: DTensor collectives inside the layers, not an all-reduce of gradients",
}
NO_COMMUNICATION = "no communication figures measured (comm_breakdown off, or not measurable in this mode)"
ONE_COUNT = "communication measured at one multi-device count: alpha and beta need two"


def unmodelled(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """(what, why) for each strategy or parallelism whose ok multi-device configs `predict` leaves out."""
    ok = frame[(frame[m.STATUS] == m.STATUS_OK) & (frame[m.DEVICES] > 1)]
    left, counts = [], {}
    for _, row in ok.iterrows():
        data = row.get(m.PARALLELISM) in (None, "data") or row.get(m.PARALLELISM) != row.get(m.PARALLELISM)
        what = str(row[m.STRATEGY]) if data else str(row[m.PARALLELISM])
        if what in NOT_MODELLED:
            left.append((what, NOT_MODELLED[what]))
        elif exposed_not_measured(what):
            left.append((what, f"exposed communication {exposed_not_measured(what)}"))
        elif pd.isna(row.get(m.COMM_TIME_EXPOSED_S)):
            left.append((what, NO_COMMUNICATION))
        else:  # a communication line per workload, strategy and link (as _groups): two counts at least
            counts.setdefault((workload_key(row), what, link_of(row)), set()).add(int(row[m.DEVICES]))
    left += [(what, ONE_COUNT) for (_, what, _), seen in counts.items() if len(seen) < PARAMETERS]
    return list(dict.fromkeys(left))


def holdout(frame: pd.DataFrame) -> pd.DataFrame:
    """Per workload and strategy whose fits keep more points than parameters without the largest measured device
    count (three or more multi-device counts): the largest predicted from the others."""
    frame = _scaled(frame)
    rows = []
    for strategy, first, base, multi in _groups(frame):
        if len(multi) - 1 < PARAMETERS:  # the line through the points left predicts the held-out one
            continue
        held, rest = multi.iloc[-1], multi.iloc[:-1]
        guess = _predict(first, base, rest, int(held[m.DEVICES]))
        low, high = guess[m.PREDICTED_STEP_CI95_LOW_S], guess[m.PREDICTED_STEP_CI95_HIGH_S]
        measured = float(held[m.STEP_TIME_MEDIAN_S])
        rows.append(
            {
                m.MODEL: first[m.MODEL],
                m.STRATEGY: strategy,
                m.NETWORK_LINK: link_of(first),
                m.DEVICES: int(held[m.DEVICES]),
                m.FITTED_ON: list(rest[m.DEVICES]),
                m.MEASURED_STEP_S: measured,
                m.PREDICTED_STEP_S: guess[m.PREDICTED_STEP_S],
                m.PREDICTED_STEP_CI95_LOW_S: low,
                m.PREDICTED_STEP_CI95_HIGH_S: high,
                m.PREDICTION_ERROR: guess[m.PREDICTED_STEP_S] / measured - 1.0,
                m.INSIDE_INTERVAL: None if low is None else low <= measured <= high,
            }
        )
    return pd.DataFrame(rows)
