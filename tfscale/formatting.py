"""How figures are written for people, defined once for the terminal and the HTML report. Pure.

Step times in ms, throughputs with thousands separators, memory in MiB/GiB, efficiencies and changes in %, and a
figure with a CI to as many digits as its CI supports (the CI's half-width to two significant digits). Missing
values (None, NaN) are written as "" (empty, never 0).
"""

from __future__ import annotations

import math
from typing import Any


def given(value: Any) -> bool:
    """A number that is there: not None, not NaN."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def decimals_for(half_width: float, digits: int = 2) -> int:
    """Decimals that show `half_width` (> 0) to `digits` significant digits: 0.041 -> 3, 1.7 -> 1, 230 -> 0."""
    if not half_width > 0 or math.isinf(half_width):
        return 0
    return max(0, digits - 1 - math.floor(math.log10(half_width)))


def significant(value: float, digits: int = 3) -> str:
    """`value` to `digits` significant digits in plain notation (never 1e+04): 2.615 -> '2.62', 1234.5 -> '1,234'
    (no digits are dropped before the point), 0.000123 -> '0.000123'."""
    if value == 0:
        return "0"
    return f"{value:,.{decimals_for(abs(value), digits)}f}"


def figure(value: Any, low: Any = None, high: Any = None, scale: float = 1.0, unit: str = "", plain=significant) -> str:
    """`value` x `scale` with its unit, and its CI where both ends are given (with_ci, to the CI's precision);
    without a CI written by `plain`; '' when missing."""
    if not given(value):
        return ""
    if given(low) and given(high):
        return with_ci(value * scale, low * scale, high * scale, unit)
    return f"{plain(value * scale)}{unit}"


def ms(seconds: Any, low: Any = None, high: Any = None) -> str:
    """A step time in ms: '2.62 ms'; with its CI '2.615 ms (2.574 to 2.657)', to the CI's precision."""
    return figure(seconds, low, high, 1e3, " ms")


def rate(value: Any) -> str:
    """A throughput (examples/s): thousands separators, no more digits than it has: 24470.3 -> '24,470',
    312.46 -> '312', 4.567 -> '4.57'."""
    if not given(value):
        return ""
    return f"{value:,.0f}" if abs(value) >= 100 else significant(value)


def size(num_bytes: Any) -> str:
    """Memory in binary units: '100 B', '512.0 KiB', '703.9 MiB', '1.25 GiB'."""
    if not given(num_bytes):
        return ""
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    value, unit = float(num_bytes), 0
    while abs(value) >= 1024 and unit < len(units) - 1:
        value, unit = value / 1024, unit + 1
    places = 0 if unit == 0 else 1 if unit < 3 else 2
    return f"{value:.{places}f} {units[unit]}"


def percent(fraction: Any, low: Any = None, high: Any = None) -> str:
    """A fraction as a percentage: 0.873 -> '87 %'; with its CI '87.3 % (81.9 to 91.2)', to the CI's precision."""
    return figure(fraction, low, high, 100, " %", plain="{:.0f}".format)


def change(fraction: Any) -> str:
    """A relative change: -0.167 -> '-16.7 %', 0.002 -> '+0.2 %'."""
    if not given(fraction):
        return ""
    return f"{fraction * 100:+.1f} %"


def interval(low: str, high: str, label: str = "") -> str:
    """The one notation of a CI in tfscale's text (terminal, report, compare, JUnit, Markdown): '(low to high)',
    with `label` before the ends ('(95 % CI -1.2 to -0.5)'). 'to', never a hyphen: '-0.185--0.037' misreads."""
    return f"({label}{low} to {high})"


def with_ci(value: float, low: float, high: float, unit: str = "") -> str:
    """'value unit (low to high)' with the decimals the CI supports: its half-width (the larger side) to two
    significant digits: 2.6153 (2.5741, 2.6571) -> '2.615 (2.574 to 2.657)'; 87.34 (81.9, 91.2) -> '87.3 (81.9 to
    91.2)'; 1234.5 (1100, 1400) -> '1,234 (1,100 to 1,400)'."""
    places = min(decimals_for(max(value - low, high - value)), 6)
    return f"{value:,.{places}f}{unit} {interval(f'{low:,.{places}f}', f'{high:,.{places}f}')}"


# Columns whose figures are rates of examples, fractions shown as %, or ratios shown as "1.45x" (by name; the
# units of the others follow from their suffix: _s seconds, _bytes, _bytes_per_s).
EXAMPLE_RATES = ("throughput", "examples_per_s")
PERCENTS = ("efficiency", "fraction", "error", "change", "_rel", "mfu")
RATIOS = ("speedup", "step_time_ratio", "comm_vs_loopback")


def cell(column: str, value: Any) -> str:
    """A table cell of `column` as a person reads it: '2.62 ms' for seconds, '671.4 MiB' for bytes, '24,470' for
    examples/s, '87 %' for efficiencies and fractions, '1.45x' for ratios; lists item by item; '' when missing."""
    if isinstance(value, list | tuple):
        return ", ".join(cell(column, v) for v in value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not given(value):
        return "" if not given(value) else str(value)
    if column.endswith("_bytes_per_s"):
        return size(value) + "/s"
    if column.endswith("_bytes"):
        return size(value)
    if column.endswith("_s") and not column.endswith("_per_s"):
        return ms(value)
    if any(part in column for part in EXAMPLE_RATES):
        return rate(value)
    if any(part in column for part in RATIOS):
        return f"{significant(value)}x"
    if any(part in column for part in PERCENTS):
        return f"{value * 100:.1f} %"
    return f"{value:,}" if isinstance(value, int) else significant(value, 4)
