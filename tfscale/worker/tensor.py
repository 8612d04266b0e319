"""Tensor and hybrid parallelism with DTensor: a mesh ("batch", "model") of data_parallel x tensor_parallel
devices; the zoo mlp's and transformer's weights as DVariables sharded Megatron-style (a column-parallel layer
then a row-parallel one, attention sharded by heads), initialised from the Keras model's own weights, so both
compute the same function; the batch sharded over "batch". The forward pass is written here in TF ops on DTensors
(Keras 3 layers do not take DVariables), and the update is tfscale's own SGD with momentum (Keras optimizers make
non-DTensor slots).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tensorflow as tf
from tensorflow.experimental import dtensor

from tfscale import metrics as m
from tfscale.suite.spec import RunSpec
from tfscale.suite.workload import Workload
from tfscale.worker.trainer import Trainer, model_parallel_start

UNSHARDED = dtensor.UNSHARDED
LEARNING_RATE, MOMENTUM = 0.01, 0.9  # the same SGD as the data-parallel configs' keras.optimizers.SGD
LN_EPSILON = 1e-3  # keras.layers.LayerNormalization's default
METHOD = (
    "tensor/hybrid: DTensor mesh batch x model; dense and attention kernels sharded Megatron-style "
    "(column-parallel, then row-parallel; attention by heads; embedding tables by width, the output layer by "
    "classes), the rest replicated; forward in TF ops on DTensors, SGD with momentum 0.9 on DVariables. "
    "param_bytes_per_device from the layouts. The activation collectives DTensor inserts run inside the "
    "step and are not timed apart"
)


def on_mesh(tensor, layout):
    """A host tensor as a DTensor of `layout`: copied to the mesh replicated, then resharded (DTensor will not
    create sharded tensors from host values or random ops directly)."""
    replicated = dtensor.Layout.replicated(layout.mesh, rank=layout.rank)
    return dtensor.relayout(dtensor.copy_to_mesh(tensor, replicated), layout)


@dataclass
class Param:
    name: str
    variable: Any  # dtensor.DVariable
    layout: Any


class Sharded:
    """The model's weights on the mesh, and its forward pass."""

    def __init__(self, mesh, kind: str, shapes: dict):
        self.mesh, self.kind, self.shapes = mesh, kind, shapes
        self.params: dict[str, Param] = {}

    def add(self, name: str, value, spec: list) -> None:
        layout = dtensor.Layout(spec, self.mesh)
        self.params[name] = Param(name, dtensor.DVariable(on_mesh(tf.constant(value, tf.float32), layout)), layout)

    def __getitem__(self, name: str):
        return self.params[name].variable

    @property
    def variables(self) -> list:
        return [p.variable for p in self.params.values()]

    def bytes_per_device(self) -> int:
        """Bytes of parameters one device holds: each variable's size over the mesh dims that shard it."""
        total = 0
        for p in self.params.values():
            parts = math.prod(self.mesh.dim_size(d) for d in p.layout.sharding_specs if d != UNSHARDED)
            total += math.prod(p.variable.shape) * 4 // parts
        return total


def _mlp(model, mesh) -> Sharded:
    sharded = Sharded(mesh, "mlp", {})
    dense = model.layers
    column = True  # the first hidden layer splits its outputs; the next one its inputs; and so on
    for i, layer in enumerate(dense):
        kernel, bias = layer.get_weights()
        last = i == len(dense) - 1
        if last and column:  # after a row-parallel layer the activations are whole: the classifier is replicated
            sharded.add(f"k{i}", kernel, [UNSHARDED, UNSHARDED])
            sharded.add(f"b{i}", bias, [UNSHARDED])
        elif column:
            sharded.add(f"k{i}", kernel, [UNSHARDED, "model"])
            sharded.add(f"b{i}", bias, ["model"])
        else:
            sharded.add(f"k{i}", kernel, ["model", UNSHARDED])
            sharded.add(f"b{i}", bias, [UNSHARDED])
        column = not column
    sharded.shapes["layers"] = len(dense)
    return sharded


