"""ParameterServerStrategy: the chief runs a ClusterCoordinator that schedules steps on the workers.

Steps are asynchronous: each scheduled closure runs one step of `per-worker batch` examples on whichever worker is
free. A timed "step" is one closure per worker (so its examples equal the global batch, as in synchronous
strategies): a window schedules window_steps x workers closures and ends when `coordinator.join()` returns, i.e.
when every one of them has completed. Completed steps are counted here, not read from `optimizer.iterations`
(Keras 3 miscounted under PS: 38 after 50 scheduled steps).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from tfscale import metrics as m
from tfscale.measures.inputs import input_columns
from tfscale.measures.merge import counts_from_positions, parameter_server_ranks
from tfscale.stats.core import median
from tfscale.suite.spec import RunSpec
from tfscale.worker.cluster import report_progress
from tfscale.worker.data import synthetic_dataset
from tfscale.worker.input import SOURCE_SYNTHETIC, source, time_input
from tfscale.worker.loop import LoopResult, loss_scale, make_gradients, make_replica_step
from tfscale.worker.synchronous import build
from tfscale.worker.timing import time_calls
from tfscale.worker.trainer import Trainer

SYNC_HOW = "coordinator.join(): every scheduled closure completed"


def trainer(spec: RunSpec, task_name: str) -> Trainer:
    """The chief's coordinator: a step schedules one closure per worker; a window ends with coordinator.join()."""
    chief = Chief(spec)
    # one replica per worker: the coordinator's strategy reports its own view of replicas
    return Trainer(
        chief.step,
        chief.sync,
        SYNC_HOW,
        chief.built.workload,
        chief.built.devices,
        spec.replicas,
        collectives=False,
        start_timing=chief.start_timing,
        columns=chief.columns,
    )


