"""A bounded profiler trace of a few extra steps (never timed steps), the collective time read from it, and where
the steps' time goes by op (tfscale.measures.opgroups).

The trace is the `.xplane.pb` that `tf.profiler.experimental` writes; `tensorflow.tsl.profiler.protobuf.xplane_pb2`
reads it without TensorBoard. Collective ops run on their own lines (on CPU `collective_ops/...`: the op events
`...CollectiveReduceV2...` and the ring's own `Loop` events); every event on those lines, and any event named like a
collective elsewhere (GPU), counts. The union of their intervals, divided by the profiled steps, is
`comm_time_trace_s`. It includes time spent waiting for peers inside the collective.

Op events: on a host plane, TF's executor records each op as an event named "op_name:OpType" on its thread's line
(the Python thread's own events are the eager call, not ops); on a GPU plane, each kernel carries the op it belongs
to in its "tf_op" stat (assumed from the XPlane schema; not checked here: no GPU). An op that ran kernels counts by
its kernels only, not also by its host event (the launch).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import tensorflow as tf

from tfscale.measures.comm import union_length
from tfscale.measures.opgroups import OpEvent, breakdown

OP_EVENT = re.compile(r"^([\w/.\-]+):([A-Za-z_]\w*)$")  # "dense/MatMul:MatMul", as TF's executor names op events
PYTHON_LINE = "python"  # lines named after the Python thread hold the eager calls around the ops

COLLECTIVE = re.compile(r"Collective(Reduce|Gather|Bcast)|AllReduce|NcclAll|AllGather|ReduceScatter")


def read_space(xplane: Path):
    """One .xplane.pb file, parsed (read once for both the collective time and the op events)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(xplane.read_bytes())
    return space


def _events(space) -> Iterator[tuple[Any, Any, Any, float, float]]:
    """(plane, line, event, start_s, end_s) of every event, on the trace's one clock."""
    for plane in space.planes:
        for line in plane.lines:
            for event in line.events:
                start_ps = line.timestamp_ns * 1000 + event.offset_ps
                yield plane, line, event, start_ps * 1e-12, (start_ps + event.duration_ps) * 1e-12


def collective_intervals(space) -> list[tuple[float, float]]:
    """(start_s, end_s) of every collective op event of a parsed trace."""
    return [
        (start, end)
        for plane, line, event, start, end in _events(space)
        # every event on a collective line is collective work; elsewhere (GPU) the op's name says so
        if line.name.startswith("collective") or COLLECTIVE.search(plane.event_metadata[event.metadata_id].name)
    ]


def op_events(space) -> list[OpEvent]:
    """The op events of a parsed trace (not the Python thread's eager calls around them)."""
    tf_op = {
        plane.name: next((k for k, v in plane.stat_metadata.items() if v.name == "tf_op"), None)
        for plane in space.planes
    }
    host, device = [], []
    for plane, line, event, start, end in _events(space):
        if line.name.startswith(PYTHON_LINE):
            continue
        name = plane.event_metadata[event.metadata_id].name
        stat = tf_op[plane.name]
        on_device = plane.name.startswith("/device:")
        if on_device and stat is not None:  # a kernel: the op it runs for is in its stats
            name = next((s.str_value for s in event.stats if s.metadata_id == stat), "") or name
        match = OP_EVENT.match(name)
        if match is not None:
            (device if on_device else host).append(OpEvent(start, end, match.group(1), match.group(2)))
    # An op with kernels on a device also has a host event: its launch, which is not its work. Counting both put
    # a GPU op's time in the breakdown twice; its host event counts only for ops no device ran (input, CPU ops).
    ran_on_device = {event.name for event in device}
    return device + [event for event in host if event.name not in ran_on_device]


def op_columns(spaces: list, steps: int, traced_step_s: float) -> dict:
    """Per step: the time of each op group, the traced window and the wall time of the traced steps (s), and the
    top ops by self time as text."""
    from tfscale import metrics as m
    from tfscale.measures.opgroups import GROUP_COLUMNS

    result = breakdown([e for space in spaces for e in op_events(space)]).per_step(steps)
    columns = {column: result.groups[group] for group, column in GROUP_COLUMNS.items()}
    columns[m.TOP_OPS] = [f"{op_type} {name}: {seconds * 1e3:.3f} ms" for op_type, name, seconds in result.top]
    columns[m.OP_WINDOW_S] = result.window_s
    columns[m.TRACED_STEP_S] = traced_step_s
    return columns


def profile_steps(
    step: Callable[[], object], sync: Callable[[object], object], steps: int, logdir: Path, collectives: bool = True
) -> dict:
    """Run `steps` extra steps under the profiler into `logdir`; return trace columns (never raises). Without
    `collectives` (the mode's steps run none) the trace is kept and comm_time_trace_s stays empty."""
    from tfscale import metrics as m

    try:
        logdir.mkdir(parents=True, exist_ok=True)
        tf.profiler.experimental.start(str(logdir))
        try:
            start = time.perf_counter()
            for _ in range(steps):
                sync(step())
            traced_step_s = (time.perf_counter() - start) / steps
        finally:
            tf.profiler.experimental.stop()
        files = sorted(logdir.rglob("*.xplane.pb"))
        if not files:
            return {m.TRACE_ERROR: f"the profiler wrote no .xplane.pb under {logdir}"}
        spaces = [read_space(f) for f in files]
        columns = {m.TRACE_PATH: str(logdir), m.TRACE_STEPS: steps} | op_columns(spaces, steps, traced_step_s)
        if collectives:
            intervals = [i for space in spaces for i in collective_intervals(space)]
            columns[m.COMM_TIME_TRACE_S] = union_length(intervals) / steps
        return columns
    except Exception as error:  # a trace must never fail the config
        return {m.TRACE_ERROR: f"{type(error).__name__}: {error}"}
