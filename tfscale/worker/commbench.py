"""All-reduce alone over message sizes (nccl-tests style), on the spec's strategy and devices or cluster.

One float32 tensor of `size` bytes per replica, reduced with the same replica-context `all_reduce` path as the
split step; `warmup_steps` untimed calls then `steps` timed calls per size, each ended by a host sync.
"""

from __future__ import annotations

import statistics

import tensorflow as tf

from tfscale.suite.spec import RunSpec
from tfscale.worker.cluster import report_progress
from tfscale.worker.comm import all_reduce
from tfscale.worker.loop import host_sync
from tfscale.worker.timing import time_calls


def run_commbench(spec: RunSpec, strategy: tf.distribute.Strategy) -> list[dict]:
    sync, how = host_sync(spec.device, multi_worker=spec.cluster)
    rows = []
    for size in spec.extra["sizes"]:
        payload = tf.function(lambda n=size // 4: strategy.run(lambda: [tf.ones([n], tf.float32)]))()

        @tf.function
        def reduce(payload=payload):
            reduced = all_reduce(strategy, list(payload))
            return tf.reshape(strategy.experimental_local_results(reduced[0])[0], [-1])[0]

        samples = time_calls(reduce, sync, samples=spec.steps, warmup=spec.warmup_steps).samples_s
        rows.append({"size_bytes": size, "time_s": statistics.median(samples), "samples_s": samples})
        report_progress(f"size {size}")
    return rows


METHOD = (
    "replica-context all_reduce (SUM) of one float32 tensor of size_bytes per replica; time_s = median of "
    "{n} timed calls after {w} untimed, each ended by a host sync"
)
