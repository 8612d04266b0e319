"""A bounded profiler trace of a few extra steps (never timed steps) and the collective time read from it.

The trace is the `.xplane.pb` that `tf.profiler.experimental` writes; `tensorflow.tsl.profiler.protobuf.xplane_pb2`
reads it without TensorBoard. Collective ops run on their own lines (on CPU `collective_ops/...`: the op events
`...CollectiveReduceV2...` and the ring's own `Loop` events); every event on those lines, and any event named like a
collective elsewhere (GPU), counts. The union of their intervals, divided by the profiled steps, is
`comm_time_trace_s`. It includes time spent waiting for peers inside the collective.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import tensorflow as tf

from tfscale.comm import union_length

COLLECTIVE = re.compile(r"Collective(Reduce|Gather|Bcast)|AllReduce|NcclAll|AllGather|ReduceScatter")


def collective_intervals(xplane: Path) -> list[tuple[float, float]]:
    """(start_s, end_s) of every collective op event in one .xplane.pb file."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(xplane.read_bytes())
    intervals = []
    for plane in space.planes:
        for line in plane.lines:
            on_collective_line = line.name.startswith("collective")  # every event there is collective work
            for event in line.events:
                if on_collective_line or COLLECTIVE.search(plane.event_metadata[event.metadata_id].name):
                    start_ps = line.timestamp_ns * 1000 + event.offset_ps
                    intervals.append((start_ps * 1e-12, (start_ps + event.duration_ps) * 1e-12))
    return intervals


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
            for _ in range(steps):
                sync(step())
        finally:
            tf.profiler.experimental.stop()
        files = sorted(logdir.rglob("*.xplane.pb"))
        if not files:
            return {m.TRACE_ERROR: f"the profiler wrote no .xplane.pb under {logdir}"}
        columns = {m.TRACE_PATH: str(logdir), m.TRACE_STEPS: steps}
        if collectives:
            intervals = [i for f in files for i in collective_intervals(f)]
            columns[m.COMM_TIME_TRACE_S] = union_length(intervals) / steps
        return columns
    except Exception as error:  # a trace must never fail the config
        return {m.TRACE_ERROR: f"{type(error).__name__}: {error}"}
