"""Steps in a series of runs (tfscale.stats.changepoints): exact values on series whose noise is a fixed pattern."""

import pytest

from tfscale.stats.changepoints import Point, find_steps

NOISE = [1.0, -1.0, 0.5, -0.5, 0.0, 1.0, -1.0, 0.5, -0.5, 0.0]  # % about the level: about 1 % of noise


def runs(levels, ci=2.0):
    """Runs at these levels, each with the noise pattern's offset and a 95 % CI of +-ci %."""
    out = []
    for i, level in enumerate(levels):
        v = level * (1 + NOISE[i % len(NOISE)] / 100)
        out.append(Point(v, v * (1 - ci / 100), v * (1 + ci / 100)))
    return out


def test_a_steady_series_has_no_step():
    fit = find_steps(runs([100] * 20))
    assert (fit.steps, fit.outliers) == ([], [])
    assert fit.levels == pytest.approx([99.9974999] * 20)


def test_a_5_percent_step_inside_1_percent_noise_is_found_where_it_is():
    [step] = find_steps(runs([100] * 10 + [105] * 10)).steps
    assert step.index == 10
    assert step.change == pytest.approx(0.05, abs=1e-12)  # the same noise pattern on both sides
    assert (step.change_low, step.change_high) == pytest.approx((0.0403957, 0.0596929), abs=1e-6)


def test_a_step_the_size_of_the_noise_is_not_called():
    assert find_steps(runs([100] * 10 + [101] * 10)).steps == []


def test_two_steps():
    up, down = find_steps(runs([100] * 6 + [110] * 6 + [95] * 6)).steps
    assert (up.index, down.index) == (6, 12)
    assert (up.change, down.change) == pytest.approx((0.0963393, -0.1341964), abs=1e-6)
    assert up.after == down.before


def test_one_outlier_run_is_named_not_a_step():
    points = runs([100] * 20)
    points[7] = Point(130.0, 127.4, 132.6)
    fit = find_steps(points)
    assert (fit.steps, fit.outliers, fit.pending) == ([], [7], None)


def test_the_latest_run_alone_is_not_yet_a_change_its_second_is():
    alone = find_steps(runs([100] * 10 + [120]))
    assert (alone.steps, alone.pending) == ([], 10)
    [step] = find_steps(runs([100] * 10 + [120] * 2)).steps
    assert step.index == 10


def test_too_narrow_intervals_are_floored_at_the_run_to_run_scatter():
    # CIs of +-0.1 % around 1 % noise: without the floor every wobble would be a step
    assert find_steps(runs([100] * 20, ci=0.1)).steps == []


def test_short_series():
    assert find_steps([]).steps == [] and find_steps([Point(1.0)]).steps == []