def _mlp_forward(s: Sharded, x):
    for i in range(s.shapes["layers"]):
        x = tf.matmul(x, s[f"k{i}"]) + s[f"b{i}"]
        if i < s.shapes["layers"] - 1:
            x = tf.nn.relu(x)
    return x


def _transformer(model, mesh) -> Sharded:
    sharded = Sharded(mesh, "transformer", {})
    embedding, *blocks, head = model.layers
    tokens, positions = embedding.get_weights()
    sharded.add("tokens", tokens, [UNSHARDED, "model"])
    sharded.add("positions", positions, [UNSHARDED, "model"])
    for i, block in enumerate(blocks):
        a = block.attention
        names = ("q_k", "q_b", "k_k", "k_b", "v_k", "v_b", "o_k", "o_b")
        weights = dict(zip(names, a.get_weights(), strict=True))
        for part in ("q", "k", "v"):  # kernels (width, heads, head_dim): split by heads
            sharded.add(f"{i}.{part}_k", weights[f"{part}_k"], [UNSHARDED, "model", UNSHARDED])
            sharded.add(f"{i}.{part}_b", weights[f"{part}_b"], ["model", UNSHARDED])
        sharded.add(f"{i}.o_k", weights["o_k"], ["model", UNSHARDED, UNSHARDED])  # (heads, head_dim, width)
        sharded.add(f"{i}.o_b", weights["o_b"], [UNSHARDED])
        for norm in ("norm1", "norm2"):
            gamma, beta = getattr(block, norm).get_weights()
            sharded.add(f"{i}.{norm}.g", gamma, [UNSHARDED])
            sharded.add(f"{i}.{norm}.b", beta, [UNSHARDED])
        k1, b1 = block.ff1.get_weights()
        k2, b2 = block.ff2.get_weights()
        sharded.add(f"{i}.ff1_k", k1, [UNSHARDED, "model"])
        sharded.add(f"{i}.ff1_b", b1, ["model"])
        sharded.add(f"{i}.ff2_k", k2, ["model", UNSHARDED])
        sharded.add(f"{i}.ff2_b", b2, [UNSHARDED])
        sharded.shapes["head_dim"] = weights["q_k"].shape[-1]
    kernel, bias = head.get_weights()
    sharded.add("head_k", kernel, [UNSHARDED, "model"])
    sharded.add("head_b", bias, ["model"])
    sharded.shapes["blocks"] = len(blocks)
    return sharded


def _layer_norm(x, gamma, beta):
    mean, variance = tf.nn.moments(x, axes=[-1], keepdims=True)
    return (x - mean) * tf.math.rsqrt(variance + LN_EPSILON) * gamma + beta


def _transformer_forward(s: Sharded, ids, whole):
    """`whole(t)`: t relaid out so its last axis is not sharded (the batch axis keeps its sharding)."""
    length = ids.shape[-1]
    x = whole(tf.gather(s["tokens"], ids) + s["positions"][:length])
    scale = 1.0 / math.sqrt(float(s.shapes["head_dim"]))
    for i in range(s.shapes["blocks"]):
        q = (tf.einsum("bsw,whd->bshd", x, s[f"{i}.q_k"]) + s[f"{i}.q_b"]) * scale
        k = tf.einsum("bsw,whd->bshd", x, s[f"{i}.k_k"]) + s[f"{i}.k_b"]
        v = tf.einsum("bsw,whd->bshd", x, s[f"{i}.v_k"]) + s[f"{i}.v_b"]
        scores = tf.nn.softmax(tf.einsum("bthd,bshd->bhst", k, q), axis=-1)
        attended = tf.einsum("bhst,bthd->bshd", scores, v)
        out = tf.einsum("bshd,hdw->bsw", attended, s[f"{i}.o_k"]) + s[f"{i}.o_b"]
        x = _layer_norm(x + out, s[f"{i}.norm1.g"], s[f"{i}.norm1.b"])
        hidden = tf.nn.gelu(tf.matmul(x, s[f"{i}.ff1_k"]) + s[f"{i}.ff1_b"], approximate=False)
        x = _layer_norm(x + tf.matmul(hidden, s[f"{i}.ff2_k"]) + s[f"{i}.ff2_b"], s[f"{i}.norm2.g"], s[f"{i}.norm2.b"])
    return whole(tf.matmul(x, s["head_k"]) + s["head_b"])


