"""Parent side of a sweep: for each spec, launch a worker, watch it, turn its result into a record, store it.

Never imports TensorFlow. A config that fails or times out becomes a record with its reason and last log lines,
and the sweep goes on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfscale import metrics as m
from tfscale._version import __version__
from tfscale.commbench import sweep_topologies, topology_key
from tfscale.errors import SuiteError
from tfscale.launch import ProcessOutcome, run_worker
from tfscale.launch.cluster import PROGRESS_ENV, Watch, cluster_tasks, job_counts, run_cluster
from tfscale.launch.local import LIVE, WorkerCallError, call_worker
from tfscale.launch.slurm import Allocation, run_step
from tfscale.merge import merge_rank_parts
from tfscale.netsim.hosts import cluster_hosts
from tfscale.netsim.network import NetworkError, unavailable_reason
from tfscale.plan import Plan
from tfscale.spec import RunSpec
from tfscale.store import (
    ENV_FILE,
    LOGS_DIR,
    RECORDS_FILE,
    append_record,
    read_json,
    read_records,
    remove_records,
    run_dir,
    write_json_atomic,
)
from tfscale.telemetry import Sampler, summarise, write_series

LOG_TAIL_LINES = 20
SPEC_FIELDS = (m.CONFIG_ID, m.SUITE, m.DEVICE, m.MODEL, m.MODEL_SIZE, m.STRATEGY, m.CROSS_DEVICE_OPS, m.COLLECTIVE,
               m.BYTES_PER_PACK, m.NUM_PS, m.PARTITIONER, m.NODES, m.NETWORK_LINK, m.DEVICES_PER_NODE,
               m.PARALLELISM, m.STAGES, m.MICRO_BATCHES, m.TENSOR_PARALLEL, m.BATCH_SIZE, m.BATCH_POLICY,
               m.PRECISION, m.JIT, m.OPTIMIZER, m.WARMUP_STEPS, m.WINDOW_STEPS, m.SEED)


@dataclass
class RunResult:
    run_dir: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    commbench_errors: list[str] = field(default_factory=list)


def check_user_models(plan: Plan, timeout_s: float = 300.0) -> None:
    """Import and build each user model once in a worker process before the sweep; raise SuiteError naming the
    model's key when one fails to import, raises, or returns something other than a tfscale.Workload."""
    models = {}
    for spec in plan.specs:
        if spec.user_model is not None and spec.model not in models:
            models[spec.model] = {"name": spec.model, **spec.user_model, "suite_dir": spec.suite_dir}
    if not models:
        return
    try:
        errors = call_worker("--check-models", timeout_s, request=list(models.values()))
    except WorkerCallError as error:
        raise SuiteError(f"{plan.suite.path}: models: the check of user models failed: {error}") from None
    if errors:
        raise SuiteError(f"{plan.suite.path}: {errors[0]}")


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
        m.LINK_BYTES_PER_S: spec.link_bytes_per_s,
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
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        # The kernel's out-of-memory killer sends SIGKILL: say so, since nothing else in the log will.
        hint = " (also what the kernel's out-of-memory killer sends; see dmesg)" if -code == signal.SIGKILL else ""
        return f"killed by signal {name}{hint}"
    return f"worker exited with code {code} without a result"


def _worker_argv(spec_path: Path, result_path: Path) -> list[str]:
    return [sys.executable, "-m", "tfscale.worker", "--spec", str(spec_path), "--result", str(result_path)]


