"""What a config's training step reads with `data: files`: the tf.data pipeline over the dataset files (or the
user model's own `dataset_fn`), and the input figures measured beside the timed windows (tfscale.measures.inputs).

The pipeline is the one TensorFlow's input-pipeline guide recommends: shuffled files interleaved in parallel,
parse and decode in a parallel map, optional cache, shuffle buffer, repeat, augmentation (images: pad-and-crop,
flip) in a parallel map, batch, prefetch. Each input pipeline reads its own files: the files are sharded by the
`tf.distribute.InputContext` (file i goes to pipeline i mod n: what AutoShardPolicy.FILE does), and TF's own
auto-sharding is switched off so they are not sharded twice. MultiWorkerMirrored has one pipeline per worker;
Mirrored, CentralStorage and OneDevice one per process; ParameterServer gives every worker pipeline 0 of 1 (TF's
design: each worker reads all files, in its own shuffled order).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

from tfscale import metrics as m
from tfscale.axes import AUTO, DATA_FILES, TASK_TEACHER
from tfscale.contract import TEST_DATA_DELAY_ENV
from tfscale.suite.spec import RunSpec
from tfscale.suite.workload import Workload
from tfscale.worker.cluster import report_progress
from tfscale.worker.data import is_image
from tfscale.worker.files import Dataset, ensure_dataset
from tfscale.worker.timing import time_calls

DatasetFn = Callable[[tf.distribute.InputContext], tf.data.Dataset]

SOURCE_FILES = "tfrecord files"
SOURCE_USER = "user dataset_fn"
SOURCE_SYNTHETIC = "synthetic in-memory batch"
SOURCE_TEACHER = "synthetic teacher stream"
TEACHER_PIPELINE = (
    "fresh inputs drawn per batch with a stateless seed (seed, input pipeline, batch index), labelled by the "
    "teacher (tfscale.worker.teacher) in a parallel map, prefetched"
)
INPUT_ONLY_MIN_S = 0.5  # the input-only figure's timed drain lasts at least this long
MIN_INPUT_WINDOWS = 10  # the in-memory step's windows when the timed loop had fewer


@dataclass
class Source:
    """A config's input: `fn(input_context) -> dataset of per-replica (x, y) batches, repeated forever`, and the
    record columns saying what it is. `contexts` collects the InputContexts TF called `fn` with (this process's
    pipelines), so that the input-only figure drains the same pipeline."""

    fn: DatasetFn
    columns: dict[str, Any]
    per_replica_batch: int
    contexts: list = field(default_factory=list)
    measured: bool = True  # the input figures are measured (data: files); not for the teacher's synthetic stream

    def distributed(self, strategy) -> Any:
        """The strategy's distributed dataset over `fn` (one pipeline per input context)."""

        def recorded(context):
            self.contexts.append(context)
            return self.fn(context)

        return strategy.distribute_datasets_from_function(recorded)

    def in_memory(self, context) -> tf.data.Dataset:
        """The same pipeline's first batch held in memory and repeated: the step without any input work."""
        return self.fn(context).take(1).cache().repeat()


def _auto(value: int | str | None) -> int:
    return tf.data.AUTOTUNE if value in (AUTO, None) else int(value)


def _parser(workload: Workload, image: bool) -> Callable:
    x_spec, y_spec = workload.input_spec, workload.target_spec

    def numeric(spec):
        stored = tf.int64 if spec.dtype.is_integer or spec.dtype.is_bool else tf.float32
        return tf.io.FixedLenFeature(spec.shape.as_list(), stored)

    features = {
        "id": tf.io.FixedLenFeature([], tf.int64),
        "x": tf.io.FixedLenFeature([], tf.string) if image else numeric(x_spec),
        "y": numeric(y_spec),
    }

    def parse(serialized):
        example = tf.io.parse_single_example(serialized, features)
        if image:
            x = tf.image.convert_image_dtype(tf.io.decode_jpeg(example["x"], channels=3), tf.float32)
            x = tf.ensure_shape(x, x_spec.shape)
        else:
            x = tf.cast(example["x"], x_spec.dtype)
        return example["id"], x, tf.cast(example["y"], y_spec.dtype)

    return parse


