"""Gradient communication: every estimate side by side, where they disagree, and configs on simulated hosts against
their link. Pure pandas, no TensorFlow."""

from __future__ import annotations

import math

import pandas as pd

from tfscale import formatting as fmt
from tfscale import metrics as m
from tfscale.analysis.keys import MEASUREMENT_KEY, _missing, _number, measurement_key, workload_key
from tfscale.measures.comm import exposed_not_measured

COMM_ESTIMATES = (
    ("exposed", m.COMM_TIME_EXPOSED_S),
    ("split", m.COMM_TIME_SPLIT_S),
    ("isolated", m.COMM_TIME_ISOLATED_S),
    ("trace", m.COMM_TIME_TRACE_S),
    ("model", m.COMM_TIME_MODEL_S),
)

DISAGREEMENT = 1.25  # two estimates whose ratio exceeds this are named in the cross-check


def disagreements(estimates: dict[str, float | None], limit: float = DISAGREEMENT) -> list[str]:
    """'a vs b: r.rrx' for each pair of available estimates whose larger/smaller ratio exceeds `limit`."""
    present = [(name, v) for name, v in estimates.items() if v is not None and v > 0]
    found = []
    for i, (a, va) in enumerate(present):
        for b, vb in present[i + 1 :]:
            ratio = max(va, vb) / min(va, vb)
            if ratio > limit:
                found.append(f"{a} vs {b}: {ratio:.2f}x")
    return found


def comm_not_measured(row: pd.Series) -> str:
    """Why a config has no communication figures."""
    if row[m.STATUS] != m.STATUS_OK:
        return f"config {row[m.STATUS]}"
    if row[m.STRATEGY] == "parameter_server":
        pulled = not _missing(row.get(m.COMM_TIME_PULL_S))
        return "parameter_server: no all-reduce (variables live on the servers)" + (
            "; pull and push timed instead" if pulled else ""
        )
    if int(row[m.REPLICAS]) < 2:
        return "one replica: no gradient communication"
    method = row.get(m.COMM_METHOD)
    return method if isinstance(method, str) and method.startswith("not measured") else "not measured"


def exposed_comm(row: pd.Series) -> tuple[float, str | None]:
    """The exposed communication a breakdown can draw (s), and why it is 0 or empty (NaN) when it is: a figure
    whose 95 % CI reaches 0 is within noise (0); one not measured, or whose CI lies wholly below 0 (the method does
    not apply: a communication time cannot be negative), is empty with the reason, never 0."""
    inapplicable = exposed_not_measured(str(row.get(m.STRATEGY)))  # records from before 0.4 still hold a figure
    exposed = None if inapplicable else _number(row.get(m.COMM_TIME_EXPOSED_S))
    if exposed is None:
        why = inapplicable or comm_not_measured(row)
        return math.nan, why if why.startswith("not measured") else f"not measured: {why}"
    low, high = _number(row.get(m.COMM_TIME_EXPOSED_CI95_LOW_S)), _number(row.get(m.COMM_TIME_EXPOSED_CI95_HIGH_S))
    if low is None:  # no CI (fewer than two samples): only a negative value is dropped
        return (exposed, None) if exposed >= 0 else (math.nan, f"not measurable ({exposed * 1e3:.3f} ms, no CI)")
    interval = fmt.interval(f"{low * 1e3:.3f}", f"{high * 1e3:.3f} ms", "95 % CI ")
    if high is not None and high < 0:  # not noise: the compute-only step is slower than the fused one
        return math.nan, f"not measurable: the compute-only step ran slower than the full step {interval}"
    if low <= 0:
        return 0.0, f"within noise {interval}"
    return exposed, None


