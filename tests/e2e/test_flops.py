"""FLOPs counted from the traced gradient graph of the zoo models against their analytic counts."""

import pytest

from tfscale.measures.flops import analytic_flops
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

pytestmark = [pytest.mark.e2e, pytest.mark.tf]


def spec_of(model: str, size: str, **axes):
    extra = "".join(f", {k}: {v}" for k, v in axes.items())
    text = (
        f"name: f\ndefaults: {{repeats: 1, model: {model}, model_size: {size}{extra}}}\nmatrix: {{batch_size: [8]}}\n"
    )
    return expand(parse_suite(text, "f.yaml")).specs[0]


@pytest.mark.parametrize(("model", "size"), [("mlp", "tiny"), ("mlp", "small"), ("transformer", "tiny")])
def test_zoo_graph_counts_are_the_analytic_counts(model, size):
    from tfscale.worker.flops import per_replica_flops

    counted = per_replica_flops(spec_of(model, size), 8)
    analytic = analytic_flops(model, size, 8)
    assert counted.unknown == set()
    assert abs(counted.total / analytic - 1) < 0.02  # the bar; in fact equal, to the FLOP:
    assert counted.total == analytic


def test_cnn_counts_its_convolutions_forward_and_backward_but_not_the_stem_input_gradient():
    from tfscale.worker.flops import per_replica_flops

    def conv(size, c_out, k, c_in):  # forward FLOPs of a k x k convolution per example
        return 2 * size * size * c_out * k * k * c_in

    stem = conv(32, 8, 3, 3)
    rest = (
        2 * conv(32, 8, 3, 8)  # stage 0: two 3x3 convolutions
        + conv(16, 16, 1, 8) + conv(16, 16, 3, 8) + conv(16, 16, 3, 16)  # stage 1: 1x1 shortcut, two 3x3
        + conv(8, 32, 1, 16) + conv(8, 32, 3, 16) + conv(8, 32, 3, 32)  # stage 2
        + 2 * 32 * 10  # the classifier
    )  # fmt: skip
    # the stem's input is data: forward + filter gradient; every other layer also its input gradient
    assert per_replica_flops(spec_of("cnn", "tiny"), 8).total == 8 * (2 * stem + 3 * rest) == 151_796_736


def test_global_flops_are_the_replicas_shares():
    from tfscale.worker.flops import flops_columns

    columns = flops_columns(spec_of("mlp", "tiny", strategy="mirrored", devices_per_node=2), replicas=2)
    assert columns["flops_per_replica_step"] == analytic_flops("mlp", "tiny", 8)  # weak: 8 per replica
    assert columns["flops_per_step"] == 2 * columns["flops_per_replica_step"]
    assert columns["flops_method"].startswith("graph count: 2 x multiply-adds")
