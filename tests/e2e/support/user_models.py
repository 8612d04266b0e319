"""User models for the end-to-end tests, referenced from suites as "user_models:function"."""

import keras
import tensorflow as tf

import tfscale


def tiny_regressor(width: int = 8, features: int = 4) -> tfscale.Workload:
    inputs = keras.Input((features,))
    hidden = keras.layers.Dense(width, activation="relu")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(1)(hidden))
    return tfscale.Workload(
        model=model,
        loss=lambda y_true, y_pred: tf.reduce_mean(tf.square(y_true - y_pred), axis=-1),
        input_spec=tf.TensorSpec((features,), tf.float32),
        target_spec=tf.TensorSpec((1,), tf.float32),
        target_max=None,
    )


def not_a_workload():
    return "a string"


def fails_on_worker_1(width: int = 8) -> tfscale.Workload:
    """Builds on every rank but the second worker of a cluster, which raises: a rank lost at start."""
    import json
    import os

    task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {})
    if task.get("type") == "worker" and task.get("index") == 1:
        raise RuntimeError("worker 1 refuses to build")
    return tiny_regressor(width)


def _with_side_effect(effect) -> tfscale.Workload:
    """tiny_regressor whose loss first runs `effect()` on the host (through tf.py_function) in every step."""
    workload = tiny_regressor()

    def loss(y_true, y_pred):
        done = tf.py_function(lambda: effect() or 0.0, [], tf.float32)
        done.set_shape(())
        return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1) + 0.0 * done

    workload.loss = loss
    return workload


def sleepy_regressor(sleep_s: float = 5.0) -> tfscale.Workload:
    """Every step sleeps `sleep_s` in its loss: a rank that stops making progress."""
    import time

    return _with_side_effect(lambda: time.sleep(sleep_s))


def crashes_in_training() -> tfscale.Workload:
    """Builds fine; the first training step kills its own process with SIGSEGV (a native crash)."""
    import os
    import signal

    return _with_side_effect(lambda: os.kill(os.getpid(), signal.SIGSEGV))


def raises_in_training() -> tfscale.Workload:
    """Builds fine; tracing the loss raises."""
    workload = tiny_regressor()

    def loss(y_true, y_pred):
        raise ValueError("this loss is broken")

    workload.loss = loss
    return workload


def regressor_with_pipeline(width: int = 8, features: int = 4, examples: int = 256) -> tfscale.Workload:
    """tiny_regressor with its own input pipeline (read with data: files): examples made from a range, this input
    pipeline's share of them (the tf.distribute dataset_fn convention), batched per replica."""
    workload = tiny_regressor(width, features)

    def dataset_fn(input_context, global_batch):
        batch = input_context.get_per_replica_batch_size(global_batch)
        ids = tf.data.Dataset.range(examples).shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        pairs = ids.map(
            lambda i: (
                tf.fill([features], tf.cast(i, tf.float32) / examples),
                tf.reshape(tf.cast(i % 7, tf.float32), [1]),
            )
        )
        return pairs.shuffle(64).batch(batch, drop_remainder=True).prefetch(tf.data.AUTOTUNE)

    workload.dataset_fn = dataset_fn
    return workload


def labelled_regressor(labels: list[str], width: int = 8) -> tfscale.Workload:
    """tiny_regressor, with arguments a suite passes through untouched (the hostile-input test's strings)."""
    assert all(isinstance(label, str) for label in labels)
    return tiny_regressor(width)
