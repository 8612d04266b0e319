"""The report's section "How sure are these numbers": how many configs met their CI target and what the CIs cover."""

from __future__ import annotations

import html

from tfscale.analysis import PRECISION_NOTE, precision_summary
from tfscale.htmlreport.sections.base import Context

ID = "precision"
TITLE = "How sure are these numbers"


def body(context: Context) -> str:
    """How sure the figures are: how many ok configs met their CI target, which did not and why, and what the CIs
    cover (tfscale.analysis.precision_summary)."""
    frame = context.frame
    summary = precision_summary(frame)
    if summary.measured == 0:
        return "<p>No ok config with a precision record (records from before tfscale 0.4 carry none).</p>"
    items = "".join(
        f"<li>{html.escape(r.label)}: 95 % CI of the median step &plusmn;{r.half_width * 100:.3g} % "
        f"({r.samples} windows; {html.escape(r.stop)})</li>"
        for r in summary.missed
    )
    missed = f"<p>Not within their target:</p><ul>{items}</ul>" if items else ""
    return (
        f"<p><b>{summary.met} of {summary.measured}</b> ok configs have the 95 % CI of their median step within "
        f"their target ({summary.targets}). {html.escape(summary.covers_text())} {html.escape(PRECISION_NOTE)}</p>"
        f"{missed}"
    )
