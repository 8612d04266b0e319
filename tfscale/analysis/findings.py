"""The answer a reader wants first: per workload, the best layout at each device count, how efficient it is and
where the rest went, and which configs failed. Pure (pandas); `frame` has gone through analysis.add_scaling.

Best = the ok config with the highest median throughput at that workload and device count, but the workload's
baseline where its throughput CI overlaps that one's (ranking noise would put another layout first at an efficiency
above 100 %). Where the runner-up's throughput CI overlaps the best one's, the two are tied within noise and the row
says so. The loss at the largest device count is 1 - the best config's scaling efficiency there, and its largest
cause the largest term of that config's loss breakdown (analysis.loss_breakdown: exposed communication, straggler
wait, input wait, compute growth, the rest).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from tfscale import formatting as fmt
from tfscale import labels
from tfscale import metrics as m
from tfscale.analysis import (
    MEASUREMENT_KEY,
    by_measurement,
    layout_label,
    loss_breakdown,
    measurement_key,
    throughput_interval,
    workload_key,
)

METHOD = __doc__.split("\n\n", 1)[1].replace("\n", " ").strip()

# Names of the loss-breakdown terms, as the findings say them.
CAUSES = {
    m.COMM_EXPOSED_S: "exposed communication",
    m.STRAGGLER_WAIT_S: "straggler wait",
    m.INPUT_WAIT_S: "input wait",
    m.COMPUTE_GROWTH_S: "compute growth (the compute-only step beyond the ideal: e.g. replicas sharing cores)",
    m.REST_S: "the rest (not communication, stragglers, input or measured compute growth)",
}
# The rest where the exposed communication was not measured: it may be most of it.
REST_WITH_COMMUNICATION = "the rest (overheads, and the communication, which was not measured here)"


def workload_label(row: pd.Series) -> str:
    """'mlp/small, batch 32 weak' (+ precision other than float32, + jit, + the run where several are shown)."""
    text = f"{labels.model_label(row[m.MODEL], row[m.MODEL_SIZE])}, batch {row[m.BATCH_SIZE]} {row[m.BATCH_POLICY]}"
    if row.get(m.PRECISION) not in (None, "float32"):
        text += f", {row[m.PRECISION]}"
    if row.get(m.JIT) is True:
        text += ", jit"
    return ", ".join([text, *labels.input_tags(row)])


def mode_and_layout(row: pd.Series) -> str:
    """'mirrored, 1 node × 4': how the devices were used and spread."""
    return f"{labels.record_mode(row)}, {layout_label(row)}"


def _tied(one: pd.Series, other: pd.Series) -> bool:
    """The two throughputs' 95 % CIs overlap: which is faster is noise."""
    (low, high), (other_low, other_high) = throughput_interval(one), throughput_interval(other)
    if None in (low, high, other_low, other_high):
        return False
    return low <= other_high and other_low <= high


def baseline_first_when_tied(ranked: pd.DataFrame) -> pd.DataFrame:
    """The rows ranked by throughput, but the workload's baseline first where it ties the fastest within noise:
    ranking noise made another 1-device layout 'best' at an efficiency of 102-111 %."""
    top = ranked.iloc[0]
    base = top.get(m.BASELINE_CONFIG_ID)
    matches = ranked.index[(ranked[m.CONFIG_ID] == base) & (ranked.index != ranked.index[0])]
    if len(matches) and _tied(top, ranked.loc[matches[0]]):
        return pd.concat([ranked.loc[matches[:1]], ranked.drop(index=matches[:1])])
    return ranked


