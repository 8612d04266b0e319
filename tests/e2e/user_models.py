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
