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
from tfscale.errors import TfscaleError
from tfscale.launch.base import Outcome
from tfscale.launch.emit import SPEC_ORDER_FILE
from tfscale.launch.jobs import record_fields
from tfscale.runner import base_record
from tfscale.spec import RunSpec
from tfscale.store import RECORDS_FILE, append_record, read_json, run_dir

LAUNCHER_COLLECTED = "launch"  # the record column `launcher` of a collected config: started by `tfscale launch`'s files


@dataclass
class Collected:
    """What collecting a launch folder came to."""

    run_dir: Path  # where the records went
    records: list[dict[str, Any]]
    not_run: list[str]  # config ids without any result part (not run, or not finished)


def launched_specs(folder: Path) -> list[RunSpec]:
    """The configs of a launch folder, in plan order (specs/order.json; else by file name)."""
    specs = folder / "specs"
    if not specs.is_dir():
        raise TfscaleError(f"{folder}: no specs/ folder: not a folder written by tfscale launch")
    order = read_json(specs / SPEC_ORDER_FILE)
    names = [f"{c}.json" for c in order] if order else sorted(p.name for p in specs.glob("*.json"))
    names = [n for n in names if n != SPEC_ORDER_FILE]
    return [RunSpec.from_dict(json.loads((specs / n).read_text(encoding="utf-8"))) for n in names]


def outcome_of(spec: RunSpec, folder: Path) -> Outcome | None:
    """The config's outcome from its tasks' result parts (None: no task wrote one). A task whose part reports an
    error failed; a trainer without a part, where others wrote theirs, is named as the failed task."""
    results = folder / "results"
    tasks = contract.tasks_of(spec)
    parts = {t.name: read_json(contract.task_file(results, spec.config_id, contract.RESULT_SUFFIX, t)) for t in tasks}
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


def collect(folder: str | Path, results_dir: str | Path, run_id: str) -> Collected:
    """Store a record for every config of the launch folder that has result parts; name those that have none."""
    folder = Path(folder)
    specs = launched_specs(folder)
    if not specs:
        raise TfscaleError(f"{folder / 'specs'}: no config spec")
    target = run_dir(results_dir, specs[0].suite, run_id)
    if (target / RECORDS_FILE).exists():
        raise TfscaleError(f"{target}: this run already has records; collect into a new --run-id")
    target.mkdir(parents=True, exist_ok=True)
    records, not_run = [], []
    for spec in specs:
        outcome = outcome_of(spec, folder)
        if outcome is None:
            not_run.append(spec.config_id)
            continue
        record = base_record(spec, run_id) | {m.LAUNCHER: LAUNCHER_COLLECTED} | record_fields(outcome, spec, target)
        append_record(target / RECORDS_FILE, record)
        records.append(record)
    return Collected(target, records, not_run)
