"""The one timing helper of the worker: every timed figure (training windows, the parameter-server rounds, the
communication steps, the all-reduce sweep, the pipeline stages) is a list of `time_calls` samples.

Each sample is the wall time (`time.perf_counter`) of `per_sample` calls, the last of them ended by `sync` (a host
sync: the loss fetched, the coordinator joined), divided by `per_sample`. Warm-up calls, each synced, come first
and are never timed. Pure Python: the calls bring their own TensorFlow.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Timed:
    samples_s: list[float]  # s per call, one value per sample
    last: Any  # what `sync` returned for the last call (the loss of the last step, for training)


def time_calls(
    call: Callable[[], Any],
    sync: Callable[[Any], Any],
    *,
    samples: int | None = None,
    warmup: int = 0,
    per_sample: int = 1,
    more: Callable[[list[float]], bool] | None = None,
    collect: bool = True,
    clock: Callable[[], float] = time.perf_counter,
) -> Timed:
    """`warmup` untimed synced calls, then samples of `per_sample` calls each (see the module): `samples` of them,
    or as long as `more(values so far)` says so (it runs after each sample, outside the timed span; with
    `samples` too, at most that many). `collect`: a full garbage collection before the first sample (it takes tens
    of ms with TensorFlow loaded: the warm-up's windows, timed one by one, skip it)."""
    if samples is None and more is None:
        raise ValueError("time_calls: give samples, more, or both")
    last = None
    for _ in range(warmup):
        last = sync(call())
    if collect:
        gc.collect()  # start the timed part without garbage left by tracing and warm-up
        # Keep the objects alive now (TensorFlow's and Keras' own, tens of thousands) out of later collections: an
        # automatic full collection inside a window would cost it about 0.15 s here.
        gc.freeze()
    values: list[float] = []
    while samples is None or len(values) < samples:
        start = clock()
        for _ in range(per_sample - 1):
            call()
        last = sync(call())
        values.append((clock() - start) / per_sample)
        if more is not None and not more(values):
            break
    return Timed(values, last)
