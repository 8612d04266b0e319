"""The plain-sentence warnings a reader must see before any figure. Pure pandas, no TensorFlow."""

from __future__ import annotations

import pandas as pd

from tfscale import formatting as fmt
from tfscale import metrics as m
from tfscale.stats.precision import DRIFT_FLAG, drift_beyond_noise

HIGH_CV = 0.10  # MAD / median above this is flagged as high step-time variation


def _what(row: pd.Series) -> str:
    return f"Config {row[m.CONFIG_ID]} ({row[m.MODEL]}, {row[m.STRATEGY]}, x{row[m.DEVICES]})"


LOGICAL_CAVEAT = (
    "Logical CPU devices share the same cores and thread pools: the scaling figures of cpu-logical configs test "
    "the harness, not the hardware. Do not read them as speedups."
)


def caveat(frame: pd.DataFrame) -> str | None:
    """The line a reader must see before any figure (the report under its title, the terminal under its summary):
    LOGICAL_CAVEAT where any config ran on logical CPU devices, else None."""
    kinds = frame[m.DEVICE_KIND] if m.DEVICE_KIND in frame else pd.Series(dtype=object)
    return LOGICAL_CAVEAT if (kinds == "cpu-logical").any() else None


def warnings_for(frame: pd.DataFrame) -> list[str]:
    """Plain-sentence warnings a reader of the report must see; `frame` has gone through add_scaling."""
    notes = []
    if caveat(frame):
        notes.append(caveat(frame))
    ok = frame[m.STATUS] == m.STATUS_OK
    for _, row in frame[~ok].iterrows():
        notes.append(f"{_what(row)} {row[m.STATUS]}: {row[m.REASON]}")
    for _, row in frame[ok & (frame[m.STEP_TIME_CV] > HIGH_CV)].iterrows():
        notes.append(
            f"{_what(row)}: high step-time variation, MAD/median = {row[m.STEP_TIME_CV]:.1%} "
            f"(> {HIGH_CV:.0%}); its figures are less certain"
        )
    for _, row in frame[ok & frame[m.SCALING_EFFICIENCY].isna()].iterrows():
        notes.append(f"{_what(row)}: {row[m.BASELINE_NOTE]}")
    if m.WINDOW_DRIFT_REL in frame:
        drifted = ok & (pd.to_numeric(frame[m.WINDOW_DRIFT_REL], errors="coerce").abs() > DRIFT_FLAG)
        for _, row in frame[drifted].iterrows():
            if drift_beyond_noise(list(row[m.STEP_TIMES_S])):
                notes.append(
                    f"{_what(row)}: its timed windows drifted {fmt.change(row[m.WINDOW_DRIFT_REL])} from the first "
                    "third to the last (their 95 % CIs apart): the median's CI does not cover a trend; rerun it, or "
                    "raise max_warmup_s if it was still warming up"
                )
    if m.SCALING_EFFICIENCY_CI95_LOW in frame:
        impossible = ok & (frame[m.DEVICES] == 1) & (frame[m.SCALING_EFFICIENCY_CI95_LOW] > 1.0)
        for _, row in frame[impossible].iterrows():
            low, high = row[m.SCALING_EFFICIENCY_CI95_LOW], row[m.SCALING_EFFICIENCY_CI95_HIGH]
            notes.append(
                f"{_what(row)}: 1-device efficiency {row[m.SCALING_EFFICIENCY]:.2f} "
                f"{fmt.interval(f'{low:.2f}', f'{high:.2f}', '95 % CI ')} is above 1, "
                "which one device cannot be: its process and its baseline's ran at different speeds, a spread the "
                "CI covers only where both ran in several processes (repeats: 2 or more)"
            )
    return notes
