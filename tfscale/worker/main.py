"""Worker entry point: one config in one fresh process.

Reads the spec file, sets up devices before TensorFlow initialises, builds strategy, model and data, runs the
timed loop and writes a result file: {"ok": true, "measurements": {...}} or {"ok": false, "error": ...}.
Exit code 0 on success, 1 on a failure it could describe.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import socket
import statistics
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfscale import contract
from tfscale.spec import RunSpec
from tfscale.store import write_json_atomic
from tfscale.worker.cluster import cluster_task, is_server, report_progress, serve, set_task


def _prepare_environment(device: str) -> None:
    """Environment TensorFlow reads at import time."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # keep INFO chatter out of the config's log
    if device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"  # a CPU suite never initialises (or measures) a GPU


@dataclass
class Built:
    """What every strategy's loop starts from: devices, strategy, and model and optimizer made in its scope."""

    devices: list[str]
    strategy: Any
    workload: Any
    optimizer: Any


def devices_and_strategy(spec: RunSpec) -> tuple[list[str], Any]:
    # Late imports: TensorFlow must only load after _prepare_environment and only in the worker.
    from tfscale.worker.devices import configure_devices, device_names
    from tfscale.worker.strategies import build_strategy

    configure_devices(spec.device, spec.devices_per_node)
    if spec.cluster:  # before anything initialises TF's runtime; cluster strategies wait here for their peers
        strategy = build_strategy(spec, [])
        devices = device_names(spec.device)
    else:
        devices = device_names(spec.device)
        strategy = build_strategy(spec, devices)
    report_progress("strategy ready")
    return devices, strategy


def build(spec: RunSpec) -> Built:
    import keras
    import tensorflow as tf

    from tfscale.worker.models import build_workload
    from tfscale.worker.strategies import variable_policy

    devices, strategy = devices_and_strategy(spec)
    keras.mixed_precision.set_global_policy(spec.precision)
    keras.utils.set_random_seed(spec.seed)
    with strategy.scope(), variable_policy(spec):
        workload = build_workload(spec)
        if not workload.model.built:  # subclassed user models create their variables on first call
            workload.model(tf.zeros((1, *workload.input_spec.shape), workload.input_spec.dtype))
        optimizer = _optimizer(spec, keras)
        # MirroredStrategy custom loops fail with a placeholder error unless slots exist before the first step.
        optimizer.build(workload.model.trainable_variables)
    report_progress("model built")
    return Built(devices, strategy, workload, optimizer)


def run_synchronous(spec: RunSpec, built: Built, task_name: str):
    """Synchronous data parallelism (OneDevice, Mirrored, CentralStorage, MultiWorkerMirrored)."""
    from tfscale import metrics as m
    from tfscale.worker.data import synthetic_dataset
    from tfscale.worker.loop import (
        build_train_step,
        host_sync,
        loss_scale,
        make_gradients,
        make_replica_step,
        run_timed_loop,
    )

    global_batch = spec.global_batch_size
    dataset = built.strategy.experimental_distribute_dataset(synthetic_dataset(built.workload, global_batch, spec.seed))
    gradients = make_gradients(built.workload, global_batch, spec.jit, loss_scale(spec))
    replica_step = make_replica_step(gradients, built.optimizer, built.workload.model.trainable_variables)
    iterator = iter(dataset)
    train_step = build_train_step(built.strategy, replica_step, iterator)
    sync, how = host_sync(spec.device, multi_worker=spec.cluster)
    loop = run_timed_loop(
        train_step,
        warmup_steps=spec.warmup_steps,
        steps=spec.steps,
        window_steps=spec.window_steps,
        sync=sync,
        how=how,
        on_window=report_progress,
    )
    if spec.profile and spec.extra.get("trace_dir"):
        from tfscale.worker.trace import profile_steps

        logdir = Path(spec.extra["trace_dir"]) / task_name
        loop.extra.update(profile_steps(train_step, sync, spec.profile_steps, logdir))
    if spec.comm_breakdown and built.strategy.num_replicas_in_sync > 1:
        if spec.jit:
            loop.extra[m.COMM_METHOD] = JIT_NOT_MEASURED
        else:
            loop.extra.update(_communication(spec, built, gradients, iterator, sync, statistics.median(loop.samples_s)))
    return loop


# Seen with TF 2.21 on logical CPUs: the XLA-compiled gradients called from the compute-only step put replica 1's
# call on CPU:0 ("Trying to access resource ... located in device CPU:1 from device CPU:0").
JIT_NOT_MEASURED = (
    "not measured: with jit (XLA) the compute-only step fails on multiple devices (TF placed "
    "replica 1's compiled call on device 0); the communication fields are left empty"
)


