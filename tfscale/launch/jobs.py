"""From a config to a finished job and back: the job a launcher runs, and the one function that turns any launcher's
outcome into record columns (measurements merged over the trainers, or status and a one-line reason). Parent side:
no TensorFlow."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from tfscale import contract
from tfscale import metrics as m
from tfscale.launch.base import STOPPED_STALL, STOPPED_STARTUP, STOPPED_TIMEOUT, Job, Launcher, Outcome
from tfscale.measures.merge import merge_rank_parts
from tfscale.store.records import LOGS_DIR, WORK_DIR, write_json_atomic
from tfscale.suite.spec import RunSpec

LOG_TAIL_LINES = 20


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def exit_text(returncode: int | None, process: str = "worker") -> str:
    """Why a process ended without a result, from its exit status."""
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        # The kernel's out-of-memory killer sends SIGKILL: say so, since nothing else in the log will.
        hint = (
            " (also what the kernel's out-of-memory killer sends; see dmesg)" if -returncode == signal.SIGKILL else ""
        )
        return f"killed by signal {name}{hint}"
    return f"{process} exited with code {returncode} without a result"


def failure(outcome: Outcome, spec: RunSpec) -> tuple[str, str]:
    """(status, reason) of an outcome that is not ok, in one line, whichever launcher ran it."""
    if outcome.stopped is not None:
        what = {
            STOPPED_TIMEOUT: f"timed out after {spec.timeout_s:g} s",
            STOPPED_STARTUP: f"cluster did not form within startup_timeout_s={spec.startup_timeout_s:g} s",
            STOPPED_STALL: f"a trainer made no progress for stall_timeout_s={spec.stall_timeout_s:g} s",
        }[outcome.stopped]
        reason = f"{what} ({outcome.stopped_how})"
        if outcome.phases:
            reason += "; last phase " + ", ".join(f"{t}: {p or 'not started'}" for t, p in outcome.phases.items())
        return m.STATUS_TIMEOUT, reason
    where = outcome.failed or ""
    if where in outcome.parts:  # a task failed first: its own error
        errors = [contract.result_error(outcome.parts[where])]
    else:  # the launcher cannot tell which task failed: the first error any task wrote
        errors = [contract.result_error(part) for part in outcome.parts.values()]
    error = next((e for e in errors if e), None)
    server = where in outcome.parts and where not in outcome.trainers
    if server and outcome.returncode == 0:
        why = "server exited before the chief finished"
    else:
        why = "; ".join(x for x in (outcome.launcher_reason, error) if x) or exit_text(
            outcome.returncode, outcome.process
        )
    status = m.STATUS_TIMEOUT if outcome.time_limit else m.STATUS_FAILED
    return status, f"{where}: {why}" if where else why


def record_fields(outcome: Outcome, spec: RunSpec, folder: Path) -> dict[str, Any]:
    """The record columns of a finished job: the merged measurements of its trainers, or status and reason."""
    duration = None if outcome.duration_s is None else round(outcome.duration_s, 3)
    fields = {m.DURATION_S: duration} | outcome.columns
    if outcome.log_path is not None:
        fields[m.LOG_PATH] = os.path.relpath(outcome.log_path, folder)
    if outcome.ok:
        parts = [outcome.parts[name]["measurements"] for name in outcome.trainers]
        return fields | merge_rank_parts(parts, spec.global_batch_size) | {m.STATUS: m.STATUS_OK}
    status, reason = failure(outcome, spec)
    tail = log_tail(outcome.log_path) if outcome.log_path is not None else ""
    return fields | {m.STATUS: status, m.REASON: reason, m.LOG_TAIL: tail}


def new_job(
    spec: RunSpec,
    folder: Path,
    run_id: str,
    prefix: str | None = None,
    mode: str = contract.TRAIN,
    repeat: int = 0,
) -> Job:
    prefix = prefix or spec.config_id
    work = folder / WORK_DIR
    return Job(spec, work / f"{prefix}.spec.json", work, folder / LOGS_DIR, prefix, run_id, mode, repeat)


def run_job(launcher: Launcher, job: Job) -> Outcome:
    """Write the job's spec, run it, and remove its files from the work folder (results are read by then)."""
    job.work.mkdir(parents=True, exist_ok=True)
    job.logs.mkdir(parents=True, exist_ok=True)
    write_json_atomic(job.spec_path, job.spec.to_dict())
    try:
        return launcher.run(job)
    finally:
        for path in job.work.glob(f"{job.prefix}.*"):
            path.unlink(missing_ok=True)
