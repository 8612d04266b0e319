"""Floating-point operations of a training step, from the shapes of its graph's ops; and the zoo models' analytic
counts to check them against. Pure (no TensorFlow): the worker walks the traced graph (tfscale.worker.flops) and
hands each op's type, attributes and static shapes to `op_flops`.

What is counted: the matrix products and convolutions of the per-replica gradient computation, forward and
backward as the gradient graph has them (not a x3 rule: the first layer's input gradient is not computed, and is
not counted), 2 FLOPs per multiply-add. Elementwise ops, reductions and the optimizer update are not counted: the
model-FLOPs convention of MFU (PaLM, appendix B), where they are a few per cent of the total.

Why not tf.profiler's float_operation: it counts no Einsum (Keras' attention projections) and gives
BatchMatMulV2 five times its product on the zoo transformer (seen with TF 2.21).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from tfscale.suite.zoo import CLASSES, MLP_SIZES, TRANSFORMER_SIZES

FLOPS_METHOD = (
    "graph count: 2 x multiply-adds of every matrix product and convolution (MatMul, BatchMatMul, Einsum, Conv2D "
    "and its two gradients, depthwise) in the traced per-replica gradient step, forward and backward, from static "
    "shapes; elementwise ops and the optimizer update not counted; x replicas for the global step"
)
MATMUL_OPS = ("MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
CONV_OPS = ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")
DEPTHWISE_OPS = (
    "DepthwiseConv2dNative",
    "DepthwiseConv2dNativeBackpropInput",
    "DepthwiseConv2dNativeBackpropFilter",
)
COUNTED_OPS = (*MATMUL_OPS, "Einsum", *CONV_OPS, *DEPTHWISE_OPS)

Shape = Sequence[int | None] | None


def _known(shape: Shape) -> bool:
    return shape is not None and all(d is not None for d in shape)


def matmul_flops(op_type: str, a: Shape, output: Shape, transpose_a: bool = False) -> int | None:
    """2 m n k (times the batch for BatchMatMul): the output's elements x the contracted size x 2."""
    if not (_known(a) and _known(output)) or len(a) < 2:
        return None
    k = a[-2] if transpose_a else a[-1]
    return 2 * math.prod(output) * k


_EINSUM_TERM = re.compile(r"^[A-Za-z]*$")


def einsum_flops(equation: str, inputs: Sequence[Shape]) -> int | None:
    """2 x the product of the sizes of every index of a two-operand einsum ('abc,cd->abd': 2 a b c d); None for
    ellipses, one operand, or unknown sizes."""
    left, _, _ = equation.replace(" ", "").partition("->")
    terms = left.split(",")
    if len(terms) != 2 or len(inputs) != 2 or not all(_EINSUM_TERM.match(t) for t in terms):
        return None
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, inputs, strict=True):
        if not _known(shape) or len(shape) != len(term):
            return None
        for letter, size in zip(term, shape, strict=True):
            sizes[letter] = max(size, sizes.get(letter, 1))  # broadcast dims of 1
    return 2 * math.prod(sizes.values())


def _filter_and_forward_output(op_type: str, inputs: Sequence[Shape], output: Shape) -> tuple[Shape, Shape]:
    """A convolution's filter shape and its forward output's shape, from the forward op (input, filter) -> output,
    the input gradient (input_sizes, filter, out_backprop) or the filter gradient (input, filter_sizes,
    out_backprop) -> filter grad."""
    if op_type.endswith("BackpropInput"):
        return inputs[1], inputs[2]
    if op_type.endswith("BackpropFilter"):
        return output, inputs[2]
    return inputs[1], output


def conv_flops(op_type: str, inputs: Sequence[Shape], output: Shape) -> int | None:
    """Conv2D and its gradients (NHWC): 2 x (elements of the forward output) x kh kw c_in; each gradient costs what
    the forward convolution costs. Depthwise convolutions: 2 x (elements of the forward output) x kh kw."""
    filter_shape, forward_out = _filter_and_forward_output(op_type, inputs, output)
    if not (_known(filter_shape) and _known(forward_out)) or len(filter_shape) != 4:
        return None
    kh, kw, c_in, _ = filter_shape
    per_output = kh * kw if op_type.startswith("Depthwise") else kh * kw * c_in
    return 2 * math.prod(forward_out) * per_output


def op_flops(op_type: str, inputs: Sequence[Shape], outputs: Sequence[Shape], attrs: dict | None = None) -> int | None:
    """FLOPs of one op (0 for an op not counted; None when a counted op's shapes are not static)."""
    attrs = attrs or {}
    output = outputs[0] if outputs else None
    if op_type in MATMUL_OPS:
        transpose = bool(attrs.get("transpose_a") or attrs.get("adj_x"))
        return matmul_flops(op_type, inputs[0] if inputs else None, output, transpose)
    if op_type == "Einsum":
        return einsum_flops(attrs.get("equation", ""), inputs)
    if op_type in CONV_OPS or op_type in DEPTHWISE_OPS:
        return conv_flops(op_type, inputs, output)
    return 0


def dense_chain_flops(widths: Sequence[int], batch: int) -> int:
    """A chain of dense layers trained on `batch` examples: 2 b in out forward, as much for the weight gradient,
    and as much again for the input gradient of every layer but the first (its input is data)."""
    pairs = list(zip(widths, widths[1:], strict=False))
    return sum(2 * batch * a * b * (2 if i == 0 else 3) for i, (a, b) in enumerate(pairs))


def transformer_flops(length: int, vocab: int, width: int, blocks: int, ff: int, batch: int) -> int:
    """PaLM (appendix B): 6 N + 12 L T d training FLOPs per token, N the parameters in matrix products (per block
    4 d^2 attention projections and 2 d ff feed-forward; the d V output layer; embeddings are lookups)."""
    params = blocks * (4 * width * width + 2 * width * ff) + width * vocab
    return batch * length * (6 * params + 12 * blocks * length * width)


def analytic_flops(model: str, size: str, batch: int) -> int | None:
    """The zoo mlp's and transformer's training FLOPs for one step of `batch` examples (None for other models)."""
    if model == "mlp" and size in MLP_SIZES:
        features, hidden = MLP_SIZES[size]
        return dense_chain_flops([features, *hidden, CLASSES], batch)
    if model == "transformer" and size in TRANSFORMER_SIZES:
        length, vocab, width, _, blocks, ff = TRANSFORMER_SIZES[size]
        return transformer_flops(length, vocab, width, blocks, ff, batch)
    return None
