"""Synthetic input: one fixed global batch generated from the workload's specs with a seed, repeated.

Repeating one in-memory batch makes the input pipeline as cheap as it can be, so it is never the bottleneck; the
strategy splits each global batch over its replicas.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from tfscale.suite.workload import Workload


def is_image(spec: tf.TensorSpec) -> bool:
    """Stored as JPEG: float tensors of shape (height, width, 3)."""
    shape = spec.shape.as_list()
    return spec.dtype.is_floating and len(shape) == 3 and shape[-1] == 3 and None not in shape


def batch_of(spec: tf.TensorSpec, batch: int, upper: int | None, rng: np.random.Generator) -> np.ndarray:
    """`batch` examples of `spec`: integers in [0, upper) (upper None: [0, 2)), floats standard normal."""
    shape = (batch, *spec.shape.as_list())
    if spec.dtype.is_integer:
        return rng.integers(0, upper or 2, size=shape).astype(spec.dtype.as_numpy_dtype)
    return rng.standard_normal(shape).astype(spec.dtype.as_numpy_dtype)


def synthetic_batch(workload: Workload, global_batch: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = batch_of(workload.input_spec, global_batch, workload.input_max, rng)
    y = batch_of(workload.target_spec, global_batch, workload.target_max, rng)
    return x, y


def synthetic_dataset(workload: Workload, global_batch: int, seed: int) -> tf.data.Dataset:
    x, y = synthetic_batch(workload, global_batch, seed)
    dataset = tf.data.Dataset.from_tensors((x, y)).repeat().prefetch(tf.data.AUTOTUNE)
    options = tf.data.Options()
    # One in-memory batch: there is nothing to shard by file; each worker splits batches by data.
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return dataset.with_options(options)
