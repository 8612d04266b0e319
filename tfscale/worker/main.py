"""Worker entry point: one config in one fresh process.

Reads the spec file, sets up devices before TensorFlow initialises, builds strategy, model and data, runs the
timed loop and writes a result file: {"ok": true, "measurements": {...}} or {"ok": false, "error": ...}.
Exit code 0 on success, 1 on a failure it could describe.
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import json
import os
import re
import signal
import sys
import traceback
from pathlib import Path
from typing import Any

from tfscale import contract
from tfscale.store.records import write_json_atomic
from tfscale.suite.spec import RunSpec
from tfscale.worker.cluster import cluster_task, is_server, serve, set_task, slurm_environment


def prepare_environment(device: str, spec: RunSpec | None = None) -> None:
    """Environment TensorFlow reads at import time: which GPUs it sees, in which order; and, for a rank started
    by srun, its cluster (TF_CONFIG) and its share of the step's GPUs (cluster.slurm_environment). Then TensorFlow
    is imported (import_tensorflow)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # keep INFO chatter out of the config's log
    if device == "cpu":
        os.environ[contract.VISIBLE_GPUS_ENV] = contract.NO_GPUS  # a CPU suite never initialises (or measures) a GPU
    else:
        os.environ[contract.GPU_ORDER_ENV] = contract.GPU_ORDER  # GPU indices as NVML and the launchers number them
    if spec is not None and os.environ.get(contract.RESOLVER_ENV) == contract.RESOLVER_SLURM:
        from tfscale.gpus import host_gpus

        os.environ.update(slurm_environment(spec, dict(os.environ), host_gpus() if device == "gpu" else None))
    if device == "gpu" and spec is not None and spec.parallelism in ("tensor", "hybrid"):
        # DTensor picks its GPU all-reduce when it starts: without this its collectives run without NCCL.
        os.environ.setdefault("DTENSOR_GPU_USE_NCCL_COMMUNICATION", "1")
    import_tensorflow()  # now that its environment is set


def import_tensorflow() -> None:
    """Import TensorFlow (and Keras with it) with pandas hidden: Keras imports pandas, if installed, only to accept
    DataFrames in `fit`, which no worker calls; skipping it took 0.35 s off the median import here (0.58 s of self
    time in `python -X importtime`; tests/benchmarks/bench_worker_start.py). Once TensorFlow is in, pandas imports
    as usual (a user model may use it)."""
    if "pandas" in sys.modules:  # already imported (a test calling the worker in-process): nothing to save
        import tensorflow  # noqa: F401

        return
    sys.modules["pandas"] = None  # type: ignore[assignment]  # `import pandas` raises ImportError meanwhile
    try:
        import tensorflow  # noqa: F401
    finally:
        del sys.modules["pandas"]


def run_commbench_config(spec: RunSpec) -> dict[str, Any]:
    """The all-reduce size sweep on this spec's strategy (tfscale.worker.commbench)."""
    from tfscale.worker.commbench import METHOD, run_commbench
    from tfscale.worker.synchronous import devices_and_strategy

    _, strategy = devices_and_strategy(spec)
    return {
        "rows": run_commbench(spec, strategy),
        "replicas": strategy.num_replicas_in_sync,
        "method": METHOD.format(n=spec.steps, w=spec.warmup_steps),
    }


def run_config(spec: RunSpec, task_name: str = contract.SINGLE.name) -> dict[str, Any]:
    """Run one config (or this rank's part of it) in its mode (tfscale.worker.modes); its measurements."""
    from tfscale.worker.modes import run_training

    return run_training(spec, task_name)


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


PR_SET_PDEATHSIG, PR_SET_NAME = 1, 15  # linux/prctl.h
TEARDOWN_NEEDED = [False]  # this process is a cluster task: it must exit through TF's teardown (worker.process)


def prctl(option: int, value: int | bytes) -> bool:
    """prctl(2) through libc; False where there is none (not Linux)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value)
    except (OSError, AttributeError):
        return False
    return True


def die_with_parent(environ: dict[str, str] | os._Environ = os.environ) -> None:
    """When tfscale started this process (contract.PARENT_PID_ENV), have the kernel SIGKILL it as soon as tfscale
    dies, whatever kills tfscale; and exit now if tfscale died before this call (the process was re-parented).
    Ranks started by srun are slurmstepd's children and carry no parent pid: cancelling the step ends them."""
    parent = environ.get(contract.PARENT_PID_ENV)
    if not parent:
        return
    if not prctl(PR_SET_PDEATHSIG, signal.SIGKILL):  # not Linux: the parent's own cleanup is all there is
        return
    if os.getppid() != int(parent):
        os._exit(1)


def main(argv: list[str] | None = None) -> int:
    die_with_parent()
    # A crash inside TensorFlow or gRPC (SIGSEGV, SIGABRT) then leaves every thread's Python stack in the task's log.
    faulthandler.enable()
    parser = argparse.ArgumentParser(prog="python -m tfscale.worker")
    parser.add_argument("--spec", help="RunSpec JSON file")
    parser.add_argument("--result", help="where to write the result JSON; {task} is replaced by the cluster task")
    parser.add_argument("--env", action="store_true", help="write TensorFlow's view of this host to --result")
    parser.add_argument("--commbench", action="store_true", help="run the all-reduce size sweep, not training")
    parser.add_argument("--check-models", help="JSON file listing user models to import and build; errors to --result")
    parser.add_argument("--peak", help="JSON file {counts, dtypes}: the CPU's peak FLOP/s per logical device")
    args = parser.parse_args(argv)

    if args.env:
        prepare_environment("gpu")
        from tfscale.worker.envinfo import tensorflow_env

        write_json_atomic(args.result, tensorflow_env())
        return 0
    if args.peak:
        prepare_environment("cpu")
        from tfscale.worker.peak import measure

        request = json.loads(Path(args.peak).read_text())
        write_json_atomic(args.result, measure(request["counts"], request["dtypes"]))
        return 0
    if args.check_models:
        prepare_environment("cpu")
        write_json_atomic(args.result, check_models(json.loads(Path(args.check_models).read_text())))
        return 0
    if not (args.spec and args.result):
        parser.error("--spec and --result are required")
    with open(args.spec, encoding="utf-8") as f:
        spec = RunSpec.from_dict(json.load(f))
    prepare_environment(spec.device, spec)
    TEARDOWN_NEEDED[0] = spec.cluster
    print(f"tfscale worker: config {spec.config_id} pid {os.getpid()}", flush=True)
    task_name = contract.SINGLE.name
    result_path = contract.fill_task(args.result, task_name)
    try:
        task = cluster_task(spec)
        if task is not None:
            task_name = contract.task_name(*task)
            result_path = contract.fill_task(args.result, task_name)
        set_task(task_name)
        if is_server(spec, task):
            serve(spec, stop_file=contract.fill_task(args.result, contract.CHIEF.name))
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
