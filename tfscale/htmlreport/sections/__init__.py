"""The report's sections in reading order: one module each (ID, TITLE, body(context) -> HTML or Omitted). Adding a
section is one module and one name in SECTIONS. A section with nothing to show is left out; the contents say which
and why (`Omitted`)."""

from __future__ import annotations

from tfscale.htmlreport.sections import (
    communication,
    configs,
    energy,
    environment,
    goodput,
    input_pipelines,
    layouts,
    loss,
    method,
    modes,
    network,
    ops,
    plots,
    precision,
    prediction,
    telemetry,
    warnings,
)
from tfscale.htmlreport.sections.base import Context, Omitted, Section

SECTIONS = (
    precision,
    warnings,
    method,
    plots,
    layouts,
    communication,
    modes,
    network,
    loss,
    input_pipelines,
    goodput,
    ops,
    energy,
    prediction,
    telemetry,
    configs,
    environment,
)

__all__ = ["SECTIONS", "Context", "Omitted", "Section", "build"]


def build(context: Context) -> list[Section]:
    """Every section of the report, in order, for one context."""
    return [Section(part.ID, part.TITLE, part.body(context)) for part in SECTIONS]