def comm_crosscheck(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per config: the communication estimates side by side, the exposed fraction of the step, and
    the pairs of estimates that disagree by more than 25 % (or why there are none)."""
    rows = []
    for _, r in frame.iterrows():
        estimates = {name: _number(r.get(column)) for name, column in COMM_ESTIMATES}
        if exposed_not_measured(str(r.get(m.STRATEGY))):
            estimates["exposed"] = None
        measured = estimates["split"] is not None
        shown, note = exposed_comm(r) if measured else (None, None)
        step = _number(r.get(m.STEP_TIME_MEDIAN_S))
        rows.append(
            {
                **dict(zip(MEASUREMENT_KEY, measurement_key(r), strict=True)),
                m.MODEL: r[m.MODEL],
                m.STRATEGY: r[m.STRATEGY],
                m.DEVICES: r[m.DEVICES],
                m.STEP_TIME_MEDIAN_S: step,
                m.COMPUTE_TIME_S: _number(r.get(m.COMPUTE_TIME_S)),
                **{column: estimates[name] for name, column in COMM_ESTIMATES},
                m.COMM_TIME_EXPOSED_CI95_LOW_S: _number(r.get(m.COMM_TIME_EXPOSED_CI95_LOW_S)),
                m.COMM_TIME_EXPOSED_CI95_HIGH_S: _number(r.get(m.COMM_TIME_EXPOSED_CI95_HIGH_S)),
                m.COMM_EXPOSED_S: shown,
                m.COMM_EXPOSED_NOTE: note,
                m.COMM_FRACTION: shown / step if measured and step else None,
                m.OVERLAP_FRACTION: _number(r.get(m.OVERLAP_FRACTION)),
                m.COMM_TIME_PULL_S: _number(r.get(m.COMM_TIME_PULL_S)),
                m.COMM_TIME_PUSH_S: _number(r.get(m.COMM_TIME_PUSH_S)),
                m.TRACE_PATH: None if _missing(r.get(m.TRACE_PATH)) else r.get(m.TRACE_PATH),
                "notes": "; ".join(disagreements(estimates)) if measured else comm_not_measured(r),
            }
        )
    return pd.DataFrame(rows)


NETWORK_METHOD = (
    "Each simulated node is a Linux network namespace joined to the others by a bridge; its veth link is shaped "
    "with tc tbf to link_bytes_per_s in each direction. link_measured_bytes_per_s: TCP goodput of a plain "
    "transfer node 0 -> node 1 just before the config (at most about 0.96 of the link: TCP/IP headers). "
    "busbw / link: the isolated all-reduce's bus bandwidth over the link rate; 1.0 is the link's limit. "
    "comm vs loopback: isolated all-reduce time over that of the same workload and layout on unshaped loopback."
)


def network_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Ok configs on simulated hosts with busbw / link and their all-reduce time against loopback; `frame` has
    gone through add_scaling."""
    ok = frame[(frame[m.STATUS] == m.STATUS_OK) & frame[m.NETWORK_LINK].notna()].copy()
    if ok.empty:
        return ok.assign(**{m.BUSBW_LINK_FRACTION: [], m.CHECK_LINK_FRACTION: [], m.COMM_VS_LOOPBACK: []})
    link = pd.to_numeric(ok[m.LINK_BYTES_PER_S], errors="coerce")
    ok[m.BUSBW_LINK_FRACTION] = pd.to_numeric(ok[m.BUSBW_BYTES_PER_S], errors="coerce") / link
    ok[m.CHECK_LINK_FRACTION] = pd.to_numeric(ok[m.LINK_MEASURED_BYTES_PER_S], errors="coerce") / link
    loopback = {}
    plain = frame[(frame[m.STATUS] == m.STATUS_OK) & frame[m.NETWORK_LINK].isna()]
    for _, row in plain.iterrows():
        where = (*workload_key(row), row[m.STRATEGY], row[m.NODES], row[m.DEVICES_PER_NODE])
        loopback[where] = row[m.COMM_TIME_ISOLATED_S]
    ratios = []
    for _, row in ok.iterrows():
        base = _number(loopback.get((*workload_key(row), row[m.STRATEGY], row[m.NODES], row[m.DEVICES_PER_NODE])))
        shaped = _number(row[m.COMM_TIME_ISOLATED_S])
        ratios.append(shaped / base if shaped is not None and base else math.nan)
    ok[m.COMM_VS_LOOPBACK] = ratios
    return ok.sort_values([m.MODEL, m.NODES, m.LINK_BYTES_PER_S])
