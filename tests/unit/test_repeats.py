"""Combining a config's processes (repeats) into one record: exact values."""

import pytest

from tfscale import metrics as m
from tfscale.repeats import COVERS_WITHIN, combine, combine_all, covers_between, samples_of


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
    assert record[m.CI_COVERS] == covers_between(3) == "between 3 processes (hierarchical bootstrap)"
    assert (record[m.SAMPLES], record[m.TIMED_STEPS], record[m.DURATION_S]) == (18, 180, 15.0)
    assert record[m.PEAK_MEMORY_BYTES] == 1002  # other columns: the median process's (repeat 2)
    assert record[m.REPEAT] is None


def test_a_failed_process_makes_the_config_failed_and_names_the_repeat():
    failed = line(1, [], **{m.STATUS: m.STATUS_TIMEOUT, m.REASON: "no step for 60 s"})
    record = combine([line(0, [0.1] * 6), failed])
    assert record[m.STATUS] == m.STATUS_TIMEOUT and record[m.REASON] == "repeat 1 of 2: no step for 60 s"


def test_lines_combine_per_run_and_config_in_first_seen_order():
    lines = [line(0, [0.1] * 6), {**line(0, [0.2] * 6), m.CONFIG_ID: "d"}, line(1, [0.3] * 6)]
    records = combine_all(lines)
    assert [(r[m.CONFIG_ID], r.get(m.REPEAT_SAMPLES)) for r in records] == [("c", [6, 6]), ("d", None)]
