"""The measuring rules on fixed numbers: exact values."""

import math

import pytest

from tfscale.stats.precision import (
    MAX_SAMPLES,
    STOP_BUDGET,
    STOP_MAX_SAMPLES,
    STOP_MIN_SAMPLES,
    STOP_TARGET,
    Blocks,
    Precision,
    calibrated_window_steps,
    check_due,
    ci_half_width_rel,
    drift_beyond_noise,
    fixed_steps_window,
    steady,
    stop_reason,
    trend,
    window_drift,
)


def test_a_long_enough_window_keeps_its_size():
    assert calibrated_window_steps(4, 0.05, 0.05) == 4
    assert calibrated_window_steps(1, 0.2, 0.05) == 1


def test_a_short_window_grows_to_the_minimum_with_a_margin():
    # 1 step of 2 ms, 50 ms wanted: ceil(1 x 0.05 / 0.002 x 1.2) = 30, capped at 10 x 1
    assert calibrated_window_steps(1, 0.002, 0.05) == 10
    # 10 steps lasted 20 ms: ceil(10 x 0.05 / 0.02 x 1.2) = 30
    assert calibrated_window_steps(10, 0.02, 0.05) == 30
    # just short: at least one more step
    assert calibrated_window_steps(100, 0.04999, 0.05) == 121
    assert calibrated_window_steps(3, 0.0, 0.05) == 30


def test_trend_is_the_log_slope_per_second_with_its_standard_error():
    growing = [math.exp(0.01 * i) for i in range(10)]  # +1 % per 0.1 s block: 0.1 per second in logs
    assert trend(growing, 0.1).slope_per_s == pytest.approx(0.1) and trend(growing, 0.1).stderr_per_s == pytest.approx(
        0.0, abs=1e-12
    )
    # 1, 2, 1: log slope 0; residuals (-1/3, 2/3, -1/3) ln 2 over 1 dof, sxx 0.02: se = sqrt(2/3) ln 2 / sqrt(0.02)
    bumped = trend([1.0, 2.0, 1.0], 0.1)
    assert bumped.slope_per_s == pytest.approx(0.0, abs=1e-12)
    assert bumped.stderr_per_s == pytest.approx(math.sqrt(2 / 3) * math.log(2) / math.sqrt(0.02))


def test_steady_is_no_trend_beyond_five_percent_a_second_over_the_last_second():
    assert not steady([1.0] * 9)  # 0.9 s of blocks: not yet a second
    assert steady([2.0] + [1.0] * 10)  # the slow first block is older than the last second
    assert not steady([math.exp(0.01 * i) for i in range(10)])  # +10 %/s, noise-free: still warming up
    assert steady([math.exp(0.004 * i) for i in range(10)])  # +4 %/s: within the 5 %/s allowed
    # noise without a trend: the slope's CI reaches within 5 %/s, steady
    assert steady([1.0, 1.1] * 5)
    # the old rule ("last 3 blocks within 5 %") passed a +20 %/s drift: this one does not
    assert not steady([math.exp(0.02 * i) for i in range(10)])


BALANCED = [1.04, 1.06, 1.01, 1.08, 1.0, 1.5, 1.03, 1.07, 1.02, 1.05]


def test_ci_half_width_is_the_larger_side_relative_to_the_median():
    # 10 samples, 4 batches (edges 0, 2, 5, 8, 10) holding 1/2, 2/3, 1/3, 1/2 below the median 1.045: s2 = 1/18,
    # h = t_975(3) sqrt(10 / 18) ranks either side of 5.5; the values step by 0.01 from 1.0 to 1.08 (then 1.5), so
    # each end lies 0.01 h from the median
    samples = BALANCED
    assert ci_half_width_rel(samples) == pytest.approx(0.01 * 3.182446 * math.sqrt(10 / 18) / 1.045)
    assert ci_half_width_rel([1.0] * 5) is None  # no 95 % CI below 6 samples
    assert ci_half_width_rel([2.0] * 6) == 0.0


