"""The drift between runs a new run's CIs cover (tfscale.stats.drift): estimated once, as the run starts, from the
suite's earlier runs on the same machine (its hardware, as `tfscale history` tells machines apart), and kept in the
run's env.json, so that a resumed run keeps the figure it began with. Parent side, no TensorFlow.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from tfscale import metrics as m
from tfscale.errors import ResultsError
from tfscale.stats.drift import HISTORY_RUNS, RunDrift, between_runs
from tfscale.stats.repeats import combine_all
from tfscale.store.records import RECORDS_FILE, RecordWarning, load_env, read_records

DRIFT_COLUMNS = (m.RUN_DRIFT_SD_REL, m.RUN_DRIFT_DF, m.RUN_DRIFT_RUNS)


def history_drift(suite_dir: Path, run_id: str, env: dict[str, Any]) -> dict[str, Any] | None:
    """The drift of the suite's HISTORY_RUNS latest runs under `suite_dir` (results/<suite>) on this run's machine
    (`env`: its environment), other than run `run_id`, as env.json keeps it; None without two such runs sharing
    an ok config. Unreadable run folders are left out (the sweep is not the place to report them)."""
    from tfscale.analysis.history import machine_key  # late: pandas, only where a suite has earlier runs

    folders = (
        [f for f in suite_dir.iterdir() if f.name != run_id and (f / RECORDS_FILE).is_file()]
        if suite_dir.is_dir()
        else []
    )
    if not folders:
        return None
    here = machine_key(env)
    earlier = []
    for folder in folders:
        if machine_key(load_env(folder)) != here:
            continue
        try:
            with warnings.catch_warnings():  # a torn line of another run is that run's to report
                warnings.simplefilter("ignore", RecordWarning)
                lines = list(read_records(folder / RECORDS_FILE, check=True))
        except (ResultsError, OSError):
            continue
        if lines:
            earlier.append((min(str(r.get(m.STARTED_AT) or "") for r in lines), lines))
    earlier.sort(key=lambda run: run[0])
    # each as that run stated it, without a drift term of its own (else the drift would count itself)
    lines = [{**r, **dict.fromkeys(DRIFT_COLUMNS)} for _, run in earlier[-HISTORY_RUNS:] for r in run]
    drift = between_runs(combine_all(lines))
    return None if drift is None else {"sd_log": drift.sd_log, "df": drift.df, "runs": drift.runs}


def drift_columns(kept: dict[str, Any] | None) -> dict[str, Any]:
    """The record columns of a run's drift as env.json keeps it (empty values without one)."""
    if not isinstance(kept, dict):
        return dict.fromkeys(DRIFT_COLUMNS)
    return dict(zip(DRIFT_COLUMNS, (kept.get("sd_log"), kept.get("df"), kept.get("runs")), strict=True))


def drift_text(kept: dict[str, Any] | None) -> str | None:
    """One line for the run's start: the drift its CIs will cover, or None without one."""
    if not isinstance(kept, dict):
        return None
    drift = RunDrift(float(kept["sd_log"]), int(kept["df"]), int(kept["runs"]))
    return (
        f"note: every CI of this run also covers the drift between runs of this suite on this machine: sd "
        f"{drift.sd_log:.1%} ({drift.df} degrees of freedom, from its {drift.runs} latest earlier runs)"
    )
