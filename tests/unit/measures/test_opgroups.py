"""Op time by group on hand-made timelines: exact values."""

import pytest

from tfscale.measures.opgroups import OpEvent, breakdown, group_of


@pytest.mark.parametrize(
    ("op_type", "group"),
    [
        ("_MklNativeFusedMatMul", "matmul/conv"),
        ("Conv2DBackpropFilter", "matmul/conv"),
        ("BatchMatMulV2", "matmul/conv"),
        ("CollectiveReduceV2", "collectives"),
        ("NcclAllReduce", "collectives"),
        ("IteratorGetNext", "input"),
        ("MultiDeviceIteratorGetNextFromShard", "input"),
        ("_Send", "copies"),
        ("_HostRecv", "copies"),
        ("Identity", "copies"),
        ("ReluGrad", "elementwise"),
        ("AssignAddVariableOp", "elementwise"),
        ("SparseSoftmaxCrossEntropyWithLogits", "elementwise"),
        ("NoOp", "other"),
    ],
)
def test_group_of(op_type, group):
    assert group_of(op_type) == group


def test_overlapping_ops_share_the_window_and_idle_time_is_other():
    events = [
        OpEvent(0.0, 4.0, "a", "MatMul"),
        OpEvent(2.0, 6.0, "b", "Mul"),  # runs beside a for 2 s: each gets 1 s of that
        OpEvent(8.0, 10.0, "c", "Identity"),  # 6..8: nothing runs
        OpEvent(9.0, 9.0, "d", "NoOp"),  # takes no time
    ]
    result = breakdown(events)
    assert result.window_s == 10.0
    assert result.groups == {
        "matmul/conv": 3.0,
        "elementwise": 3.0,
        "collectives": 0.0,
        "input": 0.0,
        "copies": 2.0,
        "other": 2.0,
    }
    assert sum(result.groups.values()) == result.window_s
    assert result.top == [("MatMul", "a", 4.0), ("Mul", "b", 4.0), ("Identity", "c", 2.0)]
    per_step = result.per_step(2)
    assert (
        per_step.window_s == 5.0 and per_step.groups["matmul/conv"] == 1.5 and per_step.top[0] == ("MatMul", "a", 2.0)
    )


def test_self_time_adds_every_run_of_an_op_and_keeps_the_top():
    events = [OpEvent(float(i), i + 0.5, f"op{i % 3}", "Mul") for i in range(9)]
    result = breakdown(events, top=2)
    assert result.top == [("Mul", "op0", 1.5), ("Mul", "op1", 1.5)]
    assert result.groups["elementwise"] == 4.5 and result.groups["other"] == 4.0 and result.window_s == 8.5
    assert breakdown([]).window_s == 0.0
