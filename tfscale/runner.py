"""Parent side of a sweep: for each spec, launch a worker, watch it, turn its result into a record, store it.

Never imports TensorFlow. A config that fails or times out becomes a record with its reason and last log lines,
and the sweep goes on.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfscale import metrics as m
from tfscale._version import __version__
from tfscale.launch import ProcessOutcome, run_worker
from tfscale.plan import Plan
from tfscale.spec import RunSpec
from tfscale.store import ENV_FILE, LOGS_DIR, RECORDS_FILE, append_record, run_dir, write_json_atomic

LOG_TAIL_LINES = 20
SPEC_FIELDS = (m.CONFIG_ID, m.SUITE, m.DEVICE, m.MODEL, m.MODEL_SIZE, m.STRATEGY, m.CROSS_DEVICE_OPS, m.NODES,
               m.DEVICES_PER_NODE, m.PARALLELISM, m.BATCH_SIZE, m.BATCH_POLICY, m.PRECISION, m.JIT, m.OPTIMIZER,
               m.WARMUP_STEPS, m.WINDOW_STEPS, m.SEED)


@dataclass
class RunResult:
    run_dir: Path
    records: list[dict[str, Any]] = field(default_factory=list)


def default_run_id() -> str:
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def base_record(spec: RunSpec, run_id: str) -> dict[str, Any]:
    """The record columns known before the worker runs (the plan's view of the config)."""
    record: dict[str, Any] = dict.fromkeys(m.RECORD_COLUMNS)  # every column, null until measured
    record.update({name: getattr(spec, name) for name in SPEC_FIELDS})
    record.update({
        m.RUN_ID: run_id, m.DEVICES: spec.devices, m.REPLICAS: spec.replicas, m.DEVICE_KIND: spec.device_kind,
        m.GLOBAL_BATCH_SIZE: spec.global_batch_size, m.TFSCALE_VERSION: __version__,
    })
    record.pop(m.SCHEMA_VERSION)  # the store stamps it
    return record


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def failure_reason(outcome: ProcessOutcome, result: dict[str, Any] | None, timeout_s: float) -> str:
    if outcome.timed_out:
        return f"timed out after {timeout_s:g} s (process tree killed)"
    if result is not None and result.get("error"):
        return result["error"]
    code = outcome.returncode
    if code is not None and code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"worker exited with code {code} without a result"


def _read_result(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def run_config(spec: RunSpec, folder: Path, run_id: str) -> dict[str, Any]:
    """Run one config in a fresh worker process; return its record (ok, failed or timeout)."""
    work = folder / "work"
    work.mkdir(parents=True, exist_ok=True)
    spec_path, result_path = work / f"{spec.config_id}.spec.json", work / f"{spec.config_id}.result.json"
    log_path = folder / LOGS_DIR / f"{spec.config_id}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    result_path.unlink(missing_ok=True)
    write_json_atomic(spec_path, spec.to_dict())

    record = base_record(spec, run_id) | {m.STARTED_AT: _now(), m.LOG_PATH: str(log_path.relative_to(folder))}
    argv = [sys.executable, "-m", "tfscale.worker", "--spec", str(spec_path), "--result", str(result_path)]
    try:
        outcome = run_worker(argv, log_path, spec.timeout_s)
        result = _read_result(result_path)
    finally:
        spec_path.unlink(missing_ok=True)
        result_path.unlink(missing_ok=True)
    record.update({m.FINISHED_AT: _now(), m.DURATION_S: round(outcome.duration_s, 3)})
    if not outcome.timed_out and outcome.returncode == 0 and result and result.get("ok"):
        return record | result["measurements"] | {m.STATUS: m.STATUS_OK}
    status = m.STATUS_TIMEOUT if outcome.timed_out else m.STATUS_FAILED
    return record | {m.STATUS: status, m.REASON: failure_reason(outcome, result, spec.timeout_s),
                     m.LOG_TAIL: log_tail(log_path)}


def run_plan(plan: Plan, results_dir: str | Path, run_id: str, env: dict[str, Any] | None = None,
             on_record: Callable[[int, dict[str, Any]], None] | None = None) -> RunResult:
    """Run every spec of the plan in order, appending each record to the run's records.jsonl."""
    folder = run_dir(results_dir, plan.suite.name, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    if env is not None:
        write_json_atomic(folder / ENV_FILE, env)
    outcome = RunResult(folder)
    for index, spec in enumerate(plan.specs):
        record = run_config(spec, folder, run_id)
        append_record(folder / RECORDS_FILE, record)
        outcome.records.append(record)
        if on_record is not None:
            on_record(index, record)
    _remove_if_empty(folder / "work")
    return outcome


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.rmdir()
