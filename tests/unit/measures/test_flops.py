"""The FLOPs rules on hand-sized shapes (exact values), and the zoo's analytic counts."""

import pytest

from tfscale.measures.flops import analytic_flops, dense_chain_flops, einsum_flops, op_flops, transformer_flops


@pytest.mark.parametrize(
    ("op_type", "inputs", "outputs", "attrs", "flops"),
    [
        ("MatMul", [[4, 3], [3, 5]], [[4, 5]], {}, 2 * 4 * 5 * 3),
        ("MatMul", [[3, 4], [3, 5]], [[4, 5]], {"transpose_a": True}, 2 * 4 * 5 * 3),  # k is a's first dim
        ("BatchMatMulV2", [[2, 6, 4, 3], [2, 6, 3, 5]], [[2, 6, 4, 5]], {}, 2 * 2 * 6 * 4 * 5 * 3),
        ("BatchMatMulV2", [[2, 3, 4], [2, 3, 5]], [[2, 4, 5]], {"adj_x": True}, 2 * 2 * 4 * 5 * 3),
        ("Einsum", [[8, 16, 4], [4, 2, 3]], [[8, 16, 2, 3]], {"equation": "abc,cde->abde"}, 2 * 8 * 16 * 4 * 2 * 3),
        ("Einsum", [[8, 4], [4, 3]], [[8, 3]], {"equation": "...c,cd->...d"}, None),  # ellipsis: not counted
        # Conv2D NHWC: 2 x output elements x kh kw c_in; each gradient costs the same
        ("Conv2D", [[2, 8, 8, 3], [3, 3, 3, 16]], [[2, 8, 8, 16]], {}, 2 * (2 * 8 * 8 * 16) * 3 * 3 * 3),
        ("Conv2DBackpropInput", [[4], [3, 3, 3, 16], [2, 8, 8, 16]], [[2, 8, 8, 3]], {}, 2 * 2048 * 27),
        ("Conv2DBackpropFilter", [[2, 8, 8, 3], [4], [2, 8, 8, 16]], [[3, 3, 3, 16]], {}, 2 * 2048 * 27),
        ("DepthwiseConv2dNative", [[1, 4, 4, 8], [3, 3, 8, 1]], [[1, 4, 4, 8]], {}, 2 * 128 * 9),
        ("MatMul", [[None, 3], [3, 5]], [[None, 5]], {}, None),  # unknown batch: not counted, said so
        ("Relu", [[4, 5]], [[4, 5]], {}, 0),  # elementwise: not counted
    ],
)
def test_op_flops_exactly(op_type, inputs, outputs, attrs, flops):
    assert op_flops(op_type, inputs, outputs, attrs) == flops


def test_einsum_broadcast_and_one_operand():
    assert einsum_flops("ab,ab->a", [[1, 5], [7, 5]]) == 2 * 7 * 5  # a broadcast 1 takes the other side's size
    assert einsum_flops("ab->a", [[7, 5]]) is None


def test_dense_chain_counts_no_input_gradient_for_the_first_layer():
    # 4 -> 3 -> 2 on 5 examples: first layer forward + weight gradient, second also its input gradient
    assert dense_chain_flops([4, 3, 2], 5) == 2 * 5 * 4 * 3 * 2 + 2 * 5 * 3 * 2 * 3 == 420


def test_transformer_is_palm_6n_plus_12ltd_per_token():
    # T 4, V 10, d 2, 1 block, ff 3: N = 4 d^2 + 2 d ff + d V = 16 + 12 + 20 = 48; per token 6 N + 12 T d = 384
    assert transformer_flops(4, 10, 2, 1, 3, batch=2) == 2 * 4 * 384
    assert analytic_flops("transformer", "tiny", 1) == 32 * (
        6 * (4 * 64 * 64 + 2 * 64 * 128 + 64 * 1000) + 12 * 32 * 64
    )
    assert analytic_flops("mlp", "tiny", 1) == 2 * (256 * 256 * 2 + 256 * 256 * 3 + 256 * 10 * 3)
    assert analytic_flops("cnn", "tiny", 1) is None and analytic_flops("mine", "tiny", 1) is None
