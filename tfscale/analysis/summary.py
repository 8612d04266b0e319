"""The summary table `tfscale run` and `tfscale report` print. Pure pandas, no TensorFlow."""

from __future__ import annotations

import pandas as pd

from tfscale import formatting as fmt
from tfscale import labels
from tfscale import metrics as m
from tfscale.analysis.keys import _missing
from tfscale.analysis.layouts import layout_label
from tfscale.axes import DATA_FILES, DATA_SYNTHETIC


def efficiency_text(row: pd.Series) -> str:
    """'80.3 % (78.1 to 82.9) weak': the efficiency, its 95 % CI where there is one (digits as the CI supports), and
    which scaling; '' if none. Above 100 % with a CI that reaches 100 %, it says so ('110 % (75 to 157) weak, tied
    with the baseline'): a layout cannot beat its own one-device baseline per device, and this one did not beyond
    noise."""
    value = row[m.SCALING_EFFICIENCY]
    if _missing(value):
        return ""
    low, high = row.get(m.SCALING_EFFICIENCY_CI95_LOW), row.get(m.SCALING_EFFICIENCY_CI95_HIGH)
    tied = value > 1 and not _missing(low) and low <= 1
    return f"{fmt.percent(value, low, high)} {row[m.SCALING]}" + (f", {labels.TIED_WITH_BASELINE}" if tied else "")


def summary_rows(frame: pd.DataFrame) -> list[dict[str, str]]:
    """Short text rows for the terminal: one per config, figures formatted with their units."""
    rows = []
    files = m.DATA in frame.columns and bool((frame[m.DATA] == DATA_FILES).any())  # a data column only then
    for _, r in frame.iterrows():
        ok = r[m.STATUS] == m.STATUS_OK
        rows.append(
            {
                "config_id": r[m.CONFIG_ID],
                "model": labels.model_label(r[m.MODEL], r[m.MODEL_SIZE]),
                "strategy": labels.record_mode(r),
                "layout": layout_label(r),
                "global_batch": str(r[m.GLOBAL_BATCH_SIZE]),
                **({"data": labels.data_label(r) or DATA_SYNTHETIC} if files else {}),
                "status": r[m.STATUS],
                "step": fmt.ms(r[m.STEP_TIME_MEDIAN_S]) if ok else "",
                "examples/s": fmt.rate(r[m.THROUGHPUT_EXAMPLES_PER_S]) if ok else "",
                "efficiency": efficiency_text(r),
            }
        )
    return rows
