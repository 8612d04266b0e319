"""The drift between runs (tfscale.stats.drift) and how a record's CI takes it: exact values."""

import math

import numpy as np
import pytest

from tfscale import metrics as m
from tfscale.stats.core import Z_975, t_975
from tfscale.stats.drift import RunDrift, between_runs
from tfscale.stats.repeats import combine, covers_drift, drift_of, offsets_of
from tfscale.stats.uncertainty import BOOTSTRAP_RESAMPLES, ProcessSpread, offset_factors


def stated(run: str, config: str, median_s: float, half_width_log: float = 0.0, status: str = m.STATUS_OK) -> dict:
    """A run's record of a config: its median and a CI of that half-width on the log scale."""
    return {
        m.RUN_ID: run,
        m.CONFIG_ID: config,
        m.STATUS: status,
        m.STEP_TIME_MEDIAN_S: median_s,
        m.STEP_TIME_CI95_LOW_S: median_s * math.exp(-half_width_log),
        m.STEP_TIME_CI95_HIGH_S: median_s * math.exp(half_width_log),
    }


def test_the_drift_pools_each_configs_log_variance_between_runs_beyond_its_cis():
    # config a in 3 runs: log medians 0, 0.1, -0.1 (variance 0.01), CIs of half-width 0.098 = 1.96 x 0.05;
    # config b in 2 runs: log medians 0 and 0.2 (variance 0.02), no CI; config c in one run only: not pooled;
    # a failed record is not a run's measurement
    records = [
        stated("r1", "a", 1.0, Z_975 * 0.05),
        stated("r2", "a", math.exp(0.1), Z_975 * 0.05),
        stated("r3", "a", math.exp(-0.1), Z_975 * 0.05),
        {**stated("r1", "b", 1.0), m.STEP_TIME_CI95_LOW_S: None},
        {**stated("r3", "b", math.exp(0.2)), m.STEP_TIME_CI95_LOW_S: None},
        stated("r4", "c", 2.0),
        stated("r4", "a", 9.0, status=m.STATUS_FAILED),
    ]
    expected = (2 * (0.01 - 0.05**2) + 1 * 0.02) / 3
    assert between_runs(records) == RunDrift(pytest.approx(math.sqrt(expected)), 3, 4)


def test_no_config_in_two_runs_or_cis_wider_than_the_drift():
    assert between_runs([stated("r1", "a", 1.0), stated("r2", "b", 1.0)]) is None
    wide = [stated("r1", "a", 1.0, 0.5), stated("r2", "a", math.exp(0.01), 0.5)]
    assert between_runs(wide) == RunDrift(0.0, 1, 2)


def drifted(line: dict, drift: RunDrift) -> dict:
    return line | {m.RUN_DRIFT_SD_REL: drift.sd_log, m.RUN_DRIFT_DF: drift.df, m.RUN_DRIFT_RUNS: drift.runs}


def one_line(half_width_log: float) -> dict:
    return stated("r", "c", 0.2, half_width_log) | {
        m.REPEAT: 0,
        m.STEP_TIMES_S: [0.2] * 8,
        m.SAMPLES: 8,
        m.GLOBAL_BATCH_SIZE: 32,
        m.REPLICAS: 1,
        m.CI_TARGET: 0.02,
    }


def test_a_one_process_ci_takes_the_process_spread_and_the_drift_on_each_side():
    spread, drift = ProcessSpread(0.05, 6), RunDrift(0.04, 12, 5)
    record = combine([drifted(one_line(0.03), drift)], spread)
    side = math.hypot(0.03, t_975(6) * 0.05, t_975(12) * 0.04)
    assert record[m.STEP_TIME_CI95_LOW_S] == pytest.approx(0.2 * math.exp(-side))
    assert record[m.STEP_TIME_CI95_HIGH_S] == pytest.approx(0.2 * math.exp(side))
    assert record[m.CI_COVERS].endswith(covers_drift(drift))
    assert covers_drift(drift) == (
        "; and the drift between runs of this suite on this host (sd 4.0% with 12 degrees of freedom, from its 5 "
        "earlier runs)"
    )
    # the drift alone, without a process spread measured in the run
    alone = combine([drifted(one_line(0.03), drift)])
    assert alone[m.STEP_TIME_CI95_HIGH_S] == pytest.approx(0.2 * math.exp(math.hypot(0.03, t_975(12) * 0.04)))
    assert drift_of(alone) == drift and offsets_of(alone) == (drift,)


def test_a_record_without_drift_columns_has_none():
    assert drift_of(one_line(0.03)) is None and offsets_of(one_line(0.03)) == ()


def test_the_drift_moves_every_process_of_a_run_together():
    rng = np.random.default_rng(0)
    drift = RunDrift(0.1, 1_000_000, 3)  # t with a million degrees of freedom: about normal
    factors = np.log(offset_factors(drift, 5, rng))
    assert factors.size == BOOTSTRAP_RESAMPLES
    assert np.std(factors) == pytest.approx(0.1, rel=0.05)  # not 0.1 / sqrt(5): the run's processes share it
    assert drift.offset_sd(5) == drift.offset_sd(1) == 0.1
