import pytest

from tfscale.suite.stages import balanced_cuts, bubble_theory, groups


def test_balanced_cuts_minimise_the_largest_stage():
    # mlp/small: 784x1024+1024, 1024x1024+1024, 1024x10+10 parameters
    sizes = [803840, 1049600, 10250]
    assert balanced_cuts(sizes, 2) == [1]  # [803840] [1049600, 10250]
    assert balanced_cuts(sizes, 3) == [1, 2]
    assert balanced_cuts(sizes, 1) == []
    assert balanced_cuts([1, 1, 1, 1], 2) == [2]
    assert balanced_cuts([5, 1, 1, 1, 1, 1], 2) == [1]
    assert groups(["a", "b", "c", "d"], [1, 3]) == [["a"], ["b", "c"], ["d"]]


def test_too_many_stages_is_an_error():
    with pytest.raises(ValueError, match="cannot cut 3 layers into 4 non-empty stages"):
        balanced_cuts([1, 2, 3], 4)


def test_bubble_theory():
    assert bubble_theory(4, 4) == 3 / 7
    assert bubble_theory(1, 8) == 0.0
    assert bubble_theory(2, 8) == 1 / 9
