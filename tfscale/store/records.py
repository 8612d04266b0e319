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
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfscale import metrics as m
from tfscale.axes import DATA_SYNTHETIC, TASK_RANDOM
from tfscale.errors import RecordWarning, ResultsError
from tfscale.metrics import SCHEMA_VERSION as SCHEMA_KEY
from tfscale.store.recordcheck import record_problem
from tfscale.untrusted import NAME_RULE, is_name, valid_text, visible

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
#     (repeat 0 .. N-1) that load_results combines into one record (tfscale.stats.repeats); version-2 lines ran once
#     (repeat 0). Precision columns (ci_target, ci_met, ci_half_width_rel, samples, warmup_stop, measure_stop) and
#     CI columns are new columns, empty for older records. Later in 0.4.0, without a new version: flops_per_step,
#     flops_per_replica_step, flops_method (empty for older records); the data axis and its pipeline knobs
#     (data_*, shuffle_buffer, prefetch, cache) and the input columns (data_source, input_*): older records read
#     one in-memory batch (data: synthetic, its knobs empty); task (older: random) and grad_noise_scale with its CI
#     and method (empty for older records).
#   4 (tfscale 0.4.0): units in every name: host_cpu_util_mean -> host_cpu_util_mean_pct, gpu_util_mean ->
#     gpu_util_mean_pct (0-100, as before), rank_throughput -> rank_throughput_examples_per_s, throughput_per_replica
#     -> throughput_per_replica_examples_per_s (RENAMED; values unchanged).
# A column added without changing any meaning needs no new version: load_results gives older records every column of
# RECORD_COLUMNS, empty where they lack it. A changed meaning or layout needs SCHEMA_VERSION + 1 and its update_to_N.
SCHEMA_VERSION = 4

RECORDS_FILE = "records.jsonl"
ENV_FILE = "env.json"
COMMBENCH_FILE = "commbench.jsonl"  # a run's all-reduce sweeps (tfscale.runner.commbench), read as records
SUITE_FILE = "suite.yaml"  # the suite as read, and PLAN_FILE every config's resolved spec (tfscale.store.runfolder)
PLAN_FILE = "plan.json"
FIGURES_FILE = "figures.json"  # each config's headline figures, a cache `tfscale history` keeps (analysis.history)
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


# Stored columns whose name changed, old -> new, by the version that renamed them (docs/records.md lists them).
RENAMED: dict[int, dict[str, str]] = {
    4: {
        "gpu_util_mean": m.GPU_UTIL_MEAN_PCT,
        "host_cpu_util_mean": m.HOST_CPU_UTIL_MEAN_PCT,
        "rank_throughput": m.RANK_THROUGHPUT_EXAMPLES_PER_S,
        "throughput_per_replica": m.THROUGHPUT_PER_REPLICA_EXAMPLES_PER_S,
    }
}


def update_to_4(record: dict[str, Any]) -> dict[str, Any]:
    """Version 3 names lacked their unit: the same values under the names of RENAMED[4]."""
    return {RENAMED[4].get(key, key): value for key, value in record.items()}


# update_to_N takes a record of version N-1 and returns it as version N.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {2: update_to_2, 3: update_to_3, 4: update_to_4}


def check_run_id(run_id: str) -> str:
    """`run_id` if valid, else ResultsError naming the rule. A run id names a folder and goes into simulated-host
    namespace names: a name (tfscale.untrusted.NAME, matched in full: "r1\\n" is not one)."""
    if not is_name(run_id):
        raise ResultsError(f"--run-id '{visible(str(run_id))}': a run id is {NAME_RULE}")
    return run_id


def run_dir(results_dir: str | Path, suite: str, run_id: str) -> Path:
    return Path(results_dir) / suite / check_run_id(run_id)


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
    """Append one record as one line, durably (flush + fsync) before returning, under the folder's lock. A line
    that cannot be written whole (a full disk) is cut off again, so the file keeps exactly the records before it,
    and the error names the folder (ResultsError)."""
    line = (json.dumps({**record, SCHEMA_KEY: SCHEMA_VERSION}, sort_keys=False, allow_nan=False) + "\n").encode()
    path = Path(path)
    try:
        with locked(path):
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                try:
                    written = 0
                    while written < len(line):
                        written += os.write(fd, line[written:])
                    os.fsync(fd)
                except OSError:
                    os.ftruncate(fd, size)  # no partial line: the records before stay as they were
                    raise
            finally:
                os.close(fd)
    except OSError as error:
        raise ResultsError(
            f"{path.parent}: cannot write a record ({error.strerror or error}); the records before it are intact: "
            "free space, then resume with --resume"
        ) from None


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


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write text (as UTF-8) or bytes to a temporary name beside `path`, fsync, then rename: readers never see half
    a file, and a failure (a full disk, a character UTF-8 cannot write) leaves the file that was there as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def check_output(output: str | Path, inputs: Iterable[str | Path] = ()) -> Path:
    """`output` as a Path, unless writing it would replace records: one of the files read (`inputs`), or any
    records, commbench, env or plan file (ResultsError: `report -o RUN/records.jsonl` replaced the records)."""
    output = Path(output)
    taken = {Path(p).resolve() for p in inputs}
    if output.name in (RECORDS_FILE, ENV_FILE, COMMBENCH_FILE, PLAN_FILE) or output.resolve() in taken:
        raise ResultsError(f"{output}: a run's own file (records, environment, plan): write the output elsewhere")
    if output.is_dir():
        raise ResultsError(f"{output}: is a folder; give a file to write")
    return output


