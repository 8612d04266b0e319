"""How sure the figures are: configs within their CI target, and which variance the CIs cover. Pure pandas, no
TensorFlow."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from tfscale import labels
from tfscale import metrics as m
from tfscale.analysis.keys import _missing
from tfscale.stats.repeats import drift_of, process_medians, spread_of

PRECISION_NOTE = (
    "Step times of one config differ more between fresh processes than within one (process medians 4-16 % sd "
    "apart on a shared 2-core machine, against +-2 % within one process). Where configs of a run ran in two or "
    "more processes (repeats), the spread of their process medians beyond each process's own noise is pooled over "
    "the run (process_spread_sd_rel, with process_spread_df degrees of freedom) and every CI of the run covers it: "
    "a one-process CI widened on each side by Student's t times that spread, several processes' CI and every "
    "speedup, efficiency and gap CI by a bootstrap of each process's windows times a drawn process offset. Without "
    "such configs a CI covers the windows of its process only, and reruns land outside it most of the time (a "
    "one-process CI contained the other runs' median 34 % of the time here): set repeats: 2 on a few configs. Runs "
    "at other times can differ by more than processes of one run (tests/benchmarks/bench_coverage.py measures how "
    "often a stated CI contains the median of other runs). The target (+-2 %) is what each process measures to; "
    "the stated CI is wider. An efficiency whose CI contains 1.0 at one device is consistent with its baseline; a "
    "communication time whose CI reaches 0 is within noise."
)


@dataclass(frozen=True)
class Missed:
    """An ok config whose median's CI is wider than its target."""

    label: str
    half_width: float
    samples: int
    stop: str


@dataclass(frozen=True)
class PrecisionSummary:
    measured: int  # ok configs with precision columns
    met: int
    targets: str  # e.g. "+-2 %"
    missed: list[Missed]
    covers: dict[str, int] = field(default_factory=dict)  # ci_covers -> how many configs' CIs cover that spread

    def covers_text(self) -> str:
        """'What the step-time CIs cover: 12 config(s): within one process (...); 5 config(s): between 3 ...'."""
        parts = [f"{count} config(s): {what}" for what, count in sorted(self.covers.items(), key=lambda x: -x[1])]
        return f"What the step-time CIs cover: {'; '.join(parts)}." if parts else ""


def _why_wide(row: pd.Series) -> str:
    """Why a config's CI is what it is: how its timing stopped, or the spread of its processes' medians."""
    medians = process_medians(row)
    spread, drift = spread_of(row), drift_of(row)
    between = "" if spread is None else f"; the run's spread between processes, sd {spread.sd_log:.1%}"
    between += "" if drift is None else f"; the drift between runs on this machine, sd {drift.sd_log:.1%}"
    if medians:
        return f"{len(medians)} processes, medians " + ", ".join(f"{t * 1e3:.3g}" for t in medians) + f" ms{between}"
    return f"{row[m.MEASURE_STOP]}{between}"


def precision_summary(frame: pd.DataFrame) -> PrecisionSummary:
    """How many ok configs met their CI target, and which did not (the widest first)."""
    ok = frame[frame[m.STATUS] == m.STATUS_OK]
    if m.CI_MET not in ok:
        return PrecisionSummary(0, 0, "", [])
    ok = ok[ok[m.CI_TARGET].notna()]
    met = ok[m.CI_MET].astype(bool)
    targets = ", ".join(
        f"+-{t:.0%}" if t * 100 == round(t * 100) else f"+-{t:.1%}" for t in sorted(set(ok[m.CI_TARGET]))
    )
    missed = [
        Missed(
            f"{labels.model_label(r[m.MODEL], r.get(m.MODEL_SIZE))} {labels.record_mode(r)} x{r[m.DEVICES]} "
            f"({r[m.CONFIG_ID]})",
            float(r[m.CI_HALF_WIDTH_REL]) if not _missing(r[m.CI_HALF_WIDTH_REL]) else math.inf,
            int(r[m.SAMPLES]),
            _why_wide(r),
        )
        for _, r in ok[~met].iterrows()
    ]
    missed.sort(key=lambda x: -x.half_width)
    covers = ok[m.CI_COVERS].dropna().value_counts().to_dict() if m.CI_COVERS in ok else {}
    return PrecisionSummary(len(ok), int(met.sum()), targets, missed, {str(k): int(v) for k, v in covers.items()})