def _communication(spec: RunSpec, built: Built, gradients, iterator, sync, fused_s: float) -> dict[str, Any]:
    """Compute-only, split and isolated timings beside the fused step (tfscale.worker.comm)."""
    from tfscale.worker import comm

    variables = built.workload.model.trainable_variables
    samples = comm.measure(built.strategy, gradients, built.optimizer, variables, iterator, spec.comm_steps, sync)
    report_progress("communication timed")
    return comm.figures(samples, fused_s, grad_bytes(variables), built.strategy.num_replicas_in_sync)


def grad_bytes(variables) -> int:
    """Bytes of one full set of gradients: each trainable variable's size x its dtype's size."""
    import tensorflow as tf

    return int(sum(math.prod(v.shape) * tf.as_dtype(v.dtype).size for v in variables))


def run_commbench_config(spec: RunSpec) -> dict[str, Any]:
    """The all-reduce size sweep on this spec's strategy (tfscale.worker.commbench)."""
    from tfscale.worker.commbench import METHOD, run_commbench

    _, strategy = devices_and_strategy(spec)
    return {
        "rows": run_commbench(spec, strategy),
        "replicas": strategy.num_replicas_in_sync,
        "method": METHOD.format(n=spec.steps, w=spec.warmup_steps),
    }


def run_model_parallel(spec: RunSpec) -> dict[str, Any]:
    """Pipeline, tensor or hybrid parallelism: one process, no tf.distribute strategy."""
    import keras

    from tfscale.worker.devices import setup_devices
    from tfscale.worker.loop import host_sync
    from tfscale.worker.models import build_workload

    devices = setup_devices(spec.device, spec.devices_per_node)
    report_progress("devices ready")
    keras.utils.set_random_seed(spec.seed)
    workload = build_workload(spec)
    report_progress("model built")
    sync, how = host_sync(spec.device)
    if spec.parallelism == "pipeline":
        from tfscale.worker.pipeline import run_pipeline

        loop = run_pipeline(spec, workload, devices, lambda: _optimizer(spec, keras), sync, how, report_progress)
    else:
        from tfscale.worker.tensor import run_tensor

        loop = run_tensor(spec, workload, devices, sync, how, report_progress)
    return _measurements(spec, loop, workload, spec.replicas, devices)


def run_config(spec: RunSpec, task_name: str = "worker-0") -> dict[str, Any]:
    """Run one config (or this rank's part of it) and return its measurements (record columns)."""
    if spec.parallelism != "data":
        return run_model_parallel(spec)
    built = build(spec)
    if spec.strategy == "parameter_server":
        from tfscale.worker.ps import run_coordinator

        loop = run_coordinator(spec, built)
        replicas = spec.replicas  # one per worker; the coordinator's strategy reports its own view
    else:
        loop = run_synchronous(spec, built, task_name)
        replicas = built.strategy.num_replicas_in_sync
    return _measurements(spec, loop, built.workload, replicas, built.devices)


def _measurements(spec: RunSpec, loop, workload, replicas: int, devices: list[str]) -> dict[str, Any]:
    """The record columns the worker measured."""
    import tensorflow as tf

    from tfscale import metrics as m
    from tfscale.merge import step_stats_columns
    from tfscale.stats import StepStats
    from tfscale.worker.memory import host_rss_peak_bytes, peak_memory

    stats = StepStats.from_samples(loop.samples_s)
    # Synchronous strategies: global batch / median step. ParameterServer reports its completed examples itself.
    throughput = loop.extra.get(m.THROUGHPUT_EXAMPLES_PER_S, spec.global_batch_size / stats.median)
    peak, memory_kind = peak_memory(spec.device, devices)
    trainable = workload.model.trainable_variables
    return (
        step_stats_columns(stats)
        | {
            m.REPLICAS: replicas,
            m.DEVICE_KIND: spec.device_kind,
            m.PARAMS: int(workload.model.count_params()),
            m.GRAD_BYTES: grad_bytes(trainable),
            # data parallelism: every device holds every weight (model-parallel modes overwrite this from loop.extra)
            m.PARAM_BYTES_PER_DEVICE: grad_bytes(workload.model.weights),
            m.TIMED_STEPS: loop.timed_steps,
            m.FIRST_STEP_S: loop.first_step_s,
            m.THROUGHPUT_EXAMPLES_PER_S: throughput,
            m.THROUGHPUT_PER_REPLICA: throughput / replicas,
            m.PEAK_MEMORY_BYTES: peak,
            m.MEMORY_KIND: memory_kind,
            m.HOST_RSS_PEAK_BYTES: host_rss_peak_bytes(),
            m.FINAL_LOSS: loop.final_loss,
            m.STEP_TIMES_S: loop.samples_s,
            m.TIMING: loop.timing,
            m.HOST: socket.gethostname(),
            m.TF_VERSION: tf.version.VERSION,
        }
        | loop.extra
    )


