"""Parent side of a sweep: for each spec, one job through the launcher, its outcome turned into a record, stored.

Never imports TensorFlow. A config that fails or times out becomes a record with its reason and last log lines,
and the sweep goes on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import errno
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfscale import contract
from tfscale import metrics as m
from tfscale._version import __version__
from tfscale.errors import SuiteError
from tfscale.host.telemetry import Sampler, summarise, write_series
from tfscale.launch.base import Job, Launcher
from tfscale.launch.jobs import new_job, record_fields, run_job
from tfscale.launch.local import LocalLauncher
from tfscale.launch.processes import WorkerCallError, call_worker
from tfscale.measures.peaks import devices_on_host, peak_columns
from tfscale.runner.claims import claim, release
from tfscale.runner.commbench import sweep_topologies, topology_key
from tfscale.runner.drift import drift_columns, kept_history
from tfscale.stats.drift import ENV_KEY as DRIFT_ENV_KEY
from tfscale.stats.repeats import HISTORY_ENV_KEY
from tfscale.store.records import (
    ENV_FILE,
    RECORDS_FILE,
    WORK_DIR,
    append_record,
    load_env,
    read_records,
    remove_records,
    run_dir,
    write_json_atomic,
)
from tfscale.store.runfolder import describe_run
from tfscale.suite.planner import Plan
from tfscale.suite.spec import SPEC_FIELDS, TIMING_ONLY, RunSpec


@dataclass
class RunResult:
    run_dir: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    commbench_errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # processes another tfscale had claimed: "<name>: claimed by"


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
        errors = call_worker(contract.CHECK_MODELS, timeout_s, request=list(models.values()))
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
    record.update(
        {
            m.RUN_ID: run_id,
            m.DEVICES: spec.devices,
            m.REPLICAS: spec.replicas,
            m.DEVICE_KIND: spec.device_kind,
            m.GLOBAL_BATCH_SIZE: spec.global_batch_size,
            m.TFSCALE_VERSION: __version__,
            m.LINK_BYTES_PER_S: spec.link_bytes_per_s,
        }
    )
    record.pop(m.SCHEMA_VERSION)  # the store stamps it
    return record


def run_config(
    spec: RunSpec, folder: Path, run_id: str, launcher: Launcher | None = None, repeat: int = 0
) -> dict[str, Any]:
    """Run one config in fresh worker process(es) through `launcher` (default: local); return its record (ok,
    failed, timeout or skipped) for process `repeat` of its `spec.repeats`."""
    launcher = launcher or LocalLauncher()
    name = contract.process_name(spec.config_id, repeat)
    if repeat > 0:  # the config's record takes all but the step time from repeat 0 (RunSpec.timing_only)
        spec = dataclasses.replace(spec, extra={**spec.extra, TIMING_ONLY: True})
    elif spec.profile:  # each task traces into its own folder below this one
        spec = dataclasses.replace(spec, extra={**spec.extra, "trace_dir": str(folder / "traces" / name)})
    record = base_record(spec, run_id) | {m.STARTED_AT: _now(), m.LAUNCHER: launcher.name, m.REPEAT: repeat}
    reason = launcher.unavailable(spec)
    if reason is not None:
        return record | {m.STATUS: m.STATUS_SKIPPED, m.REASON: reason, m.FINISHED_AT: _now()}
    job = new_job(spec, folder, run_id, prefix=name, repeat=repeat)
    sampler = _sampler(job, launcher)
    try:
        outcome = run_job(launcher, job)
    finally:
        if sampler is not None:
            sampler.stop()
    record |= record_fields(outcome, spec, folder)
    if sampler is not None:
        series = folder / "telemetry" / f"{name}.csv"
        write_series(sampler.rows, series)
        record |= summarise(sampler.rows, sampler.gpu_note) | {m.TELEMETRY_PATH: str(series.relative_to(folder))}
    if record.get(m.TRACE_PATH):
        record[m.TRACE_PATH] = os.path.relpath(record[m.TRACE_PATH], folder)
    return record | {m.FINISHED_AT: _now()}


def _sampler(job: Job, launcher: Launcher) -> Sampler | None:
    """Telemetry of the job's processes, as the launcher lists them (none where they run on other nodes), with
    the phase its first trainer last reported."""
    if not job.spec.telemetry_hz or launcher.live_pids() is None:
        return None
    progress = job.progress_path(contract.first_trainer(job.spec))

    def phase() -> str:
        with contextlib.suppress(OSError):
            return progress.read_text(encoding="utf-8")
        return ""

    return Sampler(job.spec.telemetry_hz, launcher.live_pids, phase, launcher.sampled_gpus(job.spec)).start()


def existing_statuses(folder: Path) -> dict[str, dict[int, str]]:
    """config_id -> {repeat: status} of the records already in a run folder."""
    path = folder / RECORDS_FILE
    statuses: dict[str, dict[int, str]] = {}
    if path.exists():
        for r in read_records(path):
            statuses.setdefault(r[m.CONFIG_ID], {})[r.get(m.REPEAT) or 0] = r[m.STATUS]
    return statuses


Run = tuple[RunSpec, int]  # a config and which of its fresh processes (repeat)


def interleaved(specs: tuple[RunSpec, ...], done: dict[str, dict[int, str]] | None = None) -> tuple[Run, ...]:
    """Every process still to run, round by round (each config's first process, then each one's second...), so a
    slow drift of the machine spreads over the configs instead of falling on one."""
    done = done or {}
    rounds = max((s.repeats for s in specs), default=0)
    return tuple(
        (spec, repeat)
        for repeat in range(rounds)
        for spec in specs
        if repeat < spec.repeats and repeat not in done.get(spec.config_id, {})
    )


@dataclass(frozen=True)
class Pending:
    specs: tuple[RunSpec, ...]  # configs with a process still to run, in plan order
    recorded: int  # configs of the plan that already have all their records and are kept
    retried: int  # failed configs whose records were removed to run them again
    runs: tuple[Run, ...]  # the processes to run, in order (interleaved)


def pending_specs(plan: Plan, folder: Path, rerun_failed: bool) -> Pending:
    """Configs of the plan without all their records in the folder (and, with rerun_failed, those that failed,
    whose records are removed first: a run never holds two records of one process). A config with a failed
    process is not run further without rerun_failed."""
    statuses = existing_statuses(folder)
    planned = {s.config_id for s in plan.specs}

    def failed(cid: str) -> bool:
        return any(status != m.STATUS_OK for status in statuses.get(cid, {}).values())

    # only this plan's failed configs: records of configs the suite no longer has are kept as they are
    retry = {cid for cid in planned if failed(cid)} if rerun_failed else set()
    if retry:
        remove_records(folder / RECORDS_FILE, retry)
    done = {cid: runs for cid, runs in statuses.items() if cid not in retry}
    complete = {s.config_id for s in plan.specs if failed(s.config_id) or len(done.get(s.config_id, {})) >= s.repeats}
    complete -= retry
    todo = tuple(s for s in plan.specs if s.config_id not in complete)
    return Pending(todo, len(complete), len(retry), interleaved(todo, done))


def run_plan(
    plan: Plan,
    results_dir: str | Path,
    run_id: str,
    env: dict[str, Any] | None = None,
    on_record: Callable[[int, dict[str, Any]], None] | None = None,
    pending: Pending | None = None,
    launcher: Launcher | None = None,
    on_skip: Callable[[str], None] | None = None,
    label: str | None = None,
) -> RunResult:
    """Run the plan's configs (or only `pending` ones) through `launcher` (default: local), each in `repeats`
    fresh processes interleaved over the configs, appending each process's record to records.jsonl; the suite's
    all-reduce sweeps (commbench) first, through the same launcher. `label` (`tfscale run --label`) goes into the
    run folder's plan.json with the suite's project commit."""
    launcher = launcher or LocalLauncher()
    folder = run_dir(results_dir, plan.suite.name, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    if env is not None and not (folder / ENV_FILE).exists():  # a resumed run keeps the environment it began in
        write_json_atomic(folder / ENV_FILE, env)
    describe_run(folder, plan.suite, [spec.to_dict() for spec in plan.specs], label)
    began = load_env(folder)  # as the run began: a resumed run keeps its drift and history
    drift = drift_columns(began.get(DRIFT_ENV_KEY)) | kept_history(began.get(HISTORY_ENV_KEY))
    specs = plan.specs if pending is None else pending.specs
    runs = interleaved(specs) if pending is None else pending.runs
    launcher.expect(runs)
    outcome = RunResult(folder)
    fits = {}
    if plan.suite.commbench:
        fits, outcome.commbench_errors = sweep_topologies(specs, plan.suite.commbench, folder, launcher)
    failed: set[str] = set()
    recorded = Recorded(folder / RECORDS_FILE)
    for index, (spec, repeat) in enumerate(runs):
        if spec.config_id in failed:  # its record is the failed process's already: more processes add nothing
            continue
        name = contract.process_name(spec.config_id, repeat)
        holder = claim(folder, name)
        if holder is not None:  # another tfscale runs this process of the config on the same run folder
            _skipped(outcome, on_skip, name, f"claimed by {holder}", f"has it ({holder})")
            continue
        try:
            record = _run_unless_recorded(spec, repeat, folder, run_id, launcher, recorded)
            if record is None:  # the other tfscale finished it after this one planned it
                _skipped(outcome, on_skip, name, "recorded by another tfscale", "has recorded it")
                continue
            if record[m.STATUS] in (m.STATUS_FAILED, m.STATUS_TIMEOUT):
                _stop_if_disk_full(folder)  # its worker could not write: not the config's failure, the disk's
                failed.add(spec.config_id)
            _complete(record, spec, env, launcher, fits, drift)
            append_record(folder / RECORDS_FILE, record)
        finally:
            release(folder, name)
        outcome.records.append(record)
        if on_record is not None:
            on_record(index, record)
    _remove_if_empty(folder / WORK_DIR)
    return outcome


def _skipped(outcome: RunResult, on_skip, name: str, why: str, says: str) -> None:
    """A process another tfscale of the same run folder has, or has recorded: noted, and said where asked."""
    outcome.skipped.append(f"{name}: {why}")
    if on_skip is not None:
        on_skip(f"skipping {name}: another tfscale run of this run folder {says}")


def _complete(
    record: dict[str, Any], spec: RunSpec, env: dict | None, launcher: Launcher, fits: dict, drift: dict[str, Any]
) -> None:
    """What the parent adds to an ok record: the peak FLOP/s of its devices (MFU's denominator), the commbench
    model's communication time at its gradient bytes and the run's drift between runs (`drift`: its columns)."""
    if record[m.STATUS] != m.STATUS_OK:
        return
    record.update(drift)
    if env is not None:
        record.update(peak_record(spec, env, launcher.name, record_gpu_uuids(record)))
    fit = fits.get(topology_key(spec))
    if fit is not None:
        record[m.COMM_TIME_MODEL_S] = fit.predict(record[m.GRAD_BYTES])


def record_gpu_uuids(record: dict[str, Any]) -> list[str]:
    """The NVML UUIDs of the GPUs a record's ranks ran on (rank_gpu_uuids: one list per rank)."""
    return [uuid for rank in record.get(m.RANK_GPU_UUIDS) or [] for uuid in rank or []]


def peak_record(spec: RunSpec, env: dict[str, Any], launcher: str, gpu_uuids: list[str] | None = None) -> dict:
    """peak_flops_per_s and how it was found: the suite's, the datasheet figure of the config's GPUs (`gpu_uuids`),
    the CPU microbenchmark's."""
    on_host = devices_on_host(spec.devices, spec.devices_per_node, launcher)
    peak, method = peak_columns(
        spec.device, spec.precision, on_host, env, spec.peak_flops_per_s, launcher, tuple(gpu_uuids or ())
    )
    return {m.PEAK_FLOPS_PER_S: peak, m.PEAK_FLOPS_METHOD: method}


MIN_FREE_BYTES = 1 << 20  # less free space than this beside a failed config: the disk is full, not the config


def _stop_if_disk_full(folder: Path) -> None:
    """Raise ENOSPC when the run folder's filesystem is (nearly) full, so that a config whose worker could not
    write its result stops the sweep instead of being recorded as failed."""
    if shutil.disk_usage(folder).free < MIN_FREE_BYTES:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(folder))


