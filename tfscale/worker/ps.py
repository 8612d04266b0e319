"""ParameterServerStrategy: the chief runs a ClusterCoordinator that schedules steps on the workers.

Steps are asynchronous: each scheduled closure runs one step of `per-worker batch` examples on whichever worker is
free. A timed "step" is one closure per worker (so its examples equal the global batch, as in synchronous
strategies): a window schedules window_steps x workers closures and ends when `coordinator.join()` returns, i.e.
when every one of them has completed. Completed steps are counted here, not read from `optimizer.iterations`
(Keras 3 miscounted under PS: 38 after 50 scheduled steps).
"""

from __future__ import annotations

import gc
import time

import tensorflow as tf

from tfscale.spec import RunSpec
from tfscale.worker.cluster import report_progress
from tfscale.worker.data import synthetic_dataset
from tfscale.worker.loop import LoopResult, loss_scale, make_replica_step


def run_coordinator(spec: RunSpec, built) -> LoopResult:
    workers = spec.nodes
    per_worker_batch = spec.global_batch_size // workers
    coordinator = tf.distribute.coordinator.ClusterCoordinator(built.strategy)
    replica_step = make_replica_step(built.workload, built.optimizer, per_worker_batch, spec.jit, loss_scale(spec))

    def dataset_fn():
        return synthetic_dataset(built.workload, per_worker_batch, spec.seed)

    iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))

    @tf.function
    def step(per_worker_iterator):
        x, y = next(per_worker_iterator)
        return built.strategy.run(replica_step, args=(x, y))

    def run_round(rounds: int) -> list:
        values = [coordinator.schedule(step, args=(iterator,)) for _ in range(rounds * workers)]
        coordinator.join()  # raises if a closure failed
        return values

    start = time.perf_counter()
    values = run_round(1)
    first_step_s = time.perf_counter() - start
    for _ in range(spec.warmup_steps - 1):
        values = run_round(1)

    windows = max(1, spec.steps // spec.window_steps)
    samples, completed = [], 0
    gc.collect()
    for index in range(windows):
        start = time.perf_counter()
        values = run_round(spec.window_steps)
        samples.append((time.perf_counter() - start) / spec.window_steps)
        completed += len(values)
        report_progress(f"window {index + 1}/{windows}")
    expected = windows * spec.window_steps * workers
    if completed != expected:
        raise RuntimeError(f"ParameterServer: {completed} of {expected} scheduled steps completed")
    timing = (f"time.perf_counter over {windows} windows, each scheduling {spec.window_steps} x {workers} "
              "closures (one per worker per step) on the ClusterCoordinator and ended by coordinator.join(); "
              f"{completed} completed closures counted; {spec.warmup_steps} warm-up round(s) untimed")
    return LoopResult(first_step_s, samples, windows * spec.window_steps, spec.window_steps,
                      float(values[-1].fetch()), timing)
