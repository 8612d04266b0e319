"""What a JSON object must hold to be a tfscale record readers can compute with (record_problem): the store checks
every line it reads, `tfscale collect` every part it merges. What each column holds comes from the column registry
(tfscale.metrics.COLUMNS); an axis or setting holds its axis's type and choices (tfscale.axes). Pure, no pandas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tfscale import metrics as m
from tfscale.axes import AUTO, AXES, SETTINGS

_NUMBER = (int, float)
# A column outside the registry (a newer tfscale's, read by this one) named for a unit holds a number.
_NUMBER_SUFFIXES = ("_s", "_bytes", "_per_s", "_w", "_pct", "_rel", "_fraction", "_ci95_low", "_ci95_high")
_STATUSES = (m.STATUS_OK, m.STATUS_FAILED, m.STATUS_TIMEOUT, m.STATUS_SKIPPED)
_OK_FIGURES = (m.STEP_TIME_MEDIAN_S, m.THROUGHPUT_EXAMPLES_PER_S)  # what readers compute with: positive when ok


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool)


# Per column kind: the test a present value must pass, and what the message says it must be.
KIND_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    m.TEXT: (lambda v: isinstance(v, str), "text"),
    m.NUMBER: (_is_number, "a number"),
    m.COUNT: (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0, "a count"),
    m.FLAG: (lambda v: isinstance(v, bool), "true or false"),
    m.NUMBERS: (lambda v: isinstance(v, list) and all(_is_number(x) for x in v), "a list of numbers"),
    m.TEXTS: (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of texts"),
    m.OBJECT: (lambda v: isinstance(v, dict | list), "a JSON object or list"),
}


def _axis_problem(name: str, value: Any) -> str | None:
    axis = {**AXES, **SETTINGS}[name]
    if axis.auto and value == AUTO:
        return None
    kinds = _NUMBER if axis.kind is float else (axis.kind,)
    if not isinstance(value, kinds) or (axis.kind is not bool and isinstance(value, bool)):
        return f"{name} must be {axis.kind.__name__}"
    if axis.choices is not None and value not in axis.choices:  # readers look its facts up by it
        return f"{name} must be one of {', '.join(map(str, axis.choices))}"
    return None


def column_problem(name: str, value: Any) -> str | None:
    """Why a present value cannot be column `name`'s (its kind in the registry), or None."""
    if name in AXES or name in SETTINGS:
        return _axis_problem(name, value)
    column = m.COLUMNS.get(name)
    if column is None:
        return f"{name} must be a number" if name.endswith(_NUMBER_SUFFIXES) and not _is_number(value) else None
    check, must = KIND_CHECKS.get(column.kind, (lambda v: True, ""))
    return None if check(value) else f"{name} must be {must}"


def record_problem(record: dict[str, Any]) -> str | None:
    """Why a JSON object cannot be a tfscale record readers can compute with (the first wrong field), or None: a
    text config_id, a known status, every field present of its column's kind (axes and settings of their own type
    and choices), an ok record's figures positive numbers."""
    if not isinstance(record.get(m.CONFIG_ID), str):
        return f"{m.CONFIG_ID} must be text"
    status = record.get(m.STATUS)
    if status is not None and status not in _STATUSES:
        return f"{m.STATUS} must be one of {', '.join(_STATUSES)}"
    for name in (*AXES, *SETTINGS):  # the config's axes first: a wrong one names what the config is
        value = record.get(name)
        if value is not None and (problem := _axis_problem(name, value)):
            return problem
    for name, value in record.items():
        if value is not None and name not in AXES and name not in SETTINGS and (problem := column_problem(name, value)):
            return problem
    if status == m.STATUS_OK:  # its figures, numbers by now, must be positive
        for name in _OK_FIGURES:
            if record.get(name) is not None and not record[name] > 0:
                return f"{name} must be a positive number"
    return None