@dataclass
class Recorded:
    """The statuses recorded in a run folder, kept up to date by reading only the lines appended since the last
    look (by this run or another tfscale on the folder): 0.1 s for the whole file at 1,000 records, before every
    config process, would add up over a long sweep."""

    path: Path
    offset: int = 0
    statuses: dict[str, dict[int, str]] = field(default_factory=dict)

    def of(self, config_id: str) -> dict[int, str]:
        """{repeat: status} of the config's records so far."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                new = f.read()
        except FileNotFoundError:
            return {}
        whole = new[: new.rfind(b"\n") + 1]  # a line still being written is read next time
        self.offset += len(whole)
        for line in whole.splitlines():
            with contextlib.suppress(ValueError, KeyError, TypeError):  # not a record: read_records names it
                r = json.loads(line)
                self.statuses.setdefault(r[m.CONFIG_ID], {})[r.get(m.REPEAT) or 0] = r[m.STATUS]
        return self.statuses.get(config_id, {})


def _run_unless_recorded(
    spec: RunSpec, repeat: int, folder: Path, run_id: str, launcher: Launcher, recorded: Recorded
) -> dict[str, Any] | None:
    """run_config, unless the run folder has a record of this process (or a failed one of the config) by now."""
    statuses = recorded.of(spec.config_id)
    if repeat in statuses or any(status != m.STATUS_OK for status in statuses.values()):
        return None
    return run_config(spec, folder, run_id, launcher, repeat)


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.rmdir()
