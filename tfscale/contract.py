"""What the parent (runner, launchers) and the worker process must agree on, defined once. Pure: no TensorFlow.

- the tasks of a config: one `Task` per process (a single-process config is a cluster of one task);
- the worker's command line (`worker_argv`) and where each task writes its result and progress files;
- the environment variables the launchers set and the worker reads;
- the shape of a result file: `{"ok": true, "measurements": {...}}` or `{"ok": false, "error": "...",
  "error_type": "..."}`.

Both sides import this module; it imports nothing of tfscale's (so no import cycle runs through it).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Environment variables a launcher sets for each task.
PROGRESS_ENV = "TFSCALE_PROGRESS"  # file the task overwrites with the phase it reached ("{task}" is filled in)
RESOLVER_ENV = "TFSCALE_RESOLVER"  # "slurm": build the cluster from Slurm's task layout instead of TF_CONFIG
PORT_BASE_ENV = "TFSCALE_PORT_BASE"  # first port of each node's tasks under Slurm
TF_CONFIG_ENV = "TF_CONFIG"  # TensorFlow's own: the cluster and this task, as JSON (tf_config)
# Tests only: "<config_id>=<seconds>" makes every training step of that config sleep so long first (a planted
# slowdown that tfscale compare must flag); never set by tfscale itself.
TEST_SLEEP_ENV = "TFSCALE_TEST_SLEEP"
RESOLVER_SLURM = "slurm"
DEFAULT_PORT_BASE = 8888  # SlurmClusterResolver's own default

TASK_FIELD = "{task}"  # in a result or progress path: replaced by the task's name ("worker-1") in the worker
RESULT_SUFFIX = ".result.json"
PROGRESS_SUFFIX = ".progress"

# What a worker process is asked to do (`python -m tfscale.worker ...`): train a config (or its rank's part), run
# the all-reduce sweep of a config's topology, describe TensorFlow's view of this host, or check user models.
TRAIN = "train"
COMMBENCH = "commbench"
ENV = "env"
CHECK_MODELS = "check-models"


@dataclass(frozen=True)
class Task:
    job: str  # "worker", "ps" or "chief" (TF_CONFIG job names)
    index: int
    trainer: bool  # runs the training loop and writes a result part; servers are stopped when trainers finish

    @property
    def name(self) -> str:
        return task_name(self.job, self.index)


def task_name(job: str, index: int) -> str:
    """'worker-1', 'ps-0', 'chief-0': how files, logs and reasons name a task."""
    return f"{job}-{index}"


SINGLE = Task("worker", 0, True)  # the one task of a single-process config
CHIEF = Task("chief", 0, True)  # ParameterServer's coordinator: its result part tells the servers to stop


def cluster_tasks(strategy: str, workers: int, num_ps: int | None) -> list[Task]:
    """MultiWorkerMirrored: `workers` trainer workers. ParameterServer: a trainer chief (the coordinator),
    `workers` server workers and `num_ps` parameter servers."""
    if strategy == "multi_worker_mirrored":
        return [Task("worker", i, True) for i in range(workers)]
    if strategy == "parameter_server":
        return (
            [CHIEF]
            + [Task("worker", i, False) for i in range(workers)]
            + [Task("ps", i, False) for i in range(num_ps or 1)]
        )
    raise ValueError(f"{strategy} is not a cluster strategy")


def tasks_of(spec) -> list[Task]:
    """Every process of a config (a RunSpec): its cluster's tasks, or the one task of a single-process config."""
    if spec.cluster:
        return cluster_tasks(spec.strategy, spec.nodes, spec.num_ps)
    return [SINGLE]


def job_counts(tasks: list[Task]) -> dict[str, int]:
    """Tasks per TF job, e.g. {"chief": 1, "worker": 2, "ps": 1}: SlurmClusterResolver's `jobs` argument."""
    counts: dict[str, int] = {}
    for task in tasks:
        counts[task.job] = counts.get(task.job, 0) + 1
    return counts


def node_of(task: Task, nodes: int) -> int:
    """The node a task runs on: worker i on node i; the ParameterServer chief on node 0, server j on j mod nodes."""
    return task.index % nodes if task.job in ("worker", "ps") else 0


def tf_config(cluster: dict[str, list[str]], task: Task) -> str:
    """TF_CONFIG of `task` in `cluster` (job -> addresses)."""
    return json.dumps({"cluster": cluster, "task": {"type": task.job, "index": task.index}})


def task_file(folder: str | Path, prefix: str, suffix: str, task: Task | None = None) -> str:
    """`<folder>/<prefix>.<task>.<suffix>`; without a task, the template with TASK_FIELD for the worker to fill."""
    return f"{Path(folder) / prefix}.{task.name if task else TASK_FIELD}{suffix}"


def fill_task(template: str, task_name: str) -> str:
    """A path template with this process's task name in place of TASK_FIELD."""
    return template.replace(TASK_FIELD, task_name)


def worker_argv(
    result_path: str | Path, mode: str = TRAIN, input_path: str | Path | None = None, python: str | None = None
) -> list[str]:
    """The worker's command line, the only place it is built. `input_path`: the spec file (TRAIN, COMMBENCH) or
    the list of user models (CHECK_MODELS); `result_path`: a path, or a template with TASK_FIELD."""
    argv = [python or sys.executable, "-m", "tfscale.worker"]
    if mode == TRAIN:
        argv += ["--spec", str(input_path)]
    elif mode == COMMBENCH:
        argv += ["--commbench", "--spec", str(input_path)]
    elif mode == ENV:
        argv += ["--env"]
    elif mode == CHECK_MODELS:
        argv += ["--check-models", str(input_path)]
    else:
        raise ValueError(f"unknown worker mode {mode!r}")
    return [*argv, "--result", str(result_path)]


def ok_result(measurements: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "measurements": measurements}


def error_result(error: str, error_type: str) -> dict[str, Any]:
    return {"ok": False, "error": error, "error_type": error_type}


def result_ok(result: dict[str, Any] | None) -> bool:
    return bool(result and result.get("ok"))


def result_error(result: dict[str, Any] | None) -> str | None:
    """The one-line error a failed task wrote, or None."""
    return result.get("error") or None if result and not result.get("ok") else None