def run_config(spec: RunSpec, folder: Path, run_id: str, allocation: Allocation | None = None) -> dict[str, Any]:
    """Run one config in fresh worker process(es), here or (with an allocation) as a Slurm job step; return its
    record (ok, failed, timeout or skipped)."""
    work = folder / "work"
    logs = folder / LOGS_DIR
    work.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    spec_path = work / f"{spec.config_id}.spec.json"
    if spec.profile:  # each task traces into its own folder below this one
        spec = dataclasses.replace(spec, extra={**spec.extra, "trace_dir": str(folder / "traces" / spec.config_id)})
    record = base_record(spec, run_id) | {m.STARTED_AT: _now(), m.LAUNCHER: "local" if allocation is None else "slurm"}
    if spec.network_link is not None and (reason := _network_unavailable(allocation)) is not None:
        return record | {m.STATUS: m.STATUS_SKIPPED, m.REASON: reason, m.FINISHED_AT: _now()}
    write_json_atomic(spec_path, spec.to_dict())
    # the parent samples the processes it started itself: under Slurm the ranks are slurmstepd's, on other nodes
    sampler = _sampler(spec, work) if allocation is None else None
    try:
        if allocation is not None:
            record |= _run_slurm(spec, spec_path, work, logs, folder, allocation)
        elif spec.cluster:
            record |= _run_cluster(spec, spec_path, work, logs, folder, run_id)
        else:
            record |= _run_single(spec, spec_path, work, logs, folder)
    finally:
        spec_path.unlink(missing_ok=True)
        if sampler is not None:
            sampler.stop()
    if sampler is not None:
        series = folder / "telemetry" / f"{spec.config_id}.csv"
        write_series(sampler.rows, series)
        record |= summarise(sampler.rows, sampler.gpu_note) | {m.TELEMETRY_PATH: str(series.relative_to(folder))}
    if record.get(m.TRACE_PATH):
        record[m.TRACE_PATH] = os.path.relpath(record[m.TRACE_PATH], folder)
    return record | {m.FINISHED_AT: _now()}


def _network_unavailable(allocation: Allocation | None) -> str | None:
    if allocation is not None:
        return "simulated hosts (network_link) run with the local launcher only; a Slurm cluster has its own network"
    return unavailable_reason()


def _sampler(spec: RunSpec, work: Path) -> Sampler | None:
    """Telemetry of this config's workers (every live worker of this parent: one config runs at a time), with the
    phase its first trainer last reported."""
    if not spec.telemetry_hz:
        return None
    progress = [work / f"{spec.config_id}.{name}" for name in ("progress", "chief-0.progress", "worker-0.progress")]

    def phase() -> str:
        for path in progress:
            with contextlib.suppress(OSError):
                return path.read_text(encoding="utf-8")
        return ""

    return Sampler(spec.telemetry_hz, lambda: [p.pid for p in list(LIVE)], phase).start()


def _run_single(spec: RunSpec, spec_path: Path, work: Path, logs: Path, folder: Path) -> dict[str, Any]:
    result_path = work / f"{spec.config_id}.result.json"
    progress_path = work / f"{spec.config_id}.progress"
    log_path = logs / f"{spec.config_id}.log"
    result_path.unlink(missing_ok=True)
    try:
        outcome = run_worker(_worker_argv(spec_path, result_path), log_path, spec.timeout_s,
                             env={**os.environ, PROGRESS_ENV: str(progress_path)})
        result = read_json(result_path)
    finally:
        result_path.unlink(missing_ok=True)
        progress_path.unlink(missing_ok=True)
    fields = {m.LOG_PATH: str(log_path.relative_to(folder)), m.DURATION_S: round(outcome.duration_s, 3)}
    if not outcome.timed_out and outcome.returncode == 0 and result and result.get("ok"):
        return fields | result["measurements"] | {m.STATUS: m.STATUS_OK}
    status = m.STATUS_TIMEOUT if outcome.timed_out else m.STATUS_FAILED
    return fields | {m.STATUS: status, m.REASON: failure_reason(outcome, result, spec.timeout_s),
                     m.LOG_TAIL: log_tail(log_path)}


