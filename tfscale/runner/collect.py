"""From a launched run to records: `tfscale collect DIR` reads the folder `tfscale launch` wrote (specs/ and the
result parts the tasks wrote to results/, on a cluster run through Slurm, Kubernetes or by hand) and stores one
record per config exactly as the runner does (`launch.jobs.record_fields`: the trainers' parts merged, or status
and reason), so a run started outside `tfscale run` ends in the same records and report. Parent side: no TF."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfscale import contract
from tfscale import metrics as m
from tfscale.axes import AXES, SETTINGS
from tfscale.errors import TfscaleError
from tfscale.launch.base import Outcome
from tfscale.launch.emit import SPEC_ORDER_FILE
from tfscale.launch.jobs import record_fields
from tfscale.runner.configs import base_record
from tfscale.store.recordcheck import record_problem
from tfscale.store.records import RECORDS_FILE, append_record, run_dir
from tfscale.suite.spec import RunSpec
from tfscale.suite.suitefile import check_value
from tfscale.untrusted import NAME_RULE, UntrustedFile, confined, is_name, read_capped, visible

LAUNCHER_COLLECTED = "launch"  # the record column `launcher` of a collected config: started by `tfscale launch`'s files


@dataclass
class Collected:
    """What collecting a launch folder came to."""

    run_dir: Path  # where the records went
    records: list[dict[str, Any]]
    not_run: list[str]  # processes (contract.process_name) without any result part (not run, or not finished)


# A launch folder comes from a cluster's shared filesystem, written by others: every file in it is read as untrusted
# (tfscale.untrusted): only regular files inside the folder, at most this big, JSON of the expected shape.
MAX_SPEC_BYTES = 1 << 20
MAX_PART_BYTES = 64 << 20  # a part holds a trainer's step times and figures: a few MB at most


def _read(folder: Path, relative: str, max_bytes: int) -> bytes | None:
    """The bytes of a file inside `folder`, None where it is missing; TfscaleError in one line where it leads
    outside the folder, is no regular file or is too big."""
    try:
        return read_capped(confined(folder, relative), max_bytes)
    except FileNotFoundError:
        return None
    except (UntrustedFile, OSError) as error:
        raise TfscaleError(f"{folder / relative}: refused: {visible(str(error))}") from None


def _parsed(data: bytes | None) -> Any:
    """JSON of a file's bytes, None for no file or for bytes that are not JSON text."""
    try:
        return None if data is None else json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None


def _spec(specs: Path, name: str) -> RunSpec:
    """A spec file checked as a suite's values are: a name for the suite, the config id and the model, every axis
    and setting of its type and range (the folder's suite and config id become paths)."""
    where = specs / name
    data = _parsed(_read(specs, name, MAX_SPEC_BYTES))
    try:
        spec = RunSpec.from_dict(data) if isinstance(data, dict) else None
    except (TypeError, ValueError) as error:
        raise TfscaleError(f"{where}: not a spec tfscale launch wrote ({visible(str(error))[:200]})") from None
    if spec is None:
        raise TfscaleError(f"{where}: missing, or not a spec tfscale launch wrote (a JSON object)")
    for field in (m.SUITE, m.CONFIG_ID, m.MODEL):
        if not is_name(getattr(spec, field)):
            raise TfscaleError(f"{where}: {field}: not a name ({NAME_RULE})")
    for key in (*AXES, *SETTINGS):
        check_value(key, key, getattr(spec, key), (spec.model,), str(where))
    return spec


def launched_specs(folder: Path) -> list[RunSpec]:
    """The configs of a launch folder, in plan order (specs/order.json; else by file name). TfscaleError in one line
    for anything tfscale launch did not write."""
    specs = folder / "specs"
    if not specs.is_dir():
        raise TfscaleError(f"{folder}: no specs/ folder: not a folder written by tfscale launch")
    raw = _read(specs, SPEC_ORDER_FILE, MAX_SPEC_BYTES)
    order = _parsed(raw)
    if raw is None:
        names = sorted(p.name for p in specs.glob("*.json") if p.name != SPEC_ORDER_FILE)
    elif isinstance(order, list) and all(is_name(c) for c in order):
        names = [f"{c}.json" for c in order]
    else:
        raise TfscaleError(f"{specs / SPEC_ORDER_FILE}: not a list of config ids ({NAME_RULE})")
    return [_spec(specs, name) for name in names]