def _optimizer(spec: RunSpec, keras):
    if spec.optimizer == "adam":
        return keras.optimizers.Adam(1e-3)
    return keras.optimizers.SGD(0.01, momentum=0.9)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_INNER_ERROR = re.compile(r"^\s*(\w+(?:Error|Exception|Exhausted)): (.+)$")
REASON_CHARS = 300


def error_line(error: BaseException) -> str:
    """One line naming the error. TF and Keras wrap the real cause in "in user code:" blocks: use the innermost
    "SomeError: message" line of the text when there is one."""
    lines = [_ANSI.sub("", line) for line in str(error).splitlines() if line.strip()]
    inner = [match for line in lines if (match := _INNER_ERROR.match(line))]
    if inner:
        name, message = inner[-1].group(1), inner[-1].group(2)
        following = lines[lines.index(inner[-1].string) + 1 :]
        if following:  # Keras says where on the error line and why on the next one
            message = f"{message} {following[0].strip()}"
    else:
        name, message = type(error).__name__, lines[0].strip() if lines else ""
    text = f"{name}: {message}".strip().rstrip(":")
    if name == "ResourceExhaustedError" or type(error).__name__ == "ResourceExhaustedError":
        text = "out of memory: " + text  # TF's allocator ran out (OOM when allocating ...)
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 3] + "..."


def check_models(models: list[dict[str, Any]]) -> list[str]:
    """Import and call each user model once (outside any strategy); one error line per model that fails."""
    from tfscale.worker.models import UserModelError, user_workload

    errors = []
    for model in models:
        try:
            user_workload(model["name"], model["entry"], model.get("args", {}), model["suite_dir"])
        except UserModelError as error:
            errors.append(str(error))
        except Exception as error:  # the user's function itself raised
            errors.append(f"models.{model['name']}: {model['entry']} raised {error_line(error)}")
    return errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tfscale.worker")
    parser.add_argument("--spec", help="RunSpec JSON file")
    parser.add_argument("--result", help="where to write the result JSON; {task} is replaced by the cluster task")
    parser.add_argument("--env", action="store_true", help="write TensorFlow's view of this host to --result")
    parser.add_argument("--commbench", action="store_true", help="run the all-reduce size sweep, not training")
    parser.add_argument("--check-models", help="JSON file listing user models to import and build; errors to --result")
    args = parser.parse_args(argv)

    if args.env:
        _prepare_environment("gpu")
        from tfscale.worker.envinfo import tensorflow_env

        write_json_atomic(args.result, tensorflow_env())
        return 0
    if args.check_models:
        _prepare_environment("cpu")
        write_json_atomic(args.result, check_models(json.loads(Path(args.check_models).read_text())))
        return 0
    if not (args.spec and args.result):
        parser.error("--spec and --result are required")
    with open(args.spec, encoding="utf-8") as f:
        spec = RunSpec.from_dict(json.load(f))
    _prepare_environment(spec.device)
    print(f"tfscale worker: config {spec.config_id} pid {os.getpid()}", flush=True)
    task_name = contract.SINGLE.name
    result_path = contract.fill_task(args.result, task_name)
    try:
        task = cluster_task(spec)
        if task is not None:
            task_name = contract.Task(task[0], task[1], True).name
            result_path = contract.fill_task(args.result, task_name)
        set_task(task_name)
        if is_server(spec, task):
            serve(spec, stop_file=contract.fill_task(args.result, contract.Task("chief", 0, True).name))
            return 0
        measurements = run_commbench_config(spec) if args.commbench else run_config(spec, task_name)
    except Exception as error:  # every failure becomes a result the parent can record
        traceback.print_exc()
        write_json_atomic(result_path, contract.error_result(error_line(error), type(error).__name__))
        return 1
    write_json_atomic(result_path, contract.ok_result(measurements))
    print("tfscale worker: done", flush=True)
    sys.stdout.flush()
    return 0