def _run_cluster(spec: RunSpec, spec_path: Path, work: Path, logs: Path, folder: Path, run_id: str
                 ) -> dict[str, Any]:
    tasks = cluster_tasks(spec.strategy, spec.nodes, spec.num_ps)
    try:
        watch = Watch(spec.timeout_s, spec.startup_timeout_s, spec.stall_timeout_s)
        with cluster_hosts(spec, run_id) as hosts:
            outcome = run_cluster(tasks, lambda run: _worker_argv(spec_path, run.result_path), work, logs,
                                  spec.config_id, watch, placement=hosts.placement)
        results = {run.task.name: read_json(run.result_path) for run in outcome.runs}
        phases = outcome.progress()
    except NetworkError as error:
        return {m.STATUS: m.STATUS_FAILED, m.REASON: str(error)}
    finally:
        _remove_task_files(work, spec.config_id, keep=spec_path)
    trainers = [run for run in outcome.runs if run.task.trainer]
    fields = {m.LOG_PATH: str(trainers[0].log_path.relative_to(folder)), m.DURATION_S: round(outcome.duration_s, 3),
              m.CLUSTER: job_counts(tasks), m.PORT_RETRIES: outcome.attempts - 1}
    if hosts.check is not None:
        fields |= {m.LINK_MEASURED_BYTES_PER_S: hosts.check.bytes_per_s, m.LINK_CHECK_METHOD: hosts.check.method}
    if outcome.stopped is not None:
        last = ", ".join(f"{name}: {phase or 'not started'}" for name, phase in phases.items())
        what = {"timeout": f"timed out after {spec.timeout_s:g} s",
                "startup": f"cluster did not form within startup_timeout_s={spec.startup_timeout_s:g} s",
                "stall": f"a trainer made no progress for stall_timeout_s={spec.stall_timeout_s:g} s"}[outcome.stopped]
        return fields | {m.STATUS: m.STATUS_TIMEOUT, m.LOG_TAIL: log_tail(trainers[0].log_path),
                         m.REASON: f"{what} (cluster stopped); last phase {last}"}
    if outcome.failed is not None:
        run = outcome.failed
        process = ProcessOutcome(run.returncode, False, outcome.duration_s)
        why = ("server exited before the chief finished" if run.returncode == 0
               else failure_reason(process, results[run.task.name], spec.timeout_s))
        return fields | {m.STATUS: m.STATUS_FAILED, m.REASON: f"{run.task.name}: {why}",
                         m.LOG_PATH: str(run.log_path.relative_to(folder)), m.LOG_TAIL: log_tail(run.log_path)}
    parts = [results[run.task.name]["measurements"] for run in trainers]
    return fields | merge_rank_parts(parts, spec.global_batch_size) | {m.STATUS: m.STATUS_OK}


def _run_slurm(spec: RunSpec, spec_path: Path, work: Path, logs: Path, folder: Path, allocation: Allocation
               ) -> dict[str, Any]:
    cid = spec.config_id
    work, spec_path = work.resolve(), spec_path.resolve()  # the ranks may start in another folder, on other nodes
    tasks = cluster_tasks(spec.strategy, spec.nodes, spec.num_ps) if spec.cluster else []
    template = work / (f"{cid}.{{task}}.result.json" if spec.cluster else f"{cid}.result.json")
    trainers = [work / f"{cid}.{t.name}.result.json" for t in tasks if t.trainer] or [template]
    log_path = logs / f"{cid}.log"
    try:
        outcome = run_step(spec, allocation, _worker_argv(spec_path, template), log_path, work / f"{cid}.progress")
        parts = {path: read_json(path) for path in sorted(work.glob(f"{cid}.*result.json"))}  # every rank's
    finally:
        _remove_task_files(work, cid, keep=spec_path)
    results = [parts.get(path) for path in trainers]
    errors = [r["error"] for r in parts.values() if r and not r.get("ok") and r.get("error")]
    fields = {m.LOG_PATH: str(log_path.relative_to(folder)), m.DURATION_S: round(outcome.duration_s, 3),
              m.SLURM_JOB_ID: outcome.job_id, m.SLURM_STEP_ID: outcome.step_id,
              m.CLUSTER: job_counts(tasks) if tasks else None}
    if not outcome.timed_out and outcome.returncode == 0 and all(r and r.get("ok") for r in results):
        parts = [r["measurements"] for r in results]
        measured = merge_rank_parts(parts, spec.global_batch_size) if spec.cluster else parts[0]
        return fields | measured | {m.STATUS: m.STATUS_OK}
    step = f"step {outcome.job_id}.{outcome.step_id}" if outcome.step_id is not None else f"job {outcome.job_id}"
    if outcome.timed_out:
        reason = f"timed out after {spec.timeout_s:g} s ({step} cancelled)"
    else:
        reason = "; ".join(x for x in (outcome.slurm_reason, errors[0] if errors else None) if x)
        reason = f"{step}: {reason or f'srun exited with code {outcome.returncode} without a result'}"
    timed_out = outcome.timed_out or "TIME LIMIT" in (outcome.slurm_reason or "")
    return fields | {m.STATUS: m.STATUS_TIMEOUT if timed_out else m.STATUS_FAILED, m.REASON: reason,
                     m.LOG_TAIL: log_tail(log_path)}