def dtensor_start(device: str) -> Callable[[], None] | None:
    """What DTensor needs before TensorFlow's runtime starts: on GPUs, initialize_accelerator_system("GPU"), which
    in local mode sets the context's collective_use_nccl_communication from DTENSOR_GPU_USE_NCCL_COMMUNICATION
    (tensorflow/dtensor/python/accelerator_util.py: initialize_accelerator_system). Without it only reduce-scatter
    reads that variable (tensorflow/dtensor/mlir/collectives.cc): all-reduce and all-gather ran without NCCL.
    Nothing on CPUs (their logical devices are set by configure_devices)."""
    if device != "gpu":
        return None
    return lambda: dtensor.initialize_accelerator_system("GPU")


def build_sharded(spec: RunSpec, workload: Workload, devices: list[str]) -> tuple[Sharded, Any]:
    """The mesh over the first data_parallel x tensor_parallel devices and the model's weights on it."""
    tp = spec.tensor_parallel
    dp = spec.devices_per_node // tp
    mesh = dtensor.create_mesh([("batch", dp), ("model", tp)], devices=devices[: dp * tp])
    builder = _mlp if spec.model == "mlp" else _transformer
    return builder(workload.model, mesh), mesh


def batch_layout(mesh, rank: int):
    return dtensor.Layout(["batch"] + [UNSHARDED] * (rank - 1), mesh)


def to_mesh(value, mesh):
    tensor = tf.constant(value)
    return on_mesh(tensor, batch_layout(mesh, tensor.shape.rank))


def make_loss(sharded: Sharded, mesh):
    def whole(t):
        return dtensor.relayout(t, batch_layout(mesh, t.shape.rank))

    def loss(x, y):
        logits = _mlp_forward(sharded, x) if sharded.kind == "mlp" else _transformer_forward(sharded, x, whole)
        logits = whole(logits)
        per_token = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        per_example = per_token if per_token.shape.rank == 1 else tf.reduce_mean(per_token, axis=-1)
        return tf.reduce_mean(per_example)

    return loss


def make_step(sharded: Sharded, loss_fn):
    variables = sharded.variables
    velocities = [dtensor.DVariable(on_mesh(tf.zeros(p.variable.shape), p.layout)) for p in sharded.params.values()]

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(x, y)
        for variable, velocity, gradient in zip(variables, velocities, tape.gradient(loss, variables), strict=True):
            if isinstance(gradient, tf.IndexedSlices):  # embedding tables: dense, like Keras SGD's momentum update
                gradient = tf.convert_to_tensor(gradient)
            velocity.assign(MOMENTUM * velocity - LEARNING_RATE * gradient)
            variable.assign_add(velocity)
        return loss

    return step


def trainer(spec: RunSpec, task_name: str) -> Trainer:
    """The weights sharded on the mesh, the batch sharded over its "batch" axis, tfscale's SGD step."""
    from tfscale.worker.data import synthetic_batch
    from tfscale.worker.loop import host_sync

    devices, workload = model_parallel_start(spec, dtensor_start(spec.device))
    sharded, mesh = build_sharded(spec, workload, devices)
    step = make_step(sharded, make_loss(sharded, mesh))
    x, y = synthetic_batch(workload, spec.global_batch_size, spec.seed)
    x, y = to_mesh(x, mesh), to_mesh(y, mesh)
    sync, how = host_sync(spec.device)

    def fetch(loss) -> float:  # a DTensor loss is replicated: read one device's copy
        return sync(dtensor.unpack(loss)[0])

    figures = {m.PARAM_BYTES_PER_DEVICE: sharded.bytes_per_device(), m.MODEL_PARALLEL_METHOD: METHOD}
    return Trainer(lambda: step(x, y), fetch, how, workload, devices, spec.replicas, columns=lambda loop: figures)
