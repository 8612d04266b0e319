"""What identifies a measurement and a workload in a records frame, and small helpers every analysis uses. Pure pandas,
no TensorFlow."""

from __future__ import annotations

import math

import pandas as pd

from tfscale import metrics as m
from tfscale.axes import AXES, WORKLOAD_AXES

# What identifies one measurement: a config in one run of one suite. A config id alone repeats when a suite runs
# twice (`tfscale report results/<suite>` of two runs looked configs up by it and crashed).
MEASUREMENT_KEY = (m.SUITE, m.RUN_ID, m.CONFIG_ID)

# What makes configs one workload, whose one-device config is the others' baseline: the run (a baseline comes from
# the same measurement session), the device and every axis that says what the work is, not how it is laid out
# (tfscale.axes.WORKLOAD_AXES: model and size, batch, precision, optimizer, task, data and its pipeline settings).
WORKLOAD_KEY = (m.SUITE, m.RUN_ID, m.DEVICE, *WORKLOAD_AXES)


def workload_key(row: pd.Series) -> tuple:
    """What makes configs one workload (WORKLOAD_KEY), missing values as None."""
    return tuple(None if _missing(row.get(c)) else row.get(c) for c in WORKLOAD_KEY)


def measurement_key(row: pd.Series) -> tuple:
    """The row's MEASUREMENT_KEY."""
    return tuple(row.get(c) for c in MEASUREMENT_KEY)


def baseline_key(row: pd.Series) -> tuple:
    """The MEASUREMENT_KEY of the row's baseline (add_scaling picks it in the row's own suite and run)."""
    return (row.get(m.SUITE), row.get(m.RUN_ID), row.get(m.BASELINE_CONFIG_ID))


def by_measurement(frame: pd.DataFrame) -> dict[tuple, pd.Series]:
    """The rows of `frame` by their MEASUREMENT_KEY (one row per config and run: repeats are combined on load)."""
    return {measurement_key(row): row for _, row in frame.iterrows()}


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _number(value) -> float | None:
    return None if _missing(value) else float(value)


CONFIG_AXES = (m.DEVICE, *AXES)  # what makes a config: every axis (a later axis included) and the device


def _numeric(frame: pd.DataFrame, name: str) -> pd.Series:
    """A column as floats: NaN where it is empty, and everywhere for records older than the column."""
    values = frame[name] if name in frame.columns else pd.Series(math.nan, index=frame.index)
    return pd.to_numeric(values, errors="coerce").astype("float64")


def throughput_interval(row: pd.Series) -> tuple[float | None, float | None]:
    """Throughput's 95 % CI from the median step's: throughput x step / the CI's high and low ends (throughput is
    examples per median step, whether the global batch or, for ParameterServer, the examples completed)."""
    columns = (m.STEP_TIME_CI95_LOW_S, m.STEP_TIME_CI95_HIGH_S, m.STEP_TIME_MEDIAN_S)
    low, high, step = (_number(row.get(c)) for c in columns)
    if low is None or high is None or step is None or low <= 0:
        return None, None
    per_step = float(row[m.THROUGHPUT_EXAMPLES_PER_S]) * step
    return per_step / high, per_step / low


def _plain(value):
    """A setting as written in a suite: 4, not 4.0 (a column with empty cells holds its counts as floats)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value
