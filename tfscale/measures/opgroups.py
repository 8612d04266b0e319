"""Where a profiled step goes, by op: the op events of a trace grouped (matrix products and convolutions,
elementwise, collectives, input, copies, other) and the top ops by self time. Pure: the worker reads the events out
of the trace (tfscale.worker.trace) and hands them here as (start, end, op name, op type).

Ops of one step run at once on several threads (TF's inter-op pool) and devices, so their times add up to more than
the step. Each instant of the traced window is therefore shared equally by the ops running then, and an instant
with none running (the host launching the step, syncing, Python) counts as "other": the groups add up to the
window, from the first op's start to the last op's end, exactly. Self time (the top-ops table) is each op's own
duration, overlaps included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tfscale import metrics as m

GROUP_MATMUL = "matmul/conv"
GROUP_ELEMENTWISE = "elementwise"
GROUP_COLLECTIVES = "collectives"
GROUP_INPUT = "input"
GROUP_COPIES = "copies"
GROUP_OTHER = "other"
GROUPS = (GROUP_MATMUL, GROUP_ELEMENTWISE, GROUP_COLLECTIVES, GROUP_INPUT, GROUP_COPIES, GROUP_OTHER)
GROUP_COLUMNS = {  # each group's record column: seconds per traced step
    GROUP_MATMUL: m.OP_TIME_MATMUL_S,
    GROUP_ELEMENTWISE: m.OP_TIME_ELEMENTWISE_S,
    GROUP_COLLECTIVES: m.OP_TIME_COLLECTIVES_S,
    GROUP_INPUT: m.OP_TIME_INPUT_S,
    GROUP_COPIES: m.OP_TIME_COPIES_S,
    GROUP_OTHER: m.OP_TIME_OTHER_S,
}
# First match wins: a fused matmul with a Relu is a matmul; an all-reduce of a Sum is a collective.
_RULES = (
    (GROUP_COLLECTIVES, re.compile(r"Collective|AllReduce|AllGather|ReduceScatter|Nccl", re.I)),
    (GROUP_MATMUL, re.compile(r"MatMul|Conv|Einsum|Gemm|Dot", re.I)),
    (GROUP_INPUT, re.compile(r"Iterator|Prefetch|GetNext|Dataset|Shard", re.I)),
    (GROUP_COPIES, re.compile(r"^_?(Host)?(Send|Recv)|Memcpy|Copy|^Identity", re.I)),
    (
        GROUP_ELEMENTWISE,
        re.compile(
            r"Add|Sub|Mul|Div|Relu|Gelu|Elu|Sigmoid|Tanh|Exp|Log|Sqrt|Square|Softmax|Cast|Bias|Maximum|Minimum|Neg|"
            r"Assign|Apply|Select|Erf|Pow|Sum|Mean|Max|Min|Norm|Tile|Reshape|Transpose|Concat|Slice|Pack|Fill|"
            r"Gather|Scatter|Pad|Pool|Reciprocal|Abs|Sign|Floor|Round|Equal|Less|Greater|Logical|Where|Range",
            re.I,
        ),
    ),
)
TOP_OPS = 10  # rows of a config's top-ops list


def group_of(op_type: str) -> str:
    """The group of an op type ("_MklNativeFusedMatMul" -> matmul/conv, "ReluGrad" -> elementwise)."""
    for group, pattern in _RULES:
        if pattern.search(op_type):
            return group
    return GROUP_OTHER


@dataclass(frozen=True)
class OpEvent:
    start: float  # s, on the trace's clock
    end: float
    name: str  # the op's name in the graph
    op_type: str


@dataclass(frozen=True)
class OpBreakdown:
    """A traced window's time by op group (s; they add up to window_s) and its top ops by self time (s)."""

    window_s: float
    groups: dict[str, float]
    top: list[tuple[str, str, float]]  # (op type, op name, self time s), longest first

    def per_step(self, steps: int) -> OpBreakdown:
        return OpBreakdown(
            self.window_s / steps,
            {group: seconds / steps for group, seconds in self.groups.items()},
            [(op_type, name, seconds / steps) for op_type, name, seconds in self.top],
        )


def breakdown(events: list[OpEvent], top: int = TOP_OPS) -> OpBreakdown:
    """Share every instant of the window among the ops running then (idle instants: other)."""
    groups = dict.fromkeys(GROUPS, 0.0)
    events = [e for e in events if e.end > e.start]  # an instant op takes no share of the window
    if not events:
        return OpBreakdown(0.0, groups, [])
    # Sweep the sorted boundaries: +1 op at a start, -1 at an end; each gap goes to the ops open across it.
    boundaries = sorted({e.start for e in events} | {e.end for e in events})
    opening: dict[float, list[OpEvent]] = {}
    for event in events:
        opening.setdefault(event.start, []).append(event)
    running: list[OpEvent] = []
    for left, right in zip(boundaries, boundaries[1:], strict=False):
        running = [e for e in running if e.end > left] + opening.get(left, [])
        length = right - left
        if not running:
            groups[GROUP_OTHER] += length
            continue
        for event in running:
            groups[group_of(event.op_type)] += length / len(running)
    own: dict[tuple[str, str], float] = {}
    for event in events:
        key = (event.op_type, event.name)
        own[key] = own.get(key, 0.0) + (event.end - event.start)
    ranked = sorted(own.items(), key=lambda item: (-item[1], item[0]))[:top]
    return OpBreakdown(boundaries[-1] - boundaries[0], groups, [(t, n, s) for (t, n), s in ranked])
