"""Built-in model zoo (mlp, cnn, transformer, each with a size knob) and user models given as "module:function".

Every builder is called inside the strategy scope and returns a `tfscale.Workload`.
"""

from __future__ import annotations

import importlib
import sys

import keras
import tensorflow as tf

from tfscale.suite.spec import RunSpec
from tfscale.suite.workload import Workload
from tfscale.suite.zoo import CLASSES, MLP_SIZES, TRANSFORMER_SIZES


def _classification_loss(y_true, y_pred):
    """Per-example sparse categorical cross-entropy on logits, averaged over any token axis."""
    loss = keras.losses.sparse_categorical_crossentropy(y_true, tf.cast(y_pred, tf.float32), from_logits=True)
    return tf.reduce_mean(loss, axis=list(range(1, loss.shape.rank))) if loss.shape.rank > 1 else loss


# --- mlp: dense layers on feature vectors ----------------------------------------------------------------------


def mlp(size: str) -> Workload:
    """A chain of dense layers (keras.Sequential: a pipeline cuts it between layers)."""
    features, widths = MLP_SIZES[size]
    layers = [keras.layers.Dense(width, activation="relu") for width in widths] + [keras.layers.Dense(CLASSES)]
    return Workload(
        keras.Sequential([keras.Input((features,)), *layers], name=f"mlp_{size}"),
        _classification_loss,
        tf.TensorSpec((features,), tf.float32),
        tf.TensorSpec((), tf.int32),
        target_max=CLASSES,
    )


# --- cnn: a small residual CNN on 32x32x3; "large" is ResNet-50 on 224x224x3 (for GPUs) -------------------------
CNN_SIZES = {"tiny": (8, 1), "small": (16, 1), "medium": (32, 2)}  # (stem width, residual blocks per stage)


def _residual_block(x, width: int, stride: int):
    shortcut = x
    if stride != 1 or x.shape[-1] != width:
        shortcut = keras.layers.Conv2D(width, 1, strides=stride, use_bias=False)(x)
    y = keras.layers.Conv2D(width, 3, strides=stride, padding="same", use_bias=False)(x)
    y = keras.layers.BatchNormalization()(y)
    y = keras.layers.ReLU()(y)
    y = keras.layers.Conv2D(width, 3, padding="same", use_bias=False)(y)
    y = keras.layers.BatchNormalization()(y)
    return keras.layers.ReLU()(keras.layers.Add()([y, shortcut]))


def cnn(size: str) -> Workload:
    if size == "large":
        model = keras.applications.ResNet50(
            weights=None, input_shape=(224, 224, 3), classes=1000, classifier_activation=None
        )
        return Workload(
            model,
            _classification_loss,
            tf.TensorSpec((224, 224, 3), tf.float32),
            tf.TensorSpec((), tf.int32),
            target_max=1000,
        )
    width, blocks = CNN_SIZES[size]
    inputs = keras.Input((32, 32, 3))
    x = keras.layers.Conv2D(width, 3, padding="same", use_bias=False)(inputs)
    x = keras.layers.ReLU()(keras.layers.BatchNormalization()(x))
    for stage in range(3):
        for block in range(blocks):
            x = _residual_block(x, width * 2**stage, stride=2 if stage and not block else 1)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(CLASSES)(x)
    return Workload(
        keras.Model(inputs, outputs, name=f"cnn_{size}"),
        _classification_loss,
        tf.TensorSpec((32, 32, 3), tf.float32),
        tf.TensorSpec((), tf.int32),
        target_max=CLASSES,
    )


# --- transformer: encoder blocks on token ids, trained to predict a token per position --------------------------


