import math
import random

import pytest

from tfscale.stats.core import CI_MIN_WINDOWS, StepStats, batch_count, median, median_ci, percentile, t_975


def test_percentile_linear_interpolation():
    values = [1.0, 2.0, 3.0, 4.0]
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    assert percentile(values, 50) == 2.5
    assert percentile(values, 10) == pytest.approx(1.3)
    assert percentile(values, 90) == pytest.approx(3.7)
    assert percentile([5.0], 90) == 5.0


def test_median():
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5


@pytest.mark.parametrize(("n", "batches"), [(6, 4), (91, 4), (92, 5), (150, 5), (729, 9), (1000, 10), (5000, 10)])
def test_batch_count_is_the_cube_root_from_4_to_10(n, batches):
    assert batch_count(n) == batches


# 1..20 in four batches of five; below the median 10.5: 3, 2, 3, 2 of each batch (fractions 0.6, 0.4, 0.6, 0.4).
MIXED = [1, 2, 3, 11, 12, 4, 5, 13, 14, 15, 6, 7, 8, 16, 17, 9, 10, 18, 19, 20]


def test_median_ci_from_batch_means_exact_values():
    # s2 = 5 x (4 x 0.1^2) / 3 = 1 / 15; h = t_975(3) sqrt(20 / 15); ranks 10.5 -+ h, interpolated (x_(k) = k)
    ci = median_ci([float(x) for x in MIXED])
    half = 3.182446 * math.sqrt(4 / 3)
    assert (ci.batches, ci.df) == (4, 3)
    assert ci.low == pytest.approx(10.5 - half) and ci.high == pytest.approx(10.5 + half)
    assert ci.inflation == pytest.approx((1 / 15) / 0.25)


def test_median_ci_of_a_level_shift_spans_every_window():
    # lows then highs: batch fractions 1, 1, 0, 0; s2 = 5 x 4 x 0.25 / 3; h = 18.4 ranks: clamped to x_(1), x_(20)
    ci = median_ci([float(i) for i in range(20)])
    assert (ci.low, ci.high) == (0.0, 19.0)
    assert ci.inflation == pytest.approx((5 / 3) / 0.25)


def test_median_ci_of_a_periodic_pattern_keeps_the_rounding_floor():
    # 1, 2, 3 repeated: every batch of three holds one below the median 2 and one at it (fractions all 1/2), so
    # s2 = 0 < the floor B / (12 n) = 4 / 144; h = t_975(3) sqrt(12 / 36) = 1.837 ranks either side of 6.5
    ci = median_ci([1.0, 2.0, 3.0] * 4)
    half = 3.182446 * math.sqrt(1 / 3)
    assert ci.low == pytest.approx(1 + (6.5 - half - 4)) and ci.high == pytest.approx(2 + (6.5 + half - 8))


def test_median_ci_needs_six_windows_and_is_a_point_for_equal_ones():
    assert CI_MIN_WINDOWS == 6
    assert median_ci([1.0, 2.0, 3.0, 4.0, 5.0]) is None
    ci = median_ci([2.0] * 6)  # every sign at the median (0.5): no spread
    assert (ci.low, ci.high, ci.inflation) == (2.0, 2.0, 1.0)


def test_step_stats_exact_values():
    stats = StepStats.from_samples([0.010, 0.012, 0.011, 0.013, 0.030, 0.011, 0.012, 0.010, 0.011, 0.012])
    assert stats.n == 10
    assert stats.median == pytest.approx(0.0115)
    assert stats.mean == pytest.approx(0.0132)
    assert stats.p10 == pytest.approx(0.010)
    assert stats.p90 == pytest.approx(0.0147)
    assert stats.mad == pytest.approx(0.0005)
    # 4 batches (edges 0, 2, 5, 8, 10): fractions below 0.0115 of 1/2, 1/3, 2/3, 1/2; s2 = 6 x (1/6)^2 / 3 = 1/18;
    # h = t_975(3) sqrt(10 / 18) = 2.372: ranks 3.128 and 7.872, between equal neighbours 0.011 and 0.012
    assert (stats.ci95_low, stats.ci95_high) == (0.011, 0.012)
    assert (stats.ci_batches, stats.inflation) == (4, pytest.approx((1 / 18) / 0.25))
    assert stats.cv == pytest.approx(0.0005 / 0.0115)


def test_few_samples_have_no_confidence_interval():
    stats = StepStats.from_samples([1.0, 2.0, 3.0])
    assert (stats.median, stats.ci95_low, stats.ci95_high) == (2.0, None, None)


def test_no_samples_is_an_error():
    with pytest.raises(ValueError):
        StepStats.from_samples([])


def test_step_stats_widen_for_windows_in_runs():
    # The same 20 values, once in batches that each hold about half the lows, once sorted (a level shift).
    mixed = StepStats.from_samples([float(x) for x in MIXED])
    shifted = StepStats.from_samples([float(i) for i in range(20)])
    assert mixed.ci_batches == 4 and mixed.inflation < 1
    assert (shifted.ci95_low, shifted.ci95_high) == (0.0, 19.0) and shifted.inflation > 6


def test_step_stats_of_a_thousand_shuffled_windows_near_the_normal_ranks():
    # 10 batches, t_975(9) = 2.262: about 2.26 sqrt(n) / 2 = 35.8 ranks from the middle for independent windows
    shuffled = [float(i) for i in range(1000)]
    random.Random(0).shuffle(shuffled)
    stats = StepStats.from_samples(shuffled)
    assert stats.ci_batches == 10 and 499.5 - 60 < stats.ci95_low < 499.5 - 20


def test_t_quantile_from_the_table_and_beyond():
    assert (t_975(1), t_975(6), t_975(30)) == (12.706205, 2.446912, 2.042272)
    assert t_975(40) == pytest.approx(2.021075, abs=1e-5)  # Cornish-Fisher; the table value is 2.021075
    assert t_975(120) == pytest.approx(1.979930, abs=1e-5)
    with pytest.raises(ValueError, match="df >= 1"):
        t_975(0)


def test_excess_spread_pools_the_variance_beyond_each_members_own():
    from tfscale.stats.core import Excess, excess_spread

    # group 1: values 0, 0.2 (variance 0.02), own variance 0.005 each; group 2: 1, 1.1, 0.9 (variance 0.01), none;
    # group 3 has one member: not pooled
    groups = [[(0.0, 0.005), (0.2, 0.005)], [(1.0, 0.0), (1.1, 0.0), (0.9, 0.0)], [(5.0, 0.0)]]
    found = excess_spread(groups)
    assert found.df == 3 and math.isclose(found.sd, math.sqrt((1 * (0.02 - 0.005) + 2 * 0.01) / 3))
    assert excess_spread([[(0.0, 1.0), (0.1, 1.0)]]) == Excess(0.0, 1)  # own noise larger: floored at 0
    assert excess_spread([[(0.0, 0.0)]]) is None
