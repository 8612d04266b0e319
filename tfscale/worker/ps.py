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
from tfscale.inputs import input_columns
from tfscale.merge import counts_from_positions, parameter_server_ranks
from tfscale.spec import RunSpec
from tfscale.stats import median
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
    built = build(spec)
    workers = spec.nodes
    per_worker_batch = spec.global_batch_size // workers
    coordinator = tf.distribute.coordinator.ClusterCoordinator(built.strategy)
    gradients = make_gradients(built.workload, per_worker_batch, spec.jit, loss_scale(spec))
    replica_step = make_replica_step(gradients, built.optimizer, built.workload.model.trainable_variables)

    files = source(spec, built.workload, per_worker_batch)
    # TF gives every ParameterServer worker input pipeline 0 of 1 (each reads all files, in its own shuffled order);
    # num_replicas_in_sync = workers makes get_per_replica_batch_size(global batch) the per-worker batch.
    context = tf.distribute.InputContext(1, 0, workers)

    def examples() -> tf.data.Dataset:
        return synthetic_dataset(built.workload, per_worker_batch, spec.seed) if files is None else files.fn(context)

    def dataset_fn():
        # Each element carries its position in the worker's own iterator: see merge.counts_from_positions.
        return tf.data.Dataset.zip((examples(), tf.data.Dataset.counter()))

    @tf.function
    def worker_step(per_worker_iterator):
        (x, y), position = next(per_worker_iterator)
        return built.strategy.run(replica_step, args=(x, y)), position

    state = {"iterator": iter(coordinator.create_per_worker_dataset(dataset_fn)), "values": []}

    def step() -> None:
        state["values"] += [coordinator.schedule(worker_step, args=(state["iterator"],)) for _ in range(workers)]

    def sync(_) -> None:
        coordinator.join()  # raises if a closure failed

    @tf.function
    def iterator_ready(per_worker_iterator):
        # Reads nothing: a closure resolves its arguments on its worker first, so this one waits until the
        # iterator exists there (create_per_worker_dataset builds it asynchronously, cluster_coordinator.py:
        # Closure.execute_on -> _maybe_rebuild_remote_values), keeping that out of the first timed window.
        del per_worker_iterator
        return tf.constant(0)

    def start_timing() -> None:
        state["iterator"] = iter(coordinator.create_per_worker_dataset(dataset_fn))  # positions restart at 0
        state["values"] = []
        for _ in range(workers):  # idle workers each take one: each waits for its own iterator
            coordinator.schedule(iterator_ready, args=(state["iterator"],))
        coordinator.join()

    def columns(loop: LoopResult) -> dict[str, Any]:
        # Fetched once after the last window: fetching after every window slowed the following windows here
        # (16.1 vs 13.6 ms per step, mlp/tiny with 2 workers; the counter itself cost nothing measurable).
        values = state["values"]
        positions = [int(v.fetch()[1]) for v in values]
        expected = loop.timed_steps * workers
        if len(positions) != expected:
            raise RuntimeError(f"ParameterServer: {len(positions)} of {expected} scheduled steps completed")
        counts = counts_from_positions(positions, workers)
        timed_s = sum(loop.samples_s) * loop.window_steps
        windows = len(loop.samples_s)
        timing = (
            f"time.perf_counter over {windows} windows, each scheduling {loop.window_steps} x {workers} "
            "closures (one per worker per step) on the ClusterCoordinator and ended by coordinator.join(); "
            f"{len(positions)} completed closures counted; {loop.warmup_steps} warm-up round(s) untimed "
            f"({loop.warmup_stop}); stopped: {loop.measure_stop}; "
            "throughput = examples completed by all workers / timed seconds; rank_* are per-worker step counts "
            "recovered from per-worker iterator positions, largest first (not tied to task indices)"
        )
        extra = parameter_server_ranks(counts, per_worker_batch, timed_s)
        extra |= {m.TIMING: timing, m.FINAL_LOSS: float(values[-1].fetch()[0])}
        if files is None:
            extra[m.DATA_SOURCE] = SOURCE_SYNTHETIC
        else:
            extra |= files.columns
            if files.measured:
                extra |= input_figures(loop, extra[m.THROUGHPUT_EXAMPLES_PER_S])
        if spec.comm_breakdown:
            extra |= pull_and_push(coordinator, built, workers, spec.comm_steps)
        return extra

    def input_figures(loop: LoopResult, throughput: float) -> dict[str, Any]:
        """tfscale.inputs' figures: rounds fed one pipeline batch held in memory on every worker, beside the timed
        ones; the pipeline alone drained on the chief (one worker's pipeline, times the workers)."""
        memory = iter(coordinator.create_per_worker_dataset(lambda: files.in_memory(context)))

        def memory_round() -> None:
            for _ in range(workers):
                coordinator.schedule(memory_step, args=(memory,))

        samples, one_worker = time_input(memory_round, sync, loop, files.fn(context), per_worker_batch)
        found = input_columns(loop.samples_s, samples, one_worker * workers, throughput, loop.window_steps)
        found[m.INPUT_PIPELINE] = files.columns[m.INPUT_PIPELINE] + (
            f"; input_throughput_examples_per_s: one worker's pipeline drained on the chief, x {workers} workers"
        )
        return found

    @tf.function
    def memory_step(per_worker_iterator):
        x, y = next(per_worker_iterator)
        return built.strategy.run(replica_step, args=(x, y))

    # one replica per worker: the coordinator's strategy reports its own view of replicas
    return Trainer(
        step,
        sync,
        SYNC_HOW,
        built.workload,
        built.devices,
        spec.replicas,
        collectives=False,
        start_timing=start_timing,
        columns=columns,
    )


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
