import pytest

from tfscale.stats import StepStats, median, median_ci_ranks, percentile


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
    assert StepStats.from_samples([float(i) for i in range(n)]).ci95_low == ranks[0] - 1