def best_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per workload and device count: the best config and its runner-up (if any) with the verdict."""
    ok = frame[frame[m.STATUS] == m.STATUS_OK]
    rows = []
    for _, group in ok.groupby(ok.apply(workload_key, axis=1), sort=False):
        for devices, at in group.groupby(m.DEVICES):
            ranked = baseline_first_when_tied(at.sort_values(m.THROUGHPUT_EXAMPLES_PER_S, ascending=False))
            best = ranked.iloc[0]
            low, high = throughput_interval(best)
            runner_up = ""
            if len(ranked) > 1:
                second = ranked.iloc[1]
                ahead = best[m.THROUGHPUT_EXAMPLES_PER_S] / second[m.THROUGHPUT_EXAMPLES_PER_S] - 1
                runner_up = f"{mode_and_layout(second)}: " + (
                    "tied within noise" if _tied(best, second) else f"{fmt.change(-ahead / (1 + ahead))} throughput"
                )
            rows.append(
                {
                    "workload": workload_label(best),
                    m.DEVICES: int(devices),
                    "best": mode_and_layout(best),
                    **dict(zip(MEASUREMENT_KEY, measurement_key(best), strict=True)),
                    m.THROUGHPUT_EXAMPLES_PER_S: best[m.THROUGHPUT_EXAMPLES_PER_S],
                    "throughput_ci95_low": low,
                    "throughput_ci95_high": high,
                    m.SPEEDUP: best.get(m.SPEEDUP),
                    m.SPEEDUP_CI95_LOW: best.get(m.SPEEDUP_CI95_LOW),
                    m.SPEEDUP_CI95_HIGH: best.get(m.SPEEDUP_CI95_HIGH),
                    m.SCALING_EFFICIENCY: best.get(m.SCALING_EFFICIENCY),
                    m.SCALING_EFFICIENCY_CI95_LOW: best.get(m.SCALING_EFFICIENCY_CI95_LOW),
                    m.SCALING_EFFICIENCY_CI95_HIGH: best.get(m.SCALING_EFFICIENCY_CI95_HIGH),
                    "layouts_run": len(ranked),
                    "runner_up": runner_up,
                }
            )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Loss:
    """At a workload's largest device count: what its best config lost, and the largest cause."""

    workload: str
    devices: int
    best: str
    efficiency: float
    gap_s: float  # measured step - ideal step, s
    cause: str  # CAUSES value
    cause_s: float  # its share of the gap, s

    def sentence(self) -> str:
        lost = fmt.percent(1 - self.efficiency)
        return (
            f"{self.workload}: at {self.devices} devices the best ({self.best}) keeps {fmt.percent(self.efficiency)} "
            f"of linear scaling; of the {fmt.ms(self.gap_s)} it loses per step ({lost}), the largest part is "
            f"{self.cause}: {fmt.ms(self.cause_s)}."
        )


def losses(frame: pd.DataFrame, best: pd.DataFrame) -> list[Loss]:
    """Per workload with more than one device count, the loss of its best config at the largest count."""
    breakdown = loss_breakdown(frame)
    if best.empty or breakdown.empty:
        return []
    terms = by_measurement(breakdown)
    found = []
    for workload, rows in best.groupby("workload", sort=False):
        top = rows.sort_values(m.DEVICES).iloc[-1]
        term = terms.get(measurement_key(top))
        if top[m.DEVICES] < 2 or term is None or not fmt.given(top[m.SCALING_EFFICIENCY]):
            continue
        cause = max((name for name in CAUSES if fmt.given(term[name])), key=lambda name: float(term[name]))
        said = REST_WITH_COMMUNICATION if cause == m.REST_S and not fmt.given(term[m.COMM_EXPOSED_S]) else CAUSES[cause]
        found.append(
            Loss(
                str(workload),
                int(top[m.DEVICES]),
                str(top["best"]),
                float(top[m.SCALING_EFFICIENCY]),
                float(term[m.GAP_S]),
                said,
                float(term[cause]),
            )
        )
    return found


def failed_lines(frame: pd.DataFrame) -> list[str]:
    """'<config_id> <model> <mode>, <layout>: <status>: <reason>' for every config not ok."""
    bad = frame[frame[m.STATUS] != m.STATUS_OK]
    return [
        f"{r[m.CONFIG_ID]} {labels.model_label(r[m.MODEL], r[m.MODEL_SIZE])} {mode_and_layout(r)}: {r[m.STATUS]}"
        + (f": {r[m.REASON]}" if isinstance(r.get(m.REASON), str) else "")
        for _, r in bad.iterrows()
    ]


def findings_table(best: pd.DataFrame) -> list[dict[str, str]]:
    """The best rows as text, with units and CIs (tfscale.formatting), for the terminal and the report."""
    return [
        {
            "workload": r["workload"],
            "devices": str(r[m.DEVICES]),
            "best layout": r["best"],
            "examples/s": fmt.rate(r[m.THROUGHPUT_EXAMPLES_PER_S]),
            "speedup": fmt.figure(r[m.SPEEDUP], r[m.SPEEDUP_CI95_LOW], r[m.SPEEDUP_CI95_HIGH], unit="x"),
            "efficiency": fmt.percent(
                r[m.SCALING_EFFICIENCY], r[m.SCALING_EFFICIENCY_CI95_LOW], r[m.SCALING_EFFICIENCY_CI95_HIGH]
            ),
            "runner-up": r["runner_up"],
        }
        for _, r in best.iterrows()
    ]
