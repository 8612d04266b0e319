"""Versioned, append-only JSONL records: `results/<suite>/<run_id>/records.jsonl`.

Each line is one record with `schema_version`. Appends are flushed and fsynced so a crash loses at most the line
being written; a torn last line is skipped with a warning on load. Older records are upgraded step by step
(`update_to_N`); a record newer than this tfscale is a clear error.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfscale.errors import ResultsError
from tfscale.metrics import SCHEMA_VERSION as SCHEMA_KEY

if TYPE_CHECKING:  # pandas is only needed by load_results; keep `tfscale run`'s start-up light
    import pandas as pd

# Record schema history:
#   1 (tfscale 0.1.0): first layout, the columns of tfscale.metrics.RECORD_COLUMNS.
#   2 (tfscale 0.2.0): simulated hosts: network_link, link_bytes_per_s, link_measured_bytes_per_s,
#     link_check_method (all empty for version-1 records, which ran over loopback); launcher slurm:
#     slurm_job_id, slurm_step_id (empty for version 1: local only); model parallelism: stages, micro_batches,
#     tensor_parallel, param_bytes_per_device, stage_param_bytes, bubble_fraction, bubble_fraction_theory,
#     model_parallel_method (empty for version 1: data parallelism only); status may be "skipped".
#   3 (tfscale 0.4.0): a line is one worker process's measurement: a config run with repeats: N has N lines
#     (repeat 0 .. N-1) that load_results combines into one record (tfscale.repeats); version-2 lines ran once
#     (repeat 0). Precision columns (ci_target, ci_met, ci_half_width_rel, samples, warmup_stop, measure_stop) and
#     CI columns are new columns, empty for older records.
# A column added without changing any meaning needs no new version: load_results gives older records every column of
# RECORD_COLUMNS, empty where they lack it. A changed meaning or layout needs SCHEMA_VERSION + 1 and its update_to_N.
SCHEMA_VERSION = 3

RECORDS_FILE = "records.jsonl"
ENV_FILE = "env.json"
LOGS_DIR = "logs"
WORK_DIR = "work"  # specs, result parts and progress files of the running job; emptied as each ends


NEW_IN_2 = (
    "network_link",
    "link_bytes_per_s",
    "link_measured_bytes_per_s",
    "link_check_method",
    "slurm_job_id",
    "slurm_step_id",
    "stages",
    "micro_batches",
    "tensor_parallel",
    "param_bytes_per_device",
    "stage_param_bytes",
    "bubble_fraction",
    "bubble_fraction_theory",
    "model_parallel_method",
)


def update_to_2(record: dict[str, Any]) -> dict[str, Any]:
    """Version 1 records ran data parallelism over loopback with the local launcher: the new columns are empty."""
    return {**record, **dict.fromkeys(NEW_IN_2)}


def update_to_3(record: dict[str, Any]) -> dict[str, Any]:
    """Version 2 records are one process each: the config's only one."""
    return {**record, "repeat": 0}


# update_to_N takes a record of version N-1 and returns it as version N.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {2: update_to_2, 3: update_to_3}


class RecordWarning(UserWarning):
    """A records line that could not be read (torn write): skipped."""


def run_dir(results_dir: str | Path, suite: str, run_id: str) -> Path:
    return Path(results_dir) / suite / run_id


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Exclusive lock beside `path` (`<name>.lock`), so that two tfscale processes writing one run folder never
    interleave or lose lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def append_record(path: str | Path, record: dict[str, Any]) -> None:
    """Append one record as one line, durably (flush + fsync) before returning, under the folder's lock."""
    line = json.dumps({**record, SCHEMA_KEY: SCHEMA_VERSION}, sort_keys=False, allow_nan=False) + "\n"
    path = Path(path)
    with locked(path), open(path, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def remove_records(path: str | Path, config_ids: set[str]) -> int:
    """Rewrite the records file without the records of `config_ids` (atomically, under the lock); return how
    many were removed. Used to retry failed configs without ever holding two records of one config."""
    path = Path(path)
    if not path.exists():
        return 0
    with locked(path):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if _config_id(line) not in config_ids]
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(kept)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    return len(lines) - len(kept)


def _config_id(line: str) -> str | None:
    try:
        return json.loads(line).get("config_id")
    except (json.JSONDecodeError, AttributeError):
        return None


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write JSON to a temporary name, fsync, then rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, allow_nan=False)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_json(path: str | Path) -> Any | None:
    """A JSON file's content, or None when it is missing or unreadable (a worker that died before writing)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def upgrade(record: dict[str, Any], source: str = "") -> dict[str, Any]:
    """Bring a record to SCHEMA_VERSION, one version at a time."""
    version = record.get(SCHEMA_KEY)
    if not isinstance(version, int) or version < 1:
        raise ResultsError(f"{source}: not a tfscale record (no valid {SCHEMA_KEY})")
    if version > SCHEMA_VERSION:
        raise ResultsError(
            f"{source}: record schema_version {version} is newer than this tfscale reads "
            f"({SCHEMA_VERSION}); upgrade tfscale"
        )
    while version < SCHEMA_VERSION:
        version += 1
        record = MIGRATIONS[version](record)
        record[SCHEMA_KEY] = version
    return record


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the upgraded records of one records.jsonl; unreadable lines are skipped with a RecordWarning."""
    path = Path(path)
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                warnings.warn(
                    f"{path}:{number}: unreadable record line skipped (torn write?)", RecordWarning, stacklevel=2
                )
                continue
            if not isinstance(record, dict):
                raise ResultsError(f"{path}:{number}: not a tfscale record (a JSON object per line)")
            yield upgrade(record, f"{path}:{number}")


def find_records_files(path: str | Path) -> list[Path]:
    """records.jsonl files under a records file, a run folder, a suite folder or the results root."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ResultsError(f"{path}: no such file or folder")
    direct = path / RECORDS_FILE
    if direct.is_file():
        return [direct]
    return sorted(path.rglob(RECORDS_FILE))


def load_records(*paths: str | Path) -> list[dict[str, Any]]:
    files = [f for p in paths for f in find_records_files(p)]
    if not files:
        raise ResultsError(f"{', '.join(map(str, paths))}: no {RECORDS_FILE} found")
    records = [r for f in files for r in read_records(f)]
    if not records:
        raise ResultsError(f"{', '.join(map(str, files))}: no readable records")
    return records


def load_results(*paths: str | Path) -> pd.DataFrame:
    """Records under the given paths (records file, run, suite or results root) as a pandas DataFrame, one row per
    config and run: the lines of a config's repeated processes combined (tfscale.repeats)."""
    import pandas as pd  # late: only result readers pay pandas' import time

    from tfscale.metrics import RECORD_COLUMNS
    from tfscale.repeats import combine_all

    frame = pd.DataFrame.from_records(combine_all(load_records(*paths)))
    missing = [c for c in RECORD_COLUMNS if c not in frame.columns]
    if missing:  # one concat: adding columns one at a time fragments the frame
        frame = pd.concat([frame, pd.DataFrame(dict.fromkeys(missing), index=frame.index, dtype=object)], axis=1)
    extra = [c for c in frame.columns if c not in RECORD_COLUMNS]
    return frame[list(RECORD_COLUMNS) + extra]


def load_env(run: str | Path) -> dict[str, Any]:
    """The env.json of a run folder, or {} when it has none."""
    path = Path(run) / ENV_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
