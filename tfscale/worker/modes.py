"""The worker's modes: how a config trains on its devices. Each mode builds a `Trainer` with one signature,
`trainer(spec, task_name)`; one flow (`run_training`) times it, adds the requested add-ons and collects the record
columns. The plan-side table of modes and the add-ons each supports is `tfscale.axes.MODES` (a test checks that
both name the same modes); `tfscale plan` refuses an add-on a mode does not support.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfscale import metrics as m
from tfscale.axes import mode_of
from tfscale.contract import ENERGY_GPUS_ENV, TEST_SLEEP_ENV, VISIBLE_GPUS_ENV, first_trainer, parse_visible_gpus
from tfscale.gpus import gpu_uuids, nvml_uuids
from tfscale.host.envinfo import cpu_set_text
from tfscale.suite.spec import RunSpec
from tfscale.worker.cluster import report_progress
from tfscale.worker.energy import EnergyMeter
from tfscale.worker.flops import flops_columns
from tfscale.worker.loop import LoopResult, Plan, run_timed_loop
from tfscale.worker.memory import PeakMemory, peak_memory, reset_peaks
from tfscale.worker.trainer import Trainer, variable_bytes


def _synchronous(spec: RunSpec, task_name: str) -> Trainer:
    from tfscale.worker.synchronous import trainer

    return trainer(spec, task_name)


def _parameter_server(spec: RunSpec, task_name: str) -> Trainer:
    from tfscale.worker.ps import trainer

    return trainer(spec, task_name)


def _pipeline(spec: RunSpec, task_name: str) -> Trainer:
    from tfscale.worker.pipeline import trainer

    return trainer(spec, task_name)


def _tensor(spec: RunSpec, task_name: str) -> Trainer:
    from tfscale.worker.tensor import trainer

    return trainer(spec, task_name)


# Late imports per mode: each loads only what it uses (DTensor, the coordinator).
MODES: dict[str, Callable[[RunSpec, str], Trainer]] = {
    "synchronous": _synchronous,
    "parameter_server": _parameter_server,
    "pipeline": _pipeline,
    "tensor": _tensor,
}


def run_training(spec: RunSpec, task_name: str) -> dict[str, Any]:
    """Run one config (or this rank's part of it) in its mode and return its measurements (record columns)."""
    trainer = MODES[mode_of(spec.strategy, spec.parallelism)](spec, task_name)
    trainer.step = planted_sleep(spec.config_id, trainer.step)

    meter = EnergyMeter(spec.device, not spec.cluster, energy_gpu_uuids() if spec.device == "gpu" else [])

    def start_timing() -> None:
        if trainer.start_timing is not None:
            trainer.start_timing()
        reset_peaks(spec.device)  # the peak of the timed steps, not of warm-up's autotuning
        meter.start()

    loop = run_timed_loop(
        trainer.step,
        plan=Plan.of(spec),
        sync=trainer.sync,
        how=trainer.how,
        on_window=report_progress,
        start_timing=start_timing,
        agree=trainer.agree,
        after_window=trainer.after_window,
    )
    energy = meter.columns()  # the counters' second reading: right after the timed windows
    peak = peak_memory(spec.device)  # before the breakdown and profiling steps below add their own
    if spec.profile and spec.extra.get("trace_dir"):
        from tfscale.worker.trace import profile_steps

        logdir = Path(spec.extra["trace_dir"]) / task_name
        loop.extra.update(profile_steps(trainer.step, trainer.sync, spec.profile_steps, logdir, trainer.collectives))
    if trainer.columns is not None:
        loop.extra.update(trainer.columns(loop))
    record = measurements(spec, loop, trainer, peak) | energy
    if task_name != first_trainer(spec).name or spec.timing_only:  # every rank would count the same graph; the
        return record  # merge keeps rank 0's. A later process of a config: its record keeps repeat 0's
    # Last: it builds a copy of the model on the CPU, which must not count in the memory figures read above.
    return record | flops_columns(spec, trainer.replicas)


def own_gpu_uuids() -> list[str]:
    """NVML UUIDs of the GPUs this process was given (its CUDA_VISIBLE_DEVICES; CUDA numbers them in PCI order,
    as NVML does, because the worker set CUDA_DEVICE_ORDER)."""
    return gpu_uuids(parse_visible_gpus(os.environ.get(VISIBLE_GPUS_ENV)), nvml_uuids())


def energy_gpu_uuids() -> list[str]:
    """The GPUs whose energy this trainer reads: those the launcher named (ENERGY_GPUS_ENV: a ParameterServer
    chief reads its workers'), else its own."""
    named = os.environ.get(ENERGY_GPUS_ENV)
    return gpu_uuids(parse_visible_gpus(named), nvml_uuids()) if named else own_gpu_uuids()


def planted_sleep(config_id: str, step: Callable[[], Any]) -> Callable[[], Any]:
    """`step`, or with TEST_SLEEP_ENV naming this config, `step` after a sleep (tests plant a slowdown with it)."""
    planted = os.environ.get(TEST_SLEEP_ENV, "")
    name, _, seconds = planted.partition("=")
    if not planted or name != config_id:
        return step
    pause = float(seconds)

    def slowed() -> Any:
        time.sleep(pause)
        return step()

    return slowed


def measurements(spec: RunSpec, loop: LoopResult, trainer: Trainer, peak: PeakMemory) -> dict[str, Any]:
    """The record columns the worker measured: the common ones, then the mode's (loop.extra) over them."""
    import tensorflow as tf

    from tfscale.measures.merge import precision_columns, step_stats_columns
    from tfscale.stats.core import StepStats
    from tfscale.worker.memory import host_rss_peak_bytes

    stats = StepStats.from_samples(loop.samples_s)
    # Synchronous strategies: global batch / median step. ParameterServer reports its completed examples itself.
    throughput = loop.extra.get(m.THROUGHPUT_EXAMPLES_PER_S, spec.global_batch_size / stats.median)
    model = trainer.workload.model
    return (
        step_stats_columns(stats)
        | precision_columns(loop.samples_s, spec.target_ci)
        | {
            m.REPLICAS: trainer.replicas,
            m.DEVICE_KIND: spec.device_kind,
            m.PARAMS: int(model.count_params()),
            m.GRAD_BYTES: variable_bytes(model.trainable_variables),
            # data parallelism: every device holds every weight (model-parallel modes overwrite this from loop.extra)
            m.PARAM_BYTES_PER_DEVICE: variable_bytes(model.weights),
            m.TIMED_STEPS: loop.timed_steps,
            m.WINDOW_STEPS: loop.window_steps,
            m.WARMUP_STEPS: loop.warmup_steps,
            m.WARMUP_STOP: loop.warmup_stop,
            m.MEASURE_STOP: loop.measure_stop,
            m.FIRST_STEP_S: loop.first_step_s,
            m.THROUGHPUT_EXAMPLES_PER_S: throughput,
            m.THROUGHPUT_PER_REPLICA_EXAMPLES_PER_S: throughput / trainer.replicas,
            m.PEAK_MEMORY_BYTES: peak.bytes,
            m.MEMORY_KIND: peak.kind,
            m.PEAK_MEMORY_DEVICE: peak.device,
            m.RANK_CPU_AFFINITY: [cpu_set_text(os.sched_getaffinity(0))],
            m.RANK_GPU_UUIDS: [own_gpu_uuids() if spec.device == "gpu" else []],
            m.HOST_RSS_PEAK_BYTES: host_rss_peak_bytes(),
            m.FINAL_LOSS: loop.final_loss,
            m.STEP_TIMES_S: loop.samples_s,
            m.TIMING: loop.timing,
            m.HOST: socket.gethostname(),
            m.TF_VERSION: tf.version.VERSION,
        }
        | loop.extra
    )