def outcome_of(spec: RunSpec, folder: Path, repeat: int = 0) -> Outcome | None:
    """The outcome of the config's process `repeat` from its tasks' result parts (None: no task wrote one; parts
    are named by contract.process_name, as tfscale launch's scripts write them). A task whose part reports an
    error failed; a trainer without a part, where others wrote theirs, is named as the failed task. A part that is
    not a JSON object counts as none (a task that died while writing); one that is no regular file inside the
    folder, or too big, is refused (TfscaleError)."""
    results = folder / "results"
    process = contract.process_name(spec.config_id, repeat)
    tasks = contract.tasks_of(spec)
    parts = {}
    for t in tasks:
        part = _parsed(_read(results, contract.task_file("", process, contract.RESULT_SUFFIX, t), MAX_PART_BYTES))
        parts[t.name] = part if isinstance(part, dict) else None
    if all(part is None for part in parts.values()):
        return None
    trainers = [t.name for t in tasks if t.trainer]
    columns = {m.CLUSTER: contract.job_counts(tasks)} if spec.cluster else {}
    outcome = Outcome(None, parts, trainers, None, columns=columns)
    errored = [name for name, part in parts.items() if part is not None and not contract.result_ok(part)]
    missing = [name for name in trainers if parts[name] is None]
    if errored:
        outcome.failed = errored[0] if spec.cluster else ""
    elif missing:
        outcome.failed = ""
        outcome.launcher_reason = f"no result part from {', '.join(missing)} in {results}"
    return outcome


def _not_json(record: dict[str, Any]) -> str | None:
    """Why the record cannot be stored (a NaN or infinity from a part), or None."""
    try:
        json.dumps(record, allow_nan=False)
    except (TypeError, ValueError) as error:
        return str(error)
    return None


def _record(spec: RunSpec, outcome: Outcome, target: Path, run_id: str, results: Path, repeat: int) -> dict[str, Any]:
    """The record of a config from its parts, as the runner stores it; TfscaleError where the parts cannot make
    one that readers can compute with (they come from others' files)."""
    try:
        fields = record_fields(outcome, spec, target)
    except (TypeError, KeyError, ValueError, AttributeError, ZeroDivisionError) as error:
        problem = repr(error)
    else:
        record = base_record(spec, run_id) | {m.LAUNCHER: LAUNCHER_COLLECTED, m.REPEAT: repeat} | fields
        problem = record_problem(record) or _not_json(record)
        if problem is None:
            return record
    raise TfscaleError(f"{results}: config {spec.config_id}: parts tfscale did not write ({visible(problem)})")


def collect(folder: str | Path, results_dir: str | Path, run_id: str) -> Collected:
    """Store a record for every config of the launch folder that has result parts; name those that have none.
    Every record is made before the first is stored: a folder that fails leaves no run behind."""
    folder = Path(folder)
    specs = launched_specs(folder)
    if not specs:
        raise TfscaleError(f"{folder / 'specs'}: no config spec")
    if len({spec.suite for spec in specs}) > 1:
        raise TfscaleError(f"{folder / 'specs'}: specs of several suites; tfscale launch writes one suite's")
    target = run_dir(results_dir, specs[0].suite, run_id)
    if (target / RECORDS_FILE).exists():
        raise TfscaleError(f"{target}: this run already has records; collect into a new --run-id")
    records, not_run = [], []
    for spec in specs:
        for repeat in range(spec.repeats):  # a config of `repeats: N` ran as N processes; load_results combines them
            outcome = outcome_of(spec, folder, repeat)
            if outcome is None:
                not_run.append(contract.process_name(spec.config_id, repeat))
            else:
                records.append(_record(spec, outcome, target, run_id, folder / "results", repeat))
    if not records:
        raise TfscaleError(
            f"{folder / 'results'}: no result part yet for any of the {len(specs)} config(s): nothing to collect"
        )
    target.mkdir(parents=True, exist_ok=True)
    for record in records:
        append_record(target / RECORDS_FILE, record)
    return Collected(target, records, not_run)
