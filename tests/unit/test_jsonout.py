"""tfscale.jsonout: what scripts read from --json, with exact values."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from tfscale.jsonout import dumps, plain, table


def test_missing_figures_are_null_never_nan_or_zero():
    assert plain([math.nan, math.inf, None, pd.NA, pd.NaT, 0.0]) == [None, None, None, None, None, 0.0]


def test_numpy_scalars_become_plain_numbers_and_other_things_text():
    assert plain({"a": np.int64(3), "b": np.float32(0.5), "c": np.bool_(True), 1: Path("x/y")}) == {
        "a": 3,
        "b": 0.5,
        "c": True,
        "1": "x/y",
    }
    assert type(plain(np.int64(3))) is int


def test_a_table_is_one_object_per_row_in_column_order():
    frame = pd.DataFrame({"config_id": ["a", "b"], "speedup": [1.5, math.nan], "samples": [3, 4]})
    rows = table(frame)
    assert rows == [{"config_id": "a", "speedup": 1.5, "samples": 3}, {"config_id": "b", "speedup": None, "samples": 4}]
    assert list(rows[0]) == ["config_id", "speedup", "samples"]


def test_dumps_reads_back_as_the_same_document():
    document = {"rows": table(pd.DataFrame({"x": [1.25, math.nan]})), "method": "m"}
    assert json.loads(dumps(document)) == {"rows": [{"x": 1.25}, {"x": None}], "method": "m"}