def _augment(shape: list[int]) -> Callable:
    """Images: pad 4 pixels a side (resize_with_crop_or_pad), crop back at a random place, random left-right flip."""
    height, width, _ = shape

    def augment(ids, x, y):
        padded = tf.image.resize_with_crop_or_pad(x, height + 8, width + 8)
        return ids, tf.image.random_flip_left_right(tf.image.random_crop(padded, shape)), y

    return augment


def _delay(milliseconds: float) -> Callable:
    """Test-only (TEST_DATA_DELAY_ENV): sleep this long per example in the map, a pipeline made slow on purpose.
    A Python function in the graph: it runs only where the dataset is built in this process (not on
    ParameterServer workers)."""

    def sleep() -> np.int64:
        time.sleep(milliseconds / 1e3)
        return np.int64(0)

    def slow(ids, x, y):
        done = tf.numpy_function(sleep, [], tf.int64)
        with tf.control_dependencies([done]):
            return tf.identity(ids), x, y

    return slow


def files_pipeline(
    dataset: Dataset,
    workload: Workload,
    spec: RunSpec,
    context: tf.distribute.InputContext,
    batch: int,
    epochs: int | None = None,
    with_ids: bool = False,
    delay_ms: float = 0.0,
) -> tf.data.Dataset:
    """Batches of `batch` examples from this input pipeline's share of the files. `epochs` None: forever, full
    batches only; a count: that many passes, the last batch possibly short (tests count examples with `with_ids`)."""
    calls = _auto(spec.data_parallel_calls)
    image = is_image(workload.input_spec)
    files = tf.data.Dataset.from_tensor_slices(list(dataset.files))
    if context.num_input_pipelines > 1:
        files = files.shard(context.num_input_pipelines, context.input_pipeline_id)
    files = files.shuffle(len(dataset.files), seed=spec.seed, reshuffle_each_iteration=True)
    records = files.interleave(
        lambda name: tf.data.TFRecordDataset(name, compression_type=dataset.compression_type),
        num_parallel_calls=calls,
        deterministic=False,
    )
    examples = records.map(_parser(workload, image), num_parallel_calls=calls, deterministic=False)
    if spec.cache:
        examples = examples.cache()
    if spec.shuffle_buffer:
        examples = examples.shuffle(spec.shuffle_buffer, seed=spec.seed, reshuffle_each_iteration=True)
    examples = examples.repeat(epochs)
    if image:
        examples = examples.map(_augment(workload.input_spec.shape.as_list()), num_parallel_calls=calls)
    if delay_ms > 0:
        examples = examples.map(_delay(delay_ms), num_parallel_calls=calls, deterministic=False)
    batches = examples.batch(batch, drop_remainder=epochs is None)
    if not with_ids:
        batches = batches.map(lambda ids, x, y: (x, y))
    prefetch = _auto(spec.prefetch)
    if prefetch:
        batches = batches.prefetch(prefetch)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF  # sharded above
    return batches.with_options(options)


def pipeline_text(spec: RunSpec, dataset: Dataset, image: bool, batch: int) -> str:
    calls = "AUTOTUNE" if spec.data_parallel_calls in (AUTO, None) else spec.data_parallel_calls
    prefetch = "AUTOTUNE" if spec.prefetch in (AUTO, None) else spec.prefetch
    steps = [
        f"{len(dataset.files)} TFRecord files ({dataset.compression}) sharded by input pipeline, shuffled",
        f"interleave (parallel calls {calls})",
        f"parse{' + JPEG decode' if image else ''} map (parallel calls {calls})",
        *(["cache"] if spec.cache else []),
        *([f"shuffle {spec.shuffle_buffer}"] if spec.shuffle_buffer else []),
        "repeat",
        *([f"pad-crop + flip map (parallel calls {calls})"] if image else []),
        f"batch {batch} per replica",
        *([f"prefetch {prefetch}"] if prefetch else []),
    ]
    return " -> ".join(steps)