def check_outputs(targets: list, inputs: Iterable[str | Path], options: str) -> list[Path | None]:
    """check_output of each target given (None: an option not given, kept as None), and none two of them the same
    file (ResultsError naming `options`, e.g. "-o, --junit and --markdown")."""
    inputs = list(inputs)
    checked = [None if target is None else check_output(target, inputs) for target in targets]
    given = [path.resolve() for path in checked if path is not None]
    if len(set(given)) < len(given):
        raise ResultsError(f"{options} must name different files")
    return checked


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write JSON atomically (write_atomic)."""
    write_atomic(path, json.dumps(data, indent=1, allow_nan=False))


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


# A lone surrogate reaches a string only through a JSON escape (the line itself decoded as strict UTF-8); no report,
# table or file can write it back out.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _without_lone_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {valid_text(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


def read_records(path: str | Path, check: bool = False) -> Iterator[dict[str, Any]]:
    """Yield the upgraded records of one records.jsonl (or commbench.jsonl); unreadable lines (not UTF-8, not JSON:
    a torn write) are skipped with a RecordWarning; a line that is JSON but not a record, or with `check` not one
    readers can compute with (record_problem), is an error naming the line and field."""
    path = Path(path)
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
                if not line.strip():
                    continue
                record = json.loads(line)
                if _ESCAPED_SURROGATE.search(line):
                    record = _without_lone_surrogates(record)
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                warnings.warn(
                    f"{path}:{number}: unreadable record line skipped (torn write?)", RecordWarning, stacklevel=2
                )
                continue
            if not isinstance(record, dict):
                raise ResultsError(f"{path}:{number}: not a tfscale record (a JSON object per line)")
            record = upgrade(record, f"{path}:{number}")
            problem = record_problem(record) if check else None
            if problem:
                raise ResultsError(f"{path}:{number}: not a tfscale record: {problem}")
            yield record


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
    return sorted(found for found in path.rglob(RECORDS_FILE) if found.is_file())


def load_records(*paths: str | Path) -> list[dict[str, Any]]:
    files = [f for p in paths for f in find_records_files(p)]
    if not files:
        raise ResultsError(f"{', '.join(map(str, paths))}: no {RECORDS_FILE} found")
    records = [r for f in files for r in read_records(f, check=True)]
    if not records:
        raise ResultsError(f"{', '.join(map(str, files))}: no readable records")
    return records


def load_results(*paths: str | Path) -> pd.DataFrame:
    """Records under the given paths (records file, run, suite or results root) as a pandas DataFrame, one row per
    config and run: the lines of a config's repeated processes combined (tfscale.stats.repeats)."""
    import pandas as pd  # late: only result readers pay pandas' import time

    from tfscale.stats.repeats import combine_all

    frame = pd.DataFrame.from_records(combine_all(load_records(*paths)))
    missing = [c for c in m.RECORD_COLUMNS if c not in frame.columns]
    if missing:  # one concat: adding columns one at a time fragments the frame
        frame = pd.concat([frame, pd.DataFrame(dict.fromkeys(missing), index=frame.index, dtype=object)], axis=1)
    # records older than the data and task axes read one in-memory batch with random targets
    frame[m.DATA] = frame[m.DATA].where(frame[m.DATA].notna(), DATA_SYNTHETIC)
    frame[m.TASK] = frame[m.TASK].where(frame[m.TASK].notna(), TASK_RANDOM)
    extra = [c for c in frame.columns if c not in m.RECORD_COLUMNS]
    return frame[list(m.RECORD_COLUMNS) + extra]


def load_env(run: str | Path) -> dict[str, Any]:
    """The env.json of a run folder, or {} when it has none."""
    path = Path(run) / ENV_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
