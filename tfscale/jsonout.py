"""JSON for scripts (`--json` of plan, compare, predict, env): one document alone on standard output. Pure.

A figure that does not apply is null, never NaN (which JSON cannot hold) and never 0; numpy and pandas scalars become
plain numbers, so `json.loads` of the output gives what the table showed.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is only needed when a table is given
    import pandas as pd


def plain(value: Any) -> Any:
    """`value` as JSON holds it: NaN/NA/NaT -> None, numpy scalars -> int/float/bool, lists and dicts item by item,
    anything else JSON has no type for (a timestamp, a path) -> its text."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, str):  # numpy scalar or array
        return plain(value.tolist())
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    return str(value)


def table(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One JSON object per row of `frame`, its columns in order."""
    return [plain(row) for row in frame.to_dict(orient="records")]


def dumps(document: Any) -> str:
    """The document as indented JSON text; a NaN left in it is an error, not invalid JSON."""
    return json.dumps(plain(document), indent=1, allow_nan=False)