class TokenAndPositionEmbedding(keras.layers.Layer):
    def __init__(self, vocab: int, length: int, width: int, **kwargs):
        super().__init__(**kwargs)
        self.vocab, self.length, self.width = vocab, length, width
        self.tokens = keras.layers.Embedding(vocab, width)
        self.positions = keras.layers.Embedding(length, width)

    def build(self, input_shape):
        self.tokens.build(input_shape)
        self.positions.build((self.length,))

    def call(self, ids):
        positions = keras.ops.arange(0, keras.ops.shape(ids)[-1])
        return self.tokens(ids) + self.positions(positions)

    def get_config(self):
        return {**super().get_config(), "vocab": self.vocab, "length": self.length, "width": self.width}


class EncoderBlock(keras.layers.Layer):
    """Post-norm encoder block: x = LN(x + MHA(x, x)); LN(x + W2 gelu(W1 x))."""

    def __init__(self, width: int, heads: int, ff: int, **kwargs):
        super().__init__(**kwargs)
        self.width, self.heads, self.ff = width, heads, ff
        self.attention = keras.layers.MultiHeadAttention(heads, width // heads)
        self.norm1 = keras.layers.LayerNormalization()
        self.ff1 = keras.layers.Dense(ff, activation="gelu")
        self.ff2 = keras.layers.Dense(width)
        self.norm2 = keras.layers.LayerNormalization()

    def build(self, input_shape):
        self.attention.build(input_shape, input_shape)
        self.norm1.build(input_shape)
        self.ff1.build(input_shape)
        self.ff2.build((*input_shape[:-1], self.ff))
        self.norm2.build(input_shape)

    def call(self, x):
        x = self.norm1(x + self.attention(x, x))
        return self.norm2(x + self.ff2(self.ff1(x)))

    def get_config(self):
        return {**super().get_config(), "width": self.width, "heads": self.heads, "ff": self.ff}


def transformer(size: str) -> Workload:
    """Embedding, encoder blocks, per-token classifier: a chain of layers (keras.Sequential)."""
    length, vocab, width, heads, blocks, ff = TRANSFORMER_SIZES[size]
    layers = [
        TokenAndPositionEmbedding(vocab, length, width),
        *(EncoderBlock(width, heads, ff) for _ in range(blocks)),
        keras.layers.Dense(vocab),
    ]
    model = keras.Sequential([keras.Input((length,), dtype="int32"), *layers], name=f"transformer_{size}")
    return Workload(
        model,
        _classification_loss,
        tf.TensorSpec((length,), tf.int32),
        tf.TensorSpec((length,), tf.int32),
        target_max=vocab,
        input_max=vocab,
    )


ZOO = {"mlp": mlp, "cnn": cnn, "transformer": transformer}


class UserModelError(RuntimeError):
    """A user model that cannot be imported, called, or returns the wrong type."""


def user_workload(name: str, entry: str, args: dict, search_dir: str) -> Workload:
    """Import "module:function" (from the suite's folder or sys.path) and call it with `args`."""
    module_name, function_name = entry.split(":")
    if search_dir and search_dir not in sys.path:
        sys.path.insert(0, search_dir)
    try:
        module = importlib.import_module(module_name)
    except Exception as e:
        raise UserModelError(f"models.{name}.entry: cannot import {module_name!r}: {type(e).__name__}: {e}") from e
    function = getattr(module, function_name, None)
    if not callable(function):
        raise UserModelError(f"models.{name}.entry: {module_name} has no function {function_name!r}")
    workload = function(**args)
    if not isinstance(workload, Workload):
        raise UserModelError(
            f"models.{name}.entry: {entry} returned {type(workload).__name__}, expected tfscale.Workload"
        )
    if not isinstance(workload.model, keras.Model):
        raise UserModelError(
            f"models.{name}.entry: Workload.model is {type(workload.model).__name__}, expected keras.Model"
        )
    return workload


def build_workload(spec: RunSpec) -> Workload:
    """The spec's model, built in the current (strategy) scope."""
    if spec.user_model is not None:
        return user_workload(spec.model, spec.user_model["entry"], spec.user_model.get("args", {}), spec.suite_dir)
    return ZOO[spec.model](spec.model_size)
