"""The report's section "Every config": every record, sortable."""

from __future__ import annotations

from tfscale.htmlreport.parts import records_table
from tfscale.htmlreport.sections.base import Context

ID = "configs"
TITLE = "Every config"

INTRO = "<p>Click a column header to sort. Failed and timed-out configs are shaded and carry their reason.</p>"


def body(context: Context) -> str:
    return f'{INTRO}<div class="tablewrap">{records_table(context.frame)}</div>'