def test_stop_when_the_target_is_met_after_sixty_windows():
    tight = [1.0, 1.001, 1.002, 0.999, 0.998, 1.0, 1.003, 0.997, 1.0, 1.001] * 6
    assert STOP_MIN_SAMPLES == 60
    assert ci_half_width_rel(tight[: STOP_MIN_SAMPLES - 1]) < 0.02
    assert stop_reason(tight[: STOP_MIN_SAMPLES - 1], 0.1, 0.02, 10.0) is None  # fewer than 60 windows: go on
    assert stop_reason(tight, 0.1, 0.02, 10.0) == STOP_TARGET


def test_stop_at_the_budget_but_never_before_a_ci_exists():
    wide = [1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0]
    assert stop_reason(wide, 9.9, 0.02, 10.0) is None
    assert stop_reason(wide, 10.0, 0.02, 10.0) == STOP_BUDGET
    assert stop_reason(wide[:5], 100.0, 0.02, 10.0) is None  # 5 windows give no CI yet
    assert stop_reason(wide[:6], 100.0, 0.02, 10.0) == STOP_BUDGET
    assert stop_reason([1.0, 2.0] * (MAX_SAMPLES // 2), 0.0, 0.02, 1e9) == STOP_MAX_SAMPLES


def test_precision_record():
    assert Precision.of([1.0] * 6, 0.02) == Precision(0.02, True, 0.0, 6)
    assert Precision.of([1.0] * 5, 0.02) == Precision(0.02, False, None, 5)
    assert Precision.of(BALANCED, 0.02).ci_met is False  # +-2.27 %
    assert Precision.of(BALANCED, 0.03).ci_met is True
    # the same windows in a trend: serially dependent, the CI widens to [x_(1), x_(10)] and misses the target
    assert Precision.of(sorted(BALANCED), 0.03).ci_met is False


@pytest.mark.parametrize(
    ("steps", "wanted", "window"),
    [(6, 40, 1), (19, 40, 1), (20, 40, 2), (100, 40, 10), (100, 7, 5), (100, 1, 1), (97, 40, 1), (1000, 64, 50)],
)
def test_a_fixed_steps_count_keeps_ten_windows_that_divide_it(steps, wanted, window):
    assert fixed_steps_window(steps, wanted) == window


def test_steady_state_compares_blocks_of_windows_not_single_windows():
    blocks = Blocks(block_s=0.1)
    for per_step, window_s in [(1.0, 0.04), (3.0, 0.04), (1.0, 0.04)]:  # one interrupted window in the block
        blocks.add(per_step, window_s)
    assert blocks.medians == [1.0] and blocks.current == []
    for _ in range(3):
        blocks.add(1.02, 0.05)
    assert blocks.medians == [1.0, 1.02]  # the third window starts the third block
    assert not steady(blocks.medians)
    blocks.add(1.04, 0.05)
    assert blocks.medians == [1.0, 1.02, 1.03]  # third block: 1.02 and 1.04
    assert not steady(blocks.medians)  # three blocks, 0.3 s: a trend needs a second of them


def test_the_stopping_rule_is_checked_often_then_sparsely():
    assert all(check_due(n) for n in range(1, 101))
    assert [n for n in range(101, 130) if check_due(n)] == [
        102,
        104,
        106,
        108,
        110,
        112,
        114,
        116,
        118,
        120,
        122,
        124,
        126,
        128,
    ]
    assert check_due(MAX_SAMPLES) and not check_due(MAX_SAMPLES - 1)


def test_the_timed_windows_drift_from_their_first_third_to_their_last():
    flat = [1.0, 1.01, 0.99] * 6  # 18 windows, thirds of 6
    assert window_drift(flat) == pytest.approx(0.0) and not drift_beyond_noise(flat)
    rising = [1.0, 1.01, 0.99] * 2 + [1.02] * 6 + [1.1, 1.11, 1.09] * 2
    assert window_drift(rising) == pytest.approx(0.1) and drift_beyond_noise(rising)
    assert window_drift([1.0] * 17) is None  # thirds of 5: no CI of their own
    # a 3 % drift inside thirds that overlap is not flagged
    overlapping = [1.0, 1.2, 0.8] * 2 + [1.0] * 6 + [1.03, 1.23, 0.83] * 2
    assert window_drift(overlapping) == pytest.approx(0.03) and not drift_beyond_noise(overlapping)
    assert Precision.of(rising, 0.02).window_drift_rel == pytest.approx(0.1)