class Chief:
    """The ParameterServer chief's side of the timed loop: its coordinator, the per-worker datasets, the closures
    scheduled (each returns its loss and its position in its worker's iterator) and the record columns."""

    def __init__(self, spec: RunSpec) -> None:
        self.spec = spec
        self.built = built = build(spec)
        self.workers = workers = spec.nodes
        self.per_worker_batch = spec.global_batch_size // workers
        self.coordinator = tf.distribute.coordinator.ClusterCoordinator(built.strategy)
        gradients = make_gradients(built.workload, self.per_worker_batch, spec.jit, loss_scale(spec))
        replica_step = make_replica_step(gradients, built.optimizer, built.workload.model.trainable_variables)
        self.files = source(spec, built.workload, self.per_worker_batch)
        # TF gives every ParameterServer worker input pipeline 0 of 1 (each reads all files, in its own shuffled
        # order); num_replicas_in_sync = workers makes get_per_replica_batch_size(global batch) the per-worker batch.
        self.context = tf.distribute.InputContext(1, 0, workers)

        @tf.function
        def worker_step(per_worker_iterator):
            (x, y), position = next(per_worker_iterator)
            return built.strategy.run(replica_step, args=(x, y)), position

        @tf.function
        def iterator_ready(per_worker_iterator):
            # Reads nothing: a closure resolves its arguments on its worker first, so this one waits until the
            # iterator exists there (create_per_worker_dataset builds it asynchronously, cluster_coordinator.py:
            # Closure.execute_on -> _maybe_rebuild_remote_values), keeping that out of the first timed window.
            del per_worker_iterator
            return tf.constant(0)

        @tf.function
        def memory_step(per_worker_iterator):
            x, y = next(per_worker_iterator)
            return built.strategy.run(replica_step, args=(x, y))

        self.worker_step, self.iterator_ready, self.memory_step = worker_step, iterator_ready, memory_step
        self.iterator = iter(self.coordinator.create_per_worker_dataset(self.dataset_fn))
        self.values: list = []

    def examples(self) -> tf.data.Dataset:
        if self.files is None:
            return synthetic_dataset(self.built.workload, self.per_worker_batch, self.spec.seed)
        return self.files.fn(self.context)

    def dataset_fn(self):
        # Each element carries its position in the worker's own iterator: see merge.counts_from_positions.
        return tf.data.Dataset.zip((self.examples(), tf.data.Dataset.counter()))

    def step(self) -> None:
        self.values += [self.coordinator.schedule(self.worker_step, args=(self.iterator,)) for _ in range(self.workers)]

    def sync(self, _) -> None:
        self.coordinator.join()  # raises if a closure failed

    def start_timing(self) -> None:
        self.iterator = iter(self.coordinator.create_per_worker_dataset(self.dataset_fn))  # positions restart at 0
        self.values = []
        for _ in range(self.workers):  # idle workers each take one: each waits for its own iterator
            self.coordinator.schedule(self.iterator_ready, args=(self.iterator,))
        self.coordinator.join()

    def columns(self, loop: LoopResult) -> dict[str, Any]:
        # Fetched once after the last window: fetching after every window slowed the following windows here
        # (16.1 vs 13.6 ms per step, mlp/tiny with 2 workers; the counter itself cost nothing measurable).
        positions = [int(v.fetch()[1]) for v in self.values]
        expected = loop.timed_steps * self.workers
        if len(positions) != expected:
            raise RuntimeError(f"ParameterServer: {len(positions)} of {expected} scheduled steps completed")
        counts = counts_from_positions(positions, self.workers)
        timed_s = sum(loop.samples_s) * loop.window_steps
        extra = parameter_server_ranks(counts, self.per_worker_batch, timed_s)
        extra |= {m.TIMING: self.timing_text(loop, len(positions)), m.FINAL_LOSS: float(self.values[-1].fetch()[0])}
        if self.files is None:
            extra[m.DATA_SOURCE] = SOURCE_SYNTHETIC
        else:
            extra |= self.files.columns
            if self.files.measured:
                extra |= self.input_figures(loop, extra[m.THROUGHPUT_EXAMPLES_PER_S])
        if self.spec.comm_breakdown and not self.spec.timing_only:
            extra |= pull_and_push(self.coordinator, self.built, self.workers, self.spec.comm_steps)
        return extra

    def timing_text(self, loop: LoopResult, completed: int) -> str:
        return (
            f"time.perf_counter over {len(loop.samples_s)} windows, each scheduling {loop.window_steps} x "
            f"{self.workers} closures (one per worker per step) on the ClusterCoordinator and ended by "
            f"coordinator.join(); {completed} completed closures counted; {loop.warmup_steps} warm-up round(s) "
            f"untimed ({loop.warmup_stop}); stopped: {loop.measure_stop}; "
            "throughput = examples completed by all workers / timed seconds; rank_* are per-worker step counts "
            "recovered from per-worker iterator positions, largest first (not tied to task indices)"
        )

    def input_figures(self, loop: LoopResult, throughput: float) -> dict[str, Any]:
        """measures.inputs' figures: rounds fed one pipeline batch held in memory on every worker, beside the timed
        ones; the pipeline alone drained on the chief (one worker's pipeline, times the workers)."""
        files, workers = self.files, self.workers
        memory = iter(self.coordinator.create_per_worker_dataset(lambda: files.in_memory(self.context)))

        def memory_round() -> None:
            for _ in range(workers):
                self.coordinator.schedule(self.memory_step, args=(memory,))

        samples, one_worker = time_input(memory_round, self.sync, loop, files.fn(self.context), self.per_worker_batch)
        found = input_columns(loop.samples_s, samples, one_worker * workers, throughput, loop.window_steps)
        found[m.INPUT_PIPELINE] = files.columns[m.INPUT_PIPELINE] + (
            f"; input_throughput_examples_per_s: one worker's pipeline drained on the chief, x {workers} workers"
        )
        return found


PULL_PUSH_METHOD = (
    "parameter_server: medians of {n} rounds of one closure per worker, each round ended by coordinator.join(); "
    "pull = the worker reads every trainable variable from the parameter servers (tf.reduce_sum of each on the "
    "worker, so the whole tensor crosses); push = the worker applies zero gradients made on the worker through "
    "the optimizer, so gradient-sized tensors cross to the servers and the servers run the update; both include "
    "the closure's dispatch, which a training step pays too"
)


def pull_and_push(coordinator, built, workers: int, rounds: int) -> dict:
    """Time moving the variables to the workers and gradient-sized updates back to the servers."""
    variables = built.workload.model.trainable_variables

    @tf.function
    def pull():
        return tf.add_n([tf.reduce_sum(tf.cast(v, tf.float32)) for v in variables])

    def push_replica():
        built.optimizer.apply_gradients(zip([tf.zeros(v.shape, v.dtype) for v in variables], variables, strict=True))
        return tf.constant(0.0)

    @tf.function
    def push():
        return built.strategy.run(push_replica)

    def median_round(fn) -> float:
        def schedule() -> None:
            for _ in range(workers):
                coordinator.schedule(fn)

        # the first round traces and is not timed
        return median(time_calls(schedule, lambda _: coordinator.join(), samples=rounds, warmup=1).samples_s)

    report_progress("timing pull and push")
    return {
        m.COMM_TIME_PULL_S: median_round(pull),
        m.COMM_TIME_PUSH_S: median_round(push),
        m.COMM_METHOD: PULL_PUSH_METHOD.format(n=rounds),
    }