def source(spec: RunSpec, workload: Workload, per_replica_batch: int) -> Source | None:
    """The config's input with `data: files`: the user model's dataset_fn if it has one, else the dataset files
    (written first where missing) through files_pipeline. Synthetic data: the teacher's stream with `task: teacher`,
    else None (one batch repeated, tfscale.worker.data)."""
    if spec.data != DATA_FILES:
        if spec.task != TASK_TEACHER:
            return None
        from tfscale.worker.teacher import teacher_stream

        def stream(context):
            return teacher_stream(workload, per_replica_batch, spec.seed, context)

        columns = {m.DATA_SOURCE: SOURCE_TEACHER, m.INPUT_PIPELINE: TEACHER_PIPELINE}
        return Source(stream, columns, per_replica_batch, measured=False)
    global_batch = spec.global_batch_size
    user_fn = getattr(workload, "dataset_fn", None)
    if user_fn is not None:

        def user(context):
            return user_fn(context, global_batch).repeat()

        pipeline = f"{spec.model}'s dataset_fn(input_context, {global_batch}), repeated"
        columns = {m.DATA_SOURCE: SOURCE_USER, m.INPUT_PIPELINE: pipeline}
        return Source(user, columns, per_replica_batch)
    what = spec.user_model or {"zoo": spec.model, "size": spec.model_size}
    dataset = ensure_dataset(
        workload, what, spec.data_examples, spec.data_shards, spec.data_compression, spec.seed, spec.task
    )
    delay_ms = float(os.environ.get(TEST_DATA_DELAY_ENV) or 0)

    def files(context):
        return files_pipeline(dataset, workload, spec, context, per_replica_batch, delay_ms=delay_ms)

    columns = {
        m.DATA_SOURCE: SOURCE_FILES,
        m.DATA_CACHE_PATH: str(dataset.path),
        m.DATA_CACHE_BYTES: dataset.bytes,
        m.DATA_GENERATION_S: dataset.generation_s,
        m.INPUT_PIPELINE: pipeline_text(spec, dataset, is_image(workload.input_spec), per_replica_batch)
        + (f"; test delay {delay_ms:g} ms per example" if delay_ms else ""),
    }
    return Source(files, columns, per_replica_batch)


def time_input(memory_step, sync, loop, dataset: tf.data.Dataset, batch: int) -> tuple[list[float], float]:
    """The two timings behind measures.inputs' figures: windows of the step fed one pipeline batch held in memory
    (`memory_step`, ended by `sync`), as many as the timed loop had (at least MIN_INPUT_WINDOWS) and as long, after
    two untimed windows; then `dataset`, one pipeline of `batch`-example batches, drained alone (examples/s)."""
    window = loop.window_steps
    report_progress("timing the step on an in-memory batch")
    windows = max(MIN_INPUT_WINDOWS, len(loop.samples_s))
    samples = time_calls(memory_step, sync, samples=windows, per_sample=window, warmup=2 * window).samples_s
    report_progress("timing the input pipeline alone")
    return samples, input_only_examples_per_s(dataset, batch)


def input_only_examples_per_s(dataset: tf.data.Dataset, batch: int, min_s: float = INPUT_ONLY_MIN_S) -> float:
    """Examples/s of the pipeline alone: batches drained in a tf.function loop (no model), on one iterator after
    two untimed drains (buffers filled, autotuning started); the count doubles until a drain lasts min_s."""
    iterator = iter(dataset)

    @tf.function
    def drain(count):
        for _ in tf.range(count):
            next(iterator)
        return count

    drain(tf.constant(8))
    drain(tf.constant(8))
    count = 8
    while True:
        start = time.perf_counter()
        drain(tf.constant(count))
        elapsed = time.perf_counter() - start
        if elapsed >= min_s or count >= 1 << 16:
            return count * batch / elapsed
        count *= 2
