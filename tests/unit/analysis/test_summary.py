"""The terminal summary's efficiency text."""

import math

import pandas as pd

from tfscale import metrics as m
from tfscale.analysis.summary import efficiency_text


def row(value, low=None, high=None) -> pd.Series:
    return pd.Series(
        {
            m.SCALING_EFFICIENCY: value,
            m.SCALING_EFFICIENCY_CI95_LOW: low,
            m.SCALING_EFFICIENCY_CI95_HIGH: high,
            m.SCALING: "weak",
        }
    )


def test_an_efficiency_above_one_within_noise_is_tied_with_the_baseline():
    assert efficiency_text(row(1.10, 0.75, 1.57)) == "110 % (75 to 157) weak, tied with the baseline"
    assert efficiency_text(row(1.02, 1.0, 1.05)) == "102.0 % (100.0 to 105.0) weak, tied with the baseline"


def test_other_efficiencies_read_as_measured():
    assert efficiency_text(row(1.35, 1.2, 1.5)) == "135 % (120 to 150) weak"  # above 100 % beyond noise
    assert efficiency_text(row(0.873, 0.819, 0.912)) == "87.3 % (81.9 to 91.2) weak"
    assert efficiency_text(row(1.0)) == "100 % weak"  # the baseline itself: no CI
    assert efficiency_text(row(math.nan)) == ""
