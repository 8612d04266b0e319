"""The report's section "Warnings": what a reader must see before trusting a figure."""

from __future__ import annotations

import html
from collections import Counter

from tfscale.analysis import warnings_for
from tfscale.htmlreport.sections.base import Context

ID = "warnings"
TITLE = "Warnings"

MAX_WARNINGS = 50


def warnings_html(notes: list[str]) -> str:
    """The warnings as a list: a warning repeated by several runs once with its count, at most MAX_WARNINGS."""
    if not notes:
        return "<p>None.</p>"
    counts = Counter(notes)
    notes = [n + (f" (in {counts[n]} records)" if counts[n] > 1 else "") for n in dict.fromkeys(notes)]
    items = "".join(
        f'<li class="{"prominent" if i == 0 and "Logical CPU" in n else ""}">{html.escape(n)}</li>'
        for i, n in enumerate(notes[:MAX_WARNINGS])
    )
    more = f"<li>... and {len(notes) - MAX_WARNINGS} more (see the table)</li>" if len(notes) > MAX_WARNINGS else ""
    return f"<ul>{items}{more}</ul>"


def body(context: Context) -> str:
    return f'<div class="warnings">{warnings_html(warnings_for(context.frame))}</div>'
