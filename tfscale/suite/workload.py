"""`Workload`: what a model builder (zoo or user `module:function`) returns to the worker.

Plain dataclass with untyped TensorFlow fields so that importing `tfscale` stays TensorFlow-free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Workload:
    """A trainable model and the shape of one example.

    model: a `keras.Model`, built inside the strategy scope by the builder.
    loss: callable (y_true, y_pred) -> per-example loss, shape [batch] (no reduction over the batch).
    input_spec / target_spec: `tf.TensorSpec` of ONE example, without the batch dimension.
    target_max: for integer targets, the exclusive upper bound of target values (e.g. classes); else None.
    dataset_fn: optional, the model's own input pipeline, read with `data: files`:
        `dataset_fn(input_context, global_batch) -> tf.data.Dataset` of (x, y) batches of
        `input_context.get_per_replica_batch_size(global_batch)` examples, this pipeline's share of the data
        (shard with `input_context.num_input_pipelines` / `input_pipeline_id`): the convention of
        `tf.distribute.Strategy.distribute_datasets_from_function`. tfscale repeats it.
    """

    model: Any
    loss: Callable[[Any, Any], Any]
    input_spec: Any
    target_spec: Any
    target_max: int | None = None
    input_max: int | None = None  # for integer inputs (token ids): exclusive upper bound; else None
    dataset_fn: Callable[[Any, int], Any] | None = None
