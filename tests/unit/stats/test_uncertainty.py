"""Bootstrap CIs of derived figures: exact where the samples leave no doubt, and reproducible."""

import math

import numpy as np
import pytest

from tfscale.stats.core import t_975
from tfscale.stats.uncertainty import (
    BOOTSTRAP_RESAMPLES,
    Interval,
    ProcessSpread,
    difference_of_medians,
    groups_of,
    median_of,
    of_median,
    of_medians,
    offset_factors,
    ratio_of_medians,
    resampled_medians,
    scaled,
    size_of,
)


def test_constant_samples_give_a_point_interval():
    assert ratio_of_medians([2.0] * 10, [1.0] * 7) == Interval(2.0, 2.0)
    assert difference_of_medians([3.0] * 5, [1.0] * 5) == Interval(2.0, 2.0)


def test_two_valued_samples_stay_between_their_extremes():
    # every resampled median of values in {1, 2} lies in [1, 2]: the ratio's CI lies in [1/2, 2/1]
    interval = ratio_of_medians([1.0, 2.0] * 10, [1.0, 2.0] * 10)
    assert 0.5 <= interval.low <= 1.0 <= interval.high <= 2.0


def test_fewer_than_two_samples_give_no_interval():
    assert ratio_of_medians([1.0], [1.0, 2.0]) is None
    assert of_medians([[1.0, 2.0], []], lambda a, b: a + b) is None


def test_the_bootstrap_is_reproducible():
    samples = [1.0, 1.2, 0.9, 1.1, 1.05, 0.95, 1.3, 1.0]
    assert list(resampled_medians(samples)) == list(resampled_medians(samples))
    first = difference_of_medians(samples, [s / 2 for s in samples])
    assert first == difference_of_medians(samples, [s / 2 for s in samples])
    assert first.low <= 1.025 - 0.5125 <= first.high  # the point difference of the medians lies inside


def test_scaled_multiplies_both_ends():
    assert scaled(Interval(1.0, 2.0), 0.5) == Interval(0.5, 1.0)
    assert scaled(None, 2.0) is None


def test_interval_contains():
    assert Interval(0.9, 1.1).contains(1.0)
    assert not Interval(0.9, 0.99).contains(1.0)
    with pytest.raises(TypeError):
        Interval(0.9)  # both ends are required


def test_processes_are_resampled_too_so_their_spread_widens_the_interval():
    # two processes, each perfectly steady, one 20 % slower: within-process windows say nothing of that spread
    first, second = [1.0] * 20, [1.2] * 20
    assert of_median(first + second) is not None
    assert of_median(first) == Interval(1.0, 1.0)  # one steady process alone: no spread to see
    grouped = of_median([first, second])
    assert grouped == Interval(1.0, 1.2)  # resampled processes: both, or either one twice
    assert median_of([first, second]) == pytest.approx(1.1)
    assert size_of([first, second]) == 40 and groups_of([1.0, 2.0])[0].tolist() == [1.0, 2.0]


def test_one_process_given_as_a_group_is_the_plain_bootstrap():
    samples = [1.0, 1.5, 1.2, 1.1, 1.3, 1.4, 1.25, 1.05]
    assert resampled_medians([samples]).tolist() == resampled_medians(samples).tolist()


def test_a_measured_process_spread_moves_constant_samples_by_a_t_distributed_offset():
    # Constant windows: all the interval's width is the process offset, exp(+-t_975(df) x sd) up to bootstrap noise
    spread = ProcessSpread(0.1, 5)
    interval = of_median([2.0] * 10, spread)
    assert math.log(interval.high / 2.0) == pytest.approx(t_975(5) * 0.1, rel=0.1)
    assert math.log(2.0 / interval.low) == pytest.approx(t_975(5) * 0.1, rel=0.1)
    # two processes: the offset of their mean, sd / sqrt(2); three or more: of their median, pi / 2 in variance
    assert spread.offset_sd(2) == pytest.approx(0.1 / math.sqrt(2))
    assert spread.offset_sd(4) == pytest.approx(0.1 * math.sqrt(math.pi / 2 / 4))
    # a ratio of two configs from different processes takes both offsets
    ratio = ratio_of_medians([2.0] * 10, [1.0] * 10, [spread, spread])
    assert math.log(ratio.high / 2.0) > math.log(interval.high / 2.0)


def test_no_spread_no_offset_and_a_zero_spread_leaves_the_windows_alone():
    rng = np.random.default_rng(0)
    assert (offset_factors(None, 3, rng) == np.ones(BOOTSTRAP_RESAMPLES)).all()
    assert (offset_factors(ProcessSpread(0.0, 4), 3, rng) == np.ones(BOOTSTRAP_RESAMPLES)).all()
    assert of_median([1.0, 2.0, 3.0, 4.0], ProcessSpread(0.0, 4)) == of_median([1.0, 2.0, 3.0, 4.0], None)
