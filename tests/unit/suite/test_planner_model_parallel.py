"""Planning model-parallel configs: defaults, what does not apply, and the support matrix's refusals."""

import pytest

from tfscale.axes import PARALLELISMS
from tfscale.errors import SuiteError
from tfscale.suite.planner import expand
from tfscale.suite.planview import plan_rows
from tfscale.suite.suitefile import parse_suite


def specs(text: str):
    return expand(parse_suite("name: p\n" + text, "p.yaml")).specs


def test_modes_fill_their_own_axes_and_drop_the_strategy():
    got = specs(
        "defaults: {strategy: mirrored, devices_per_node: 4, model_size: medium}\n"
        "matrix: {parallelism: [data, pipeline, tensor, hybrid]}\n"
    )
    assert [
        (s.parallelism, s.strategy, s.stages, s.micro_batches, s.tensor_parallel, s.replicas, s.cluster) for s in got
    ] == [
        ("data", "mirrored", None, None, None, 4, False),
        ("pipeline", None, 4, 4, None, 1, False),
        ("tensor", None, None, None, 4, 1, False),
        ("hybrid", None, None, None, 2, 2, False),
    ]
    assert [
        r["strategy"]
        for r in plan_rows(
            expand(
                parse_suite(
                    "name: p\ndefaults: {strategy: mirrored, devices_per_node: 4, model_size: medium}\n"
                    "matrix: {parallelism: [pipeline, hybrid]}\n",
                    "p.yaml",
                )
            )
        )
    ] == ["pipeline 4 stages x 4 micro-batches", "hybrid 2 data x 2 tensor"]
    # the data config keeps the id it had before model parallelism existed
    assert (
        got[0].config_id
        == specs("defaults: {strategy: mirrored, devices_per_node: 4, model_size: medium}\nmatrix: {model: [mlp]}\n")[
            0
        ].config_id
    )


def test_support_matrix_is_declared_once():
    assert PARALLELISMS["pipeline"].models == ("mlp", "transformer")
    assert PARALLELISMS["data"].models is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "matrix: {model: [cnn], parallelism: [tensor], devices_per_node: [2]}",
            "p.yaml: matrix: cnn/tensor: parallelism=tensor supports the zoo models mlp, transformer only",
        ),
        (
            "matrix: {parallelism: [pipeline], devices_per_node: [4]}",
            "p.yaml: matrix: mlp/pipeline: stages=4 but mlp/small has only 3 layers to cut between",
        ),
        (
            "matrix: {parallelism: [pipeline], devices_per_node: [2], stages: [3]}",
            "p.yaml: matrix: mlp/pipeline: stages=3 needs as many devices; devices_per_node=2",
        ),
        (
            "defaults: {batch_size: 30}\nmatrix: {parallelism: [pipeline], devices_per_node: [2]}",
            "p.yaml: matrix: mlp/pipeline: global batch 30 does not divide into micro_batches=4",
        ),
        (
            "matrix: {parallelism: [tensor], devices_per_node: [4], tensor_parallel: [2]}",
            "p.yaml: matrix: mlp/tensor: tensor_parallel=2 must equal devices_per_node=4",
        ),
        (
            "matrix: {model: [transformer], model_size: [tiny], parallelism: [tensor], devices_per_node: [4]}",
            "p.yaml: matrix: transformer/tensor: cannot shard transformer/tiny over tensor_parallel=4: heads=2 and "
            "feed-forward width 128 must both be divisible by 4",
        ),
        (
            "matrix: {parallelism: [hybrid], devices_per_node: [4], optimizer: [adam]}",
            "p.yaml: matrix: mlp/hybrid: tensor and hybrid parallelism update DTensor weights with tfscale's own SGD",
        ),
        (
            "matrix: {parallelism: [tensor], devices_per_node: [2], precision: [mixed_bfloat16]}",
            "p.yaml: matrix: mlp/tensor: model-parallel modes run in float32 without jit",
        ),
        (
            "matrix: {parallelism: [tensor], nodes: [2]}",
            "p.yaml: matrix: mlp/tensor with nodes=2: model-parallel modes run in one process on one node",
        ),
    ],
)
def test_unsupported_combinations_are_refused_in_one_line(text, message):
    with pytest.raises(SuiteError) as error:
        specs(text + "\n")
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)
