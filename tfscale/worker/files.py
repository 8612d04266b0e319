"""The dataset files of `data: files`: TFRecord shards written once per workload into tfscale's cache folder.

A dataset's folder is named by a hash of everything its bytes depend on (DatasetKey), so every config and every
later run of the same workload reads the same files. Writers take an exclusive lock per dataset (the ranks of a
cluster start together), write into a temporary folder beside it and rename it into place after its manifest
(file names, sizes, CRC-32s) is written: a folder is either complete or absent. A folder whose manifest is missing
or does not match its files (a partial copy, a damaged file) is removed and written again.

Each example: `id` (int64, its index in the dataset: tests check that no example is read twice), `x` and `y`.
Image inputs (rank 3, 3 channels, float: the zoo cnn) are stored as JPEG so that decoding costs what it costs in
real training; every other tensor as a flat int64 or float list of the spec's shape.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tensorflow as tf

from tfscale.axes import TASK_RANDOM, TASK_TEACHER
from tfscale.host.envinfo import cache_dir
from tfscale.suite.workload import Workload
from tfscale.worker.data import batch_of, is_image

FORMAT_VERSION = 1  # history: 1 = id, x (JPEG for images), y; bump when the bytes of a dataset change
MANIFEST = "manifest.json"
JPEG_QUALITY = 90
CHUNK = 64  # examples made at once
COMPRESSION = {"none": None, "gzip": "GZIP", "zlib": "ZLIB"}


@dataclass(frozen=True)
class Dataset:
    """A complete dataset folder: its shard paths in order, bytes on disk, examples, how long writing it took."""

    path: Path
    files: tuple[str, ...]
    bytes: int
    examples: int
    generation_s: float  # 0.0: the files were already there
    compression: str

    @property
    def compression_type(self) -> str | None:
        return COMPRESSION[self.compression]


def dataset_key(
    workload: Workload, what: dict, examples: int, shards: int, compression: str, seed: int, task: str = TASK_RANDOM
) -> str:
    """16 hex digits over what the files' bytes depend on: format, the model (`what`: zoo name and size, or the
    user model's entry and args), the example specs, sizes, compression, seed and task (how targets are made)."""
    content = {
        "format": FORMAT_VERSION,
        "model": what,
        "x": [workload.input_spec.shape.as_list(), workload.input_spec.dtype.name, workload.input_max],
        "y": [workload.target_spec.shape.as_list(), workload.target_spec.dtype.name, workload.target_max],
        "examples": examples,
        "shards": shards,
        "compression": compression,
        "seed": seed,
        **({"task": task} if task != TASK_RANDOM else {}),  # random-task keys stay those of files written before
    }
    blob = json.dumps(content, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def datasets_root() -> Path:
    return cache_dir() / "datasets"


def ensure_dataset(
    workload: Workload, what: dict, examples: int, shards: int, compression: str, seed: int, task: str = TASK_RANDOM
) -> Dataset:
    """The dataset's folder in the cache, written first if it is missing or damaged (under its lock)."""
    root = datasets_root()
    root.mkdir(parents=True, exist_ok=True)
    key = dataset_key(workload, what, examples, shards, compression, seed, task)
    folder = root / key
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when this process dies
        found = read_complete(folder, compression)
        if found is not None:
            return found
        for stale in root.glob(f".tmp-{key}-*"):  # a writer killed mid-way (it held this lock, so it is gone)
            shutil.rmtree(stale, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)  # damaged or partial: never read half a dataset
        start = time.perf_counter()
        temporary = root / f".tmp-{key}-{os.getpid()}"
        temporary.mkdir()
        manifest = write_shards(temporary, workload, examples, shards, compression, seed, task)
        temporary.rename(folder)
        return _from_manifest(folder, manifest, compression, time.perf_counter() - start)


def _crc(path: Path) -> int:
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def read_complete(folder: Path, compression: str) -> Dataset | None:
    """The dataset in `folder` if its manifest exists and every file it lists has its size and CRC-32; else None."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = manifest["files"]
        for entry in files:
            path = folder / entry["name"]
            if path.stat().st_size != entry["bytes"] or _crc(path) != entry["crc32"]:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return _from_manifest(folder, manifest, compression, 0.0)


def _from_manifest(folder: Path, manifest: dict, compression: str, generation_s: float) -> Dataset:
    files = manifest["files"]
    paths = tuple(str(folder / entry["name"]) for entry in files)
    return Dataset(folder, paths, sum(e["bytes"] for e in files), int(manifest["examples"]), generation_s, compression)


def _images(spec: tf.TensorSpec, count: int, rng: np.random.Generator) -> np.ndarray:
    """uint8 images with some structure (a coarse random pattern scaled up, plus noise), so that JPEG compresses
    them about as it does photographs rather than as white noise."""
    height, width, channels = spec.shape.as_list()
    coarse = rng.integers(0, 256, size=(count, 4, 4, channels)).astype(np.float32)
    smooth = tf.image.resize(coarse, (height, width), method="bilinear").numpy()
    noisy = smooth + rng.normal(0, 12, size=smooth.shape)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def _feature(value: np.ndarray, spec: tf.TensorSpec) -> tf.train.Feature:
    flat = value.reshape(-1)
    if spec.dtype.is_integer or spec.dtype.is_bool:
        return tf.train.Feature(int64_list=tf.train.Int64List(value=flat.astype(np.int64)))
    return tf.train.Feature(float_list=tf.train.FloatList(value=flat.astype(np.float32)))


def write_shards(
    folder: Path, workload: Workload, examples: int, shards: int, compression: str, seed: int, task: str = TASK_RANDOM
) -> dict:
    """`shards` TFRecord files of consecutive examples, then the manifest (last: its presence marks completion),
    which it returns. Inputs and random targets are drawn as synthetic batches are (tfscale.worker.data).
    Targets: random, or with task teacher the teacher's labels of the inputs as the pipeline decodes them."""
    rng = np.random.default_rng(seed)
    image = is_image(workload.input_spec)
    label = None
    if task == TASK_TEACHER:
        from tfscale.worker.teacher import teacher  # late: the random task never needs it

        label = teacher(workload, seed)
    options = tf.io.TFRecordOptions(compression_type=COMPRESSION[compression])
    entries, bounds = [], np.linspace(0, examples, shards + 1).astype(int)
    for shard in range(shards):
        name = f"part-{shard:05d}-of-{shards:05d}.tfrecord"
        with tf.io.TFRecordWriter(str(folder / name), options) as writer:
            # made CHUNK examples at a time: 4096 ResNet-sized images at once would take gigabytes of memory
            for start in range(bounds[shard], bounds[shard + 1], CHUNK):
                count = min(CHUNK, bounds[shard + 1] - start)
                spec = workload.input_spec
                x = _images(spec, count, rng) if image else batch_of(spec, count, workload.input_max, rng)
                y = batch_of(workload.target_spec, count, workload.target_max, rng)
                if label is not None:  # images as decoded: float in [0, 1]
                    y = label(tf.constant(x, tf.float32) / 255.0 if image else tf.constant(x)).numpy()
                for k in range(count):
                    if image:
                        encoded = tf.io.encode_jpeg(x[k], quality=JPEG_QUALITY).numpy()
                        feature_x = tf.train.Feature(bytes_list=tf.train.BytesList(value=[encoded]))
                    else:
                        feature_x = _feature(x[k], spec)
                    features = {
                        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[start + k])),
                        "x": feature_x,
                        "y": _feature(np.asarray(y[k]), workload.target_spec),
                    }
                    example = tf.train.Example(features=tf.train.Features(feature=features))
                    writer.write(example.SerializeToString())
        path = folder / name
        entries.append({"name": name, "bytes": path.stat().st_size, "crc32": _crc(path)})
    manifest = {"format": FORMAT_VERSION, "examples": examples, "files": entries}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest
