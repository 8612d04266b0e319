"""The teacher task (`task: teacher`): targets given by a fixed random "teacher" function of the inputs, and inputs
drawn fresh every step from a seeded stream, so the loss can fall and each step's gradient is a sample of the
population gradient (what the gradient noise scale is about). With random targets a model learns nothing, and with
one batch repeated every step's gradient is the same sample.

The teacher depends only on the workload's specs and the seed, so every worker of a cluster, every config and the
dataset files label alike:
- token inputs with token targets of the same shape (the zoo transformer): y_t = perm[x_{t-1}] (x_{-1} = 0), a
  seeded permutation of the previous token, so a position's target needs its neighbour (attention has something to
  learn);
- image inputs (the zoo cnn): the argmax of a random linear map of each channel's mean and mean square (a global
  pooling model can learn it); synthetic images carry a random offset per image and channel so that these vary;
- other float inputs with class targets (the zoo mlp, user classifiers): the argmax of a random two-layer tanh
  network of the flattened input;
- float targets (user regressions): a random linear map of the flattened input through tanh.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import tensorflow as tf

from tfscale.suite.workload import Workload
from tfscale.worker.data import is_image

TEACHER_SEED = 1_000_003  # added to the suite's seed: the teacher's weights are not the model's initialisation
HIDDEN = 64  # width of the two-layer teacher


class TeacherError(ValueError):
    """A workload whose specs the teacher cannot label."""


def _features(spec: tf.TensorSpec) -> int:
    return int(np.prod(spec.shape.as_list()))


def teacher(workload: Workload, seed: int) -> Callable[[tf.Tensor], tf.Tensor]:
    """`label(x) -> y` for a batch x of the workload's inputs (tensors or arrays), in the target spec's dtype."""
    x_spec, y_spec = workload.input_spec, workload.target_spec
    rng = np.random.default_rng(seed + TEACHER_SEED)
    classes = workload.target_max
    if x_spec.dtype.is_integer and y_spec.dtype.is_integer and x_spec.shape == y_spec.shape and classes:
        vocab = workload.input_max or classes
        perm = tf.constant(rng.permutation(max(vocab, classes)) % classes, y_spec.dtype)

        def tokens(x):
            previous = tf.pad(tf.cast(x, tf.int64)[..., :-1], [[0, 0]] * (x.shape.rank - 1) + [[1, 0]])
            return tf.gather(perm, previous % vocab)

        return tokens
    if not x_spec.dtype.is_floating:
        raise TeacherError(f"task: teacher cannot label inputs of {x_spec}: give the model a dataset_fn")
    if is_image(x_spec) and y_spec.dtype.is_integer and classes:
        weights = tf.constant(rng.standard_normal((6, classes)), tf.float32)

        def images(x):
            x = tf.cast(x, tf.float32)
            pooled = tf.concat([tf.reduce_mean(x, [1, 2]), tf.reduce_mean(tf.square(x), [1, 2])], axis=-1)
            return tf.cast(tf.argmax(pooled @ weights, axis=-1), y_spec.dtype)

        return images
    features = _features(x_spec)
    if y_spec.dtype.is_integer and classes and y_spec.shape.rank == 0:
        w1 = tf.constant(rng.standard_normal((features, HIDDEN)) / np.sqrt(features), tf.float32)
        w2 = tf.constant(rng.standard_normal((HIDDEN, classes)), tf.float32)

        def classify(x):
            hidden = tf.tanh(tf.reshape(tf.cast(x, tf.float32), [-1, features]) @ w1)
            return tf.cast(tf.argmax(hidden @ w2, axis=-1), y_spec.dtype)

        return classify
    if y_spec.dtype.is_floating:
        outputs = _features(y_spec)
        w = tf.constant(rng.standard_normal((features, outputs)) / np.sqrt(features), tf.float32)

        def regress(x):
            y = tf.tanh(tf.reshape(tf.cast(x, tf.float32), [-1, features]) @ w)
            return tf.cast(tf.reshape(y, [-1, *y_spec.shape.as_list()]), y_spec.dtype)

        return regress
    raise TeacherError(f"task: teacher cannot label targets of {y_spec}: give the model a dataset_fn")


def teacher_stream(
    workload: Workload, batch: int, seed: int, context: tf.distribute.InputContext, draw: int = 0
) -> tf.data.Dataset:
    """Per-replica batches of fresh inputs with the teacher's targets, forever: batch i of input pipeline p is drawn
    with the stateless seed (seed, p, i), so pipelines never repeat each other and a rerun repeats itself. The
    teacher depends on `seed` only; `draw` picks another stream of inputs for the same teacher (checks)."""
    label = teacher(workload, seed)
    spec = workload.input_spec
    shape = [batch, *spec.shape.as_list()]
    pipeline = context.input_pipeline_id

    def make(i):
        key = tf.stack([tf.constant(seed * 7919 + pipeline + draw * 104_729, tf.int64), i])
        if spec.dtype.is_integer:
            x = tf.random.stateless_uniform(shape, key, 0, workload.input_max or 2, dtype=tf.int64)
            x = tf.cast(x, spec.dtype)
        else:
            x = tf.random.stateless_normal(shape, key)
            if is_image(spec):  # a random offset per image and channel: what the image teacher reads varies
                x += 2.0 * tf.random.stateless_normal([batch, 1, 1, 3], key + [0, 1 << 40])
            x = tf.cast(x, spec.dtype)
        return x, label(x)

    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF  # seeded apart
    stream = tf.data.Dataset.counter().map(make, num_parallel_calls=tf.data.AUTOTUNE)
    return stream.prefetch(tf.data.AUTOTUNE).with_options(options)
