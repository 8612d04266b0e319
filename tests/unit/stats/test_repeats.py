"""Combining a config's processes (repeats) into one record: exact values."""

import math

import pytest

from tfscale import metrics as m
from tfscale.stats.core import Z_975, t_975
from tfscale.stats.repeats import (
    COVERS_WITHIN,
    combine,
    combine_all,
    covers_between,
    covers_spread,
    run_process_spread,
    samples_of,
    spread_of,
)
from tfscale.stats.uncertainty import ProcessSpread


def line(repeat: int, samples: list[float], **extra) -> dict:
    return {
        m.RUN_ID: "r",
        m.CONFIG_ID: "c",
        m.STATUS: m.STATUS_OK,
        m.REPEAT: repeat,
        m.STEP_TIMES_S: samples,
        m.STEP_TIME_MEDIAN_S: sorted(samples)[len(samples) // 2] if samples else None,
        m.GLOBAL_BATCH_SIZE: 32,
        m.REPLICAS: 2,
        m.CI_TARGET: 0.02,
        m.TIMED_STEPS: 10 * len(samples),
        m.DURATION_S: 5.0,
        m.PEAK_MEMORY_BYTES: 1000 + repeat,
        **extra,
    }


def test_one_process_is_kept_and_says_its_ci_covers_one_process():
    record = combine([line(0, [1.0, 2.0, 3.0])])
    assert record[m.CI_COVERS] == COVERS_WITHIN and record[m.REPEAT] is None
    assert record[m.STEP_TIMES_S] == [1.0, 2.0, 3.0] and samples_of(record) == [1.0, 2.0, 3.0]


def test_processes_combine_into_the_median_of_medians_with_a_between_process_ci():
    slow, fast, middle = [0.30] * 6, [0.10] * 6, [0.20] * 6
    record = combine([line(0, slow), line(2, middle), line(1, fast)])
    assert record[m.REPEAT_SAMPLES] == [6, 6, 6]
    assert record[m.REPEAT_MEDIANS_S] == [0.30, 0.10, 0.20]  # in repeat order
    assert record[m.STEP_TIMES_S] == slow + fast + middle
    assert samples_of(record) == [slow, fast, middle]
    assert record[m.STEP_TIME_MEDIAN_S] == pytest.approx(0.20)
    assert record[m.THROUGHPUT_EXAMPLES_PER_S] == pytest.approx(160.0)
    assert record[m.THROUGHPUT_PER_REPLICA_EXAMPLES_PER_S] == pytest.approx(80.0)
    assert (record[m.STEP_TIME_CI95_LOW_S], record[m.STEP_TIME_CI95_HIGH_S]) == (0.10, 0.30)
    assert record[m.CI_HALF_WIDTH_REL] == pytest.approx(0.5) and record[m.CI_MET] is False
    assert record[m.CI_COVERS] == covers_between(3)
    assert covers_between(3) == "between 3 processes (hierarchical bootstrap); no spread pooled over the run"
    assert (record[m.SAMPLES], record[m.TIMED_STEPS], record[m.DURATION_S]) == (18, 180, 15.0)
    assert record[m.PEAK_MEMORY_BYTES] == 1000  # other columns: the first process's (repeat 0), not the median one
    assert record[m.REPEAT] is None


def test_a_failed_process_makes_the_config_failed_and_names_the_repeat():
    failed = line(1, [], **{m.STATUS: m.STATUS_TIMEOUT, m.REASON: "no step for 60 s"})
    record = combine([line(0, [0.1] * 6), failed])
    assert record[m.STATUS] == m.STATUS_TIMEOUT and record[m.REASON] == "repeat 1 of 2: no step for 60 s"


def test_lines_combine_per_run_and_config_in_first_seen_order():
    lines = [line(0, [0.1] * 6), {**line(0, [0.2] * 6), m.CONFIG_ID: "d"}, line(1, [0.3] * 6)]
    records = combine_all(lines)
    assert [(r[m.CONFIG_ID], r.get(m.REPEAT_SAMPLES)) for r in records] == [("c", [6, 6]), ("d", None)]


def measured(repeat: int, median_s: float, half_width_rel: float = 0.0, run: str = "r", config: str = "c") -> dict:
    """A process line with a given median and a symmetric (on the log scale) CI of that relative half-width."""
    low, high = median_s * math.exp(-half_width_rel), median_s * math.exp(half_width_rel)
    return {
        **line(repeat, [median_s] * 8),
        m.RUN_ID: run,
        m.CONFIG_ID: config,
        m.STEP_TIME_CI95_LOW_S: low,
        m.STEP_TIME_CI95_HIGH_S: high,
        m.SAMPLES: 8,
    }


def test_the_process_spread_pools_log_variances_beyond_each_process_noise():
    # config a: log medians 0 and 0.2 (variance 0.02), each within half-width 0.1 of a CI of 8 windows in 4
    # batches, t_975(3) = 3.182 standard errors: within variance (0.1 / 3.182)^2;
    # config b: log medians 0, 0.1 and -0.1 (variance 0.01), no within noise; config c ran once: not pooled
    a = [measured(0, 1.0, 0.1, config="a"), measured(1, math.exp(0.2), 0.1, config="a")]
    b = [measured(0, 1.0, config="b"), measured(1, math.exp(0.1), config="b"), measured(2, math.exp(-0.1), config="b")]
    spread = run_process_spread([a, b, [measured(0, 2.0, config="c")]])
    expected = (1 * (0.02 - (0.1 / 3.182446) ** 2) + 2 * 0.01) / 3
    assert spread == ProcessSpread(pytest.approx(math.sqrt(expected)), 3)
    assert run_process_spread([[measured(0, 2.0)]]) is None  # nothing ran twice: no spread
    # within noise larger than the spread between processes: floored at 0
    noisy = [measured(0, 1.0, 0.5), measured(1, math.exp(0.01), 0.5)]
    assert run_process_spread([noisy]) == ProcessSpread(0.0, 1)


def test_a_line_without_its_window_count_reads_its_ci_as_normal():
    a = [{**measured(0, 1.0, 0.1), m.SAMPLES: None}, {**measured(1, math.exp(0.2), 0.1), m.SAMPLES: None}]
    assert run_process_spread([a]) == ProcessSpread(pytest.approx(math.sqrt(0.02 - (0.1 / Z_975) ** 2)), 1)


def test_one_process_ci_takes_the_run_spread_on_each_side():
    spread = ProcessSpread(0.05, 6)
    record = combine([measured(0, 0.2, 0.03)], spread)
    between = t_975(6) * 0.05
    assert record[m.STEP_TIME_CI95_LOW_S] == pytest.approx(0.2 * math.exp(-math.hypot(0.03, between)))
    assert record[m.STEP_TIME_CI95_HIGH_S] == pytest.approx(0.2 * math.exp(math.hypot(0.03, between)))
    assert record[m.CI_HALF_WIDTH_REL] == pytest.approx(math.exp(math.hypot(0.03, between)) - 1)
    assert record[m.CI_MET] is False and record[m.STEP_TIME_MEDIAN_S] == 0.2
    assert record[m.CI_COVERS] == covers_spread(1, spread)
    assert "sd 5.0% with 6 degrees of freedom" in record[m.CI_COVERS]
    assert spread_of(record) == spread and spread_of(combine([measured(0, 0.2, 0.03)])) is None


def test_every_config_of_a_run_covers_that_run_spread_and_no_other_run():
    lines = [
        measured(0, 1.0, config="a"),
        measured(1, math.exp(0.1), config="a"),  # run r: log variance 0.005, df 1
        measured(0, 0.5, 0.01, config="b"),  # run r, one process
        measured(0, 0.5, 0.01, run="other", config="b"),  # a run with nothing repeated
    ]
    records = {(r[m.RUN_ID], r[m.CONFIG_ID]): r for r in combine_all(lines)}
    assert spread_of(records["r", "a"]) == spread_of(records["r", "b"]) == ProcessSpread(pytest.approx(0.005**0.5), 1)
    assert spread_of(records["other", "b"]) is None and records["other", "b"][m.CI_COVERS] == COVERS_WITHIN
    # df 1: t = 12.7, so the one-process config's CI is wide: what one pair of processes can say
    assert records["r", "b"][m.STEP_TIME_CI95_HIGH_S] == pytest.approx(
        0.5 * math.exp(math.hypot(0.01, 12.706205 * 0.005**0.5))
    )


def test_the_earlier_runs_spread_pools_with_the_run_own_by_degrees_of_freedom():
    from tfscale.stats.repeats import HISTORY_COLUMNS, history_of, pooled, valid_history

    run, history = ProcessSpread(0.1, 6), ProcessSpread(0.2, 2, 3)
    both = pooled(run, history)
    assert both == ProcessSpread(pytest.approx(math.sqrt((6 * 0.01 + 2 * 0.04) / 8)), 8, 3)
    assert (pooled(None, history), pooled(run, None), pooled(None, None)) == (history, run, None)
    assert valid_history(0.2, 2, 3) == history
    for bad in ((True, 2, 3), (0.2, 0, 3), (0.2, 2, 0), (-0.1, 2, 3), (float("nan"), 2, 3), (None, 2, 3)):
        assert valid_history(*bad) is None, bad
    carried = dict(zip(HISTORY_COLUMNS, (0.2, 2, 3), strict=True))
    assert history_of([measured(0, 1.0), {**measured(1, 1.0), **carried}]) == history


def test_a_run_pools_the_history_its_lines_carry_even_without_repeats():
    from tfscale.stats.repeats import HISTORY_COLUMNS

    carried = dict(zip(HISTORY_COLUMNS, (0.05, 12, 4), strict=True))
    [record] = combine_all([{**measured(0, 0.2, 0.03), **carried}])
    between = t_975(12) * 0.05
    assert record[m.STEP_TIME_CI95_HIGH_S] == pytest.approx(0.2 * math.exp(math.hypot(0.03, between)))
    assert (record[m.PROCESS_SPREAD_SD_REL], record[m.PROCESS_SPREAD_DF]) == (0.05, 12)
    assert record[m.CI_COVERS] == (
        "its process's windows and the spread between fresh processes (sd 5.0% with 12 degrees of freedom, pooled "
        "over the configs run in 2+ processes of this run and those of the suite's 4 earlier runs on this host)"
    )


def test_what_a_run_accounts_for_is_its_processes_noise_and_spread_without_the_t_margins():
    from tfscale.stats.repeats import explained_variance

    within = (0.1 / 3.182446) ** 2  # a CI of 8 windows in 4 batches, half-width 0.1 on the log scale: t_975(3)
    two = [measured(0, 1.0, 0.1), measured(1, math.exp(0.2), 0.1)]
    spread = ProcessSpread(0.05, 6)
    assert explained_variance(two, spread) == pytest.approx(2 * within / 4 + 0.05**2 / 2)
    assert explained_variance(two[:1], None) == pytest.approx(within)
    assert explained_variance(two[:1], spread) == pytest.approx(within + 0.05**2)  # not (t_975(6) x 0.05)^2
