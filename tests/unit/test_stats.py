import random

import pytest

from tfscale.stats import StepStats, median, median_ci_ranks, percentile, serial_inflation, t_975


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


@pytest.mark.parametrize(("n", "ranks"), [(5, None), (6, (1, 6)), (10, (2, 9)), (20, (6, 15)), (100, (40, 61))])
def test_median_ci_ranks_match_binomial_tables(n, ranks):
    assert median_ci_ranks(n) == ranks


def test_step_stats_exact_values():
    stats = StepStats.from_samples([0.010, 0.012, 0.011, 0.013, 0.030, 0.011, 0.012, 0.010, 0.011, 0.012])
    assert stats.n == 10
    assert stats.median == pytest.approx(0.0115)
    assert stats.mean == pytest.approx(0.0132)
    assert stats.p10 == pytest.approx(0.010)
    assert stats.p90 == pytest.approx(0.0147)
    assert stats.mad == pytest.approx(0.0005)
    assert (stats.ci95_low, stats.ci95_high) == (0.010, 0.013)
    assert stats.cv == pytest.approx(0.0005 / 0.0115)


def test_few_samples_have_no_confidence_interval():
    stats = StepStats.from_samples([1.0, 2.0, 3.0])
    assert (stats.median, stats.ci95_low, stats.ci95_high) == (2.0, None, None)


def test_no_samples_is_an_error():
    with pytest.raises(ValueError):
        StepStats.from_samples([])


@pytest.mark.parametrize(("n", "ranks"), [(1024, (481, 544)), (3000, (1446, 1555))])
def test_median_ci_ranks_past_the_float_range(n, ranks):
    # 2.0**n overflowed from n = 1024 (a pooled three-process record of 1 ms windows has 3,000 samples); the exact
    # ranks are where the normal approximation n/2 -+ 1.96 sqrt(n)/2 puts them
    assert median_ci_ranks(n) == ranks
    assert abs(ranks[0] - (n / 2 - 1.959964 * n**0.5 / 2)) < 1.5
    shuffled = [float(i) for i in range(n)]
    random.Random(0).shuffle(shuffled)  # no serial dependence to widen for
    stats = StepStats.from_samples(shuffled)
    assert stats.inflation == 1.0 and stats.ci95_low == ranks[0] - 1


def test_serial_inflation_exact_values():
    # A trend: signs 1,1,1,0,0,0 (centred +-0.5); lag-1 autocorrelation 0.5, plus Kendall's (1 + 1.5) / 6:
    # r = 0.9167, (1 + r) / (1 - r) = 23; Bartlett with L = 4 gives only 1.267, so the AR(1) figure is taken.
    assert serial_inflation([1, 2, 3, 4, 5, 6]) == pytest.approx(23.0)
    # Alternating: negative dependence never narrows the CI below the independent one.
    assert serial_inflation([1, 3, 1, 3, 1, 3]) == 1.0
    assert serial_inflation([1, 2]) == 1.0 and serial_inflation([5, 5, 5, 5]) == 1.0


def test_inflation_widens_the_ranks_by_its_square_root():
    # n 100: exact ranks 40 and 61, 10.5 from the middle 50.5; x4 variance: 21 from the middle -> 29.5 -> 30.
    assert median_ci_ranks(100, inflation=4.0) == (30, 71)
    assert median_ci_ranks(100, inflation=1.0) == median_ci_ranks(100) == (40, 61)
    assert median_ci_ranks(6, inflation=100.0) == (1, 6) and median_ci_ranks(5, inflation=4.0) is None


def test_step_stats_widen_for_windows_in_runs():
    # The same 20 values, once interleaved and once sorted into a run of lows then highs (a level shift).
    values = [float(i) for i in range(20)]
    interleaved = StepStats.from_samples([values[i // 2 + (i % 2) * 10] for i in range(20)])
    shifted = StepStats.from_samples(values)
    assert (interleaved.ci95_low, interleaved.ci95_high, interleaved.inflation) == (5.0, 14.0, 1.0)
    assert shifted.inflation > 10 and (shifted.ci95_low, shifted.ci95_high) == (0.0, 19.0)


def test_t_quantile_from_the_table_and_beyond():
    assert (t_975(1), t_975(6), t_975(30)) == (12.706205, 2.446912, 2.042272)
    assert t_975(40) == pytest.approx(2.021075, abs=1e-5)  # Cornish-Fisher; the table value is 2.021075
    assert t_975(120) == pytest.approx(1.979930, abs=1e-5)
    with pytest.raises(ValueError, match="df >= 1"):
        t_975(0)