def _remove_task_files(work: Path, config_id: str, keep: Path) -> None:
    """The config's result parts and progress files, once read (the spec file `keep` goes last, in run_config)."""
    for path in work.glob(f"{config_id}.*"):
        if path != keep:
            path.unlink(missing_ok=True)


def existing_statuses(folder: Path) -> dict[str, str]:
    """config_id -> status of the records already in a run folder."""
    path = folder / RECORDS_FILE
    return {r[m.CONFIG_ID]: r[m.STATUS] for r in read_records(path)} if path.exists() else {}


@dataclass(frozen=True)
class Pending:
    specs: tuple[RunSpec, ...]  # still to run, in plan order
    recorded: int  # configs of the plan that already have a record and are kept
    retried: int  # failed configs whose records were removed to run them again


def pending_specs(plan: Plan, folder: Path, rerun_failed: bool) -> Pending:
    """Configs of the plan without a record in the folder (and, with rerun_failed, those that failed, whose
    records are removed first: a run never holds two records of one config)."""
    statuses = existing_statuses(folder)
    planned = {s.config_id for s in plan.specs}
    # only this plan's failed configs: records of configs the suite no longer has are kept as they are
    retry = {cid for cid in planned if statuses.get(cid, m.STATUS_OK) != m.STATUS_OK} if rerun_failed else set()
    if retry:
        remove_records(folder / RECORDS_FILE, retry)
    todo = tuple(s for s in plan.specs if s.config_id not in statuses or s.config_id in retry)
    return Pending(todo, len(planned & set(statuses)) - len(retry), len(retry))


def run_plan(plan: Plan, results_dir: str | Path, run_id: str, env: dict[str, Any] | None = None,
             on_record: Callable[[int, dict[str, Any]], None] | None = None, pending: Pending | None = None,
             allocation: Allocation | None = None) -> RunResult:
    """Run the plan's configs (or only `pending` ones) in order, appending each record to records.jsonl; with an
    allocation, each config is a Slurm job step in it."""
    folder = run_dir(results_dir, plan.suite.name, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    if env is not None and not (folder / ENV_FILE).exists():  # a resumed run keeps the environment it began in
        write_json_atomic(folder / ENV_FILE, env)
    specs = plan.specs if pending is None else pending.specs
    outcome = RunResult(folder)
    fits = {}
    if plan.suite.commbench and allocation is not None:
        outcome.commbench_errors.append("commbench: the all-reduce sweeps run with the local launcher only; "
                                        "skipped under slurm")
    elif plan.suite.commbench:
        fits, outcome.commbench_errors = sweep_topologies(specs, plan.suite.commbench, folder)
    for index, spec in enumerate(specs):
        record = run_config(spec, folder, run_id, allocation)
        fit = fits.get(topology_key(spec))
        if fit is not None and record[m.STATUS] == m.STATUS_OK:
            record[m.COMM_TIME_MODEL_S] = fit.predict(record[m.GRAD_BYTES])
        append_record(folder / RECORDS_FILE, record)
        outcome.records.append(record)
        if on_record is not None:
            on_record(index, record)
    _remove_if_empty(folder / "work")
    return outcome


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.rmdir()
