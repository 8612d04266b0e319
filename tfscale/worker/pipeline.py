"""Pipeline parallelism: the model's chain of layers cut into `stages` contiguous groups (balanced by parameter
bytes), each group's variables and ops placed on its own device with `tf.device`; the global batch cut into
`micro_batches`; GPipe's schedule in one tf.function: every micro-batch's forward through the stages, the loss of
all of them, then one backward (TF's dataflow runs stage s on micro-batch m while stage s+1 works on m-1) and one
optimizer update of the accumulated gradients.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

import keras
import tensorflow as tf

from tfscale import metrics as m
from tfscale.suite.spec import RunSpec
from tfscale.suite.stages import balanced_cuts, bubble_theory, groups
from tfscale.suite.workload import Workload
from tfscale.worker.timing import time_calls
from tfscale.worker.trainer import Trainer, model_parallel_start, variable_bytes

METHOD = (
    "pipeline: layers cut into contiguous stages balanced by parameter bytes, stage s on device s; GPipe "
    "schedule (all micro-batch forwards, one backward, one update) in one tf.function. bubble_fraction = "
    "1 - sum over stages of the stage's busy time / (stages x median step), the busy time of a stage being "
    "micro_batches x the median time of its forward+backward on one micro-batch run alone; on logical CPU "
    "devices the stages share the cores, so the measured bubble (even negative: stages overlapping on the "
    "cores) tests the mechanics, not the schedule's benefit; bubble_fraction_theory = (S-1)/(M+S-1)"
)


@dataclass
class Pipeline:
    stages: list[list[keras.layers.Layer]]  # the placed copies of the model's layers, per stage
    devices: list[str]
    loss: Any  # the workload's per-example loss

    def stage_variables(self) -> list[list]:
        """Each stage's trainable variables."""
        return [[v for layer in stage for v in layer.trainable_variables] for stage in self.stages]

    def stage_bytes(self) -> list[int]:
        return [variable_bytes([v for layer in stage for v in layer.weights]) for stage in self.stages]

    def forward(self, x, training: bool = True):
        """The micro-batch's logits, each stage's ops on its device."""
        for stage, device in zip(self.stages, self.devices, strict=True):
            with tf.device(device):
                for layer in stage:
                    x = layer(x, training=training)
        return x

    def mean_loss(self, x, y, micro_batches: int):
        """Mean per-example loss of the batch, computed micro-batch by micro-batch (all forwards)."""
        losses = []
        for xm, ym in zip(tf.split(x, micro_batches), tf.split(y, micro_batches), strict=True):
            logits = self.forward(xm)
            with tf.device(self.devices[-1]):
                losses.append(tf.reduce_mean(self.loss(ym, logits)))
        return tf.add_n(losses) / micro_batches


def place(workload: Workload, devices: list[str], stages: int) -> Pipeline:
    """Copies of the workload's layers (its weights included) built stage by stage on their devices."""
    layers = list(workload.model.layers)
    cuts = balanced_cuts([variable_bytes(layer.weights) for layer in layers], stages)
    placed = []
    x = tf.zeros((1, *workload.input_spec.shape), workload.input_spec.dtype)
    for group, device in zip(groups(layers, cuts), devices, strict=False):
        copies = []
        with tf.device(device):
            for layer in group:
                copy = layer.__class__.from_config(layer.get_config())
                x = copy(x)  # builds the copy's variables here, on this stage's device
                copy.set_weights(layer.get_weights())
                copies.append(copy)
        placed.append(copies)
    return Pipeline(placed, devices[:stages], workload.loss)


def stage_optimizers(pipeline: Pipeline, new_optimizer) -> list:
    """One optimizer per stage, built on the stage's device, so that slots and updates stay beside the weights."""
    optimizers = []
    for variables, device in zip(pipeline.stage_variables(), pipeline.devices, strict=True):
        optimizer = new_optimizer()
        with tf.device(device):
            optimizer.build(variables)
        optimizers.append(optimizer)
    return optimizers


def make_step(pipeline: Pipeline, optimizers: list, micro_batches: int):
    per_stage = pipeline.stage_variables()
    variables = [v for vs in per_stage for v in vs]

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = pipeline.mean_loss(x, y, micro_batches)
        gradients = tape.gradient(loss, variables)
        start = 0
        for optimizer, vs, device in zip(optimizers, per_stage, pipeline.devices, strict=True):
            with tf.device(device):
                optimizer.apply(gradients[start : start + len(vs)], vs)
            start += len(vs)
        return loss

    return step


def stage_busy_s(pipeline: Pipeline, x_micro, repeats: int = 5) -> list[float]:
    """Per stage: median seconds of its forward+backward on one micro-batch run alone."""
    busy, h = [], x_micro
    for stage, device, variables in zip(pipeline.stages, pipeline.devices, pipeline.stage_variables(), strict=True):

        @tf.function
        def work(h_in, stage=stage, device=device, variables=variables):
            with tf.GradientTape() as tape:
                if h_in.dtype.is_floating:
                    tape.watch(h_in)
                with tf.device(device):
                    out = h_in
                    for layer in stage:
                        out = layer(out, training=True)
                    total = tf.reduce_sum(tf.cast(out, tf.float32))
            grads = tape.gradient(total, variables + ([h_in] if h_in.dtype.is_floating else []))
            # one scalar that depends on every gradient, fetched to end the timed call (embeddings: IndexedSlices)
            check = tf.constant(0.0)
            for g in grads:
                if g is not None:
                    check += tf.reduce_sum(tf.cast(g.values if isinstance(g, tf.IndexedSlices) else g, tf.float32))
            return out, check

        out, _ = work(h)
        timed = time_calls(lambda h=h, work=work: work(h)[1], lambda c: float(c.numpy()), samples=repeats, warmup=1)
        busy.append(statistics.median(timed.samples_s))
        h = out
    return busy


def pipeline_figures(spec: RunSpec, pipeline: Pipeline, x, step_median_s: float) -> dict[str, Any]:
    micro = tf.split(x, spec.micro_batches)[0]
    busy = [t * spec.micro_batches for t in stage_busy_s(pipeline, micro)]
    stage_bytes = pipeline.stage_bytes()
    return {
        m.STAGE_PARAM_BYTES: stage_bytes,
        m.PARAM_BYTES_PER_DEVICE: max(stage_bytes),
        m.BUBBLE_FRACTION: 1 - sum(busy) / (len(busy) * step_median_s),
        m.BUBBLE_FRACTION_THEORY: bubble_theory(len(busy), spec.micro_batches),
        m.MODEL_PARALLEL_METHOD: METHOD,
    }


def trainer(spec: RunSpec, task_name: str) -> Trainer:
    """Place the workload's layers on their devices; the GPipe step; the stages measured once timed."""
    from tfscale.worker.data import synthetic_batch
    from tfscale.worker.loop import host_sync
    from tfscale.worker.synchronous import new_optimizer

    devices, workload = model_parallel_start(spec)
    pipeline = place(workload, devices, spec.stages)
    step = make_step(pipeline, stage_optimizers(pipeline, lambda: new_optimizer(spec)), spec.micro_batches)
    x, y = (tf.constant(a) for a in synthetic_batch(workload, spec.global_batch_size, spec.seed))
    sync, how = host_sync(spec.device)
    # stages pass activations by copies between devices, not by collectives: no comm_time_trace_s from a profile
    return Trainer(
        lambda: step(x, y),
        sync,
        how,
        workload,
        devices,
        spec.replicas,
        collectives=False,
        columns=lambda loop: pipeline_figures(spec, pipeline, x, statistics.median(loop.samples_s)),
    )
