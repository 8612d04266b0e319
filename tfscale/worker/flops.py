"""FLOPs of a config's training step, counted from its own graph (tfscale.measures.flops has the rules and the why).

The per-replica gradient computation is traced, never run, on a fresh copy of the workload built on the CPU, after
the timed windows and the memory peaks have been read: the copy costs neither device memory nor measured time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tfscale import metrics as m
from tfscale.measures.flops import COUNTED_OPS, FLOPS_METHOD, op_flops
from tfscale.suite.spec import RunSpec

CALL_OPS = ("PartitionedCall", "StatefulPartitionedCall")


@dataclass
class GraphFlops:
    """FLOPs of a traced graph: the total over the ops counted, and the counted op types whose shapes were not
    static (their FLOPs are missing from the total)."""

    total: int = 0
    unknown: set[str] = field(default_factory=set)


def _shape(tensor) -> list[int | None] | None:
    shape = tensor.shape
    return None if shape.rank is None else list(shape.as_list())


def _attrs(op) -> dict[str, Any]:
    found = {}
    for name in ("transpose_a", "adj_x", "equation"):
        try:
            value = op.get_attr(name)
        except ValueError:
            continue
        found[name] = value.decode() if isinstance(value, bytes) else value
    return found


def live_ops(graph) -> list:
    """The ops the graph's outputs depend on, in graph order. The trace also holds gradients nobody uses (a
    convolution's input gradient where its input is data: TF's Conv2D gradient builds it anyway), which Grappler
    prunes before anything runs: they are not counted."""
    stack = [t.op for t in graph.outputs] + list(getattr(graph, "control_outputs", []))
    seen = set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return [op for op in graph.get_operations() if op in seen]


def graph_flops(graph, counted: GraphFlops | None = None) -> GraphFlops:
    """Walk a FuncGraph's live ops (and the functions they call) and add up their FLOPs."""
    counted = counted or GraphFlops()
    for op in live_ops(graph):
        if op.type in CALL_OPS:
            inner = _called_graph(graph, op)
            if inner is None:
                counted.unknown.add(f"{op.type} (a nested function not found)")
            else:
                graph_flops(inner, counted)
            continue
        if op.type not in COUNTED_OPS:
            continue
        flops = op_flops(op.type, [_shape(t) for t in op.inputs], [_shape(t) for t in op.outputs], _attrs(op))
        if flops is None:
            counted.unknown.add(op.type)
        else:
            counted.total += flops
    return counted


def _called_graph(graph, op):
    """The graph of the function a call op runs, when the trace kept it (tf.function inside tf.function)."""
    name = op.get_attr("f").name
    for holder in (graph, getattr(graph, "outer_graph", None)):
        function = getattr(holder, "_functions", {}).get(name) if holder is not None else None
        if function is not None and getattr(function, "graph", None) is not None:
            return function.graph
    return None


def per_replica_flops(spec: RunSpec, batch: int) -> GraphFlops:
    """FLOPs of one replica's gradient computation on `batch` examples (forward and backward)."""
    import tensorflow as tf

    from tfscale.worker.loop import make_gradients
    from tfscale.worker.models import build_workload

    with tf.device("/CPU:0"):
        workload = build_workload(spec)
        if not workload.model.built:
            workload.model(tf.zeros((1, *workload.input_spec.shape), workload.input_spec.dtype))
    gradients = tf.function(make_gradients(workload, batch, jit=False))
    x = tf.TensorSpec((batch, *workload.input_spec.shape), workload.input_spec.dtype)
    y = tf.TensorSpec((batch, *workload.target_spec.shape), workload.target_spec.dtype)
    return graph_flops(gradients.get_concrete_function(x, y).graph)


def flops_columns(spec: RunSpec, replicas: int) -> dict[str, Any]:
    """flops_per_step (global: every replica's share of the global batch), flops_per_replica_step, flops_method;
    empty with the reason in flops_method when the graph cannot be counted."""
    per_replica_batch = spec.global_batch_size // replicas
    try:
        counted = per_replica_flops(spec, per_replica_batch)
    except Exception as error:  # a user model that cannot be traced at this batch: the figure is empty, not wrong
        return {m.FLOPS_METHOD: f"not counted: tracing the gradient step failed: {type(error).__name__}: {error}"}
    if counted.unknown:
        return {m.FLOPS_METHOD: f"not counted: shapes not static for {', '.join(sorted(counted.unknown))}"}
    return {
        m.FLOPS_PER_REPLICA_STEP: counted.total,
        m.FLOPS_PER_STEP: counted.total * replicas,
        m.FLOPS_METHOD: FLOPS_METHOD,
    }
