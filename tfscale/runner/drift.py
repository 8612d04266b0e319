"""The drift between runs a new run's CIs cover (tfscale.stats.drift): estimated once, as the run starts, from the
suite's earlier runs on the same machine (its hardware, as `tfscale history` tells machines apart), and kept in the
run's env.json, so that a resumed run keeps the figure it began with. Parent side, no TensorFlow.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tfscale import metrics as m
from tfscale.errors import ResultsError
from tfscale.stats.drift import HISTORY_RUNS, RunDrift, between_runs, stored_estimate
from tfscale.stats.repeats import (
    HISTORY_COLUMNS,
    combine_all,
    explained_variance,
    run_process_spread,
    spread_of,
    valid_history,
)
from tfscale.store.records import RECORDS_FILE, RecordWarning, load_env, read_records

DRIFT_COLUMNS = (m.RUN_DRIFT_SD_REL, m.RUN_DRIFT_DF, m.RUN_DRIFT_RUNS)


def history_drift(earlier: list[list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The drift of the earlier runs' lines (earlier_runs), as env.json keeps it; None without two runs sharing an
    ok config."""
    # each as that run stated it, without a drift term of its own (else the drift would count itself)
    lines = [{**r, **dict.fromkeys(DRIFT_COLUMNS)} for run in earlier for r in run]
    processes = _processes(lines)

    def explained(record: Mapping[str, Any]) -> float:
        return explained_variance(processes[(record[m.RUN_ID], record[m.CONFIG_ID])], spread_of(record))

    drift = between_runs(combine_all(lines), explained)
    return None if drift is None else dataclasses.asdict(drift)


def history_spread(earlier: list[list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The spread between fresh processes pooled over the configs run in 2+ processes in the earlier runs' lines
    (earlier_runs; tfscale.stats.repeats.run_process_spread), as env.json keeps it; None without any.

    Why: one run's spread comes from a few pairs of processes (6 degrees of freedom in the quickstart) and swings
    between runs (0.0 % to 17.9 % sd in 8 runs here, 2026-12-07), so a run that drew a small one stated CIs too
    narrow for a rerun. bench_coverage (8 runs of 9 configs): stated CIs covered the other runs' median 59/72 = 0.82
    with it pooled, 50/72 = 0.69 re-read from the same records without; with the drift of
    tfscale.stats.repeats.explained_variance as well, 64/72 and 68/72 in two more sets."""
    spread = run_process_spread(list(_processes(line for run in earlier for line in run).values()))
    return None if spread is None else {"sd_log": spread.sd_log, "df": spread.df, "runs": len(earlier)}


def _processes(lines: Iterable[dict[str, Any]]) -> dict[tuple[Any, Any], list[dict[str, Any]]]:
    """The lines by run and config: each config's processes in one run."""
    found: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for line in lines:
        found.setdefault((line.get(m.RUN_ID), line.get(m.CONFIG_ID)), []).append(line)
    return found


def earlier_runs(suite_dir: Path, run_id: str, env: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The stored lines of the suite's HISTORY_RUNS latest runs under `suite_dir` (results/<suite>) on this run's
    machine (`env`: its environment), other than run `run_id`, one list per run. Unreadable run folders are left
    out (the sweep is not the place to report them)."""
    from tfscale.analysis.history import machine_key  # late: pandas, only where a suite has earlier runs

    folders = (
        [f for f in suite_dir.iterdir() if f.name != run_id and (f / RECORDS_FILE).is_file()]
        if suite_dir.is_dir()
        else []
    )
    if not folders:
        return []
    here = machine_key(env)
    envs = {folder: load_env(folder) for folder in folders}
    # the latest by when each began (env.json, read anyway for its machine): only their records are read
    latest = sorted((f for f in folders if machine_key(envs[f]) == here), key=lambda f: str(envs[f].get("captured_at")))
    earlier = []
    for folder in latest[-HISTORY_RUNS:]:
        try:
            with warnings.catch_warnings():  # a torn line of another run is that run's to report
                warnings.simplefilter("ignore", RecordWarning)
                earlier.append(list(read_records(folder / RECORDS_FILE, check=True)))
        except (ResultsError, OSError):
            continue
    return earlier


def kept_drift(kept: Any) -> RunDrift | None:
    """The drift as env.json keeps it, or None where it has none or what it has is not one (an edited file: the
    run's CIs then cover no drift, rather than the run stopping)."""
    found = stored_estimate(kept.get("sd_log"), kept.get("df"), kept.get("runs")) if isinstance(kept, dict) else None
    return None if found is None else RunDrift(*found)


def drift_columns(kept: Any) -> dict[str, Any]:
    """The record columns of a run's drift as env.json keeps it (empty values without one)."""
    drift = kept_drift(kept)
    values = (None, None, None) if drift is None else (drift.sd_log, drift.df, drift.runs)
    return dict(zip(DRIFT_COLUMNS, values, strict=True))


def drift_text(kept: Any) -> str | None:
    """One line for the run's start: the drift its CIs will cover, or None without one."""
    drift = kept_drift(kept)
    if drift is None:
        return None
    return (
        f"note: every CI of this run also covers the drift between runs of this suite on this machine: sd "
        f"{drift.sd_log:.1%} ({drift.df} degrees of freedom, from its {drift.runs} latest earlier runs)"
    )


def kept_history(kept: Any) -> dict[str, Any]:
    """The record columns of the earlier runs' process spread as env.json keeps it (empty values without one)."""
    found = valid_history(kept.get("sd_log"), kept.get("df"), kept.get("runs")) if isinstance(kept, dict) else None
    values = (None, None, None) if found is None else (found.sd_log, found.df, found.earlier_runs)
    return dict(zip(HISTORY_COLUMNS, values, strict=True))


def history_text(kept: Any) -> str | None:
    """One line for the run's start: the earlier runs' process spread its CIs will pool, or None without one."""
    sd, df, runs = kept_history(kept).values()
    if sd is None:
        return None
    return (
        f"note: every CI of this run also covers the spread between fresh processes measured in this suite's {runs} "
        f"latest earlier runs on this machine: sd {sd:.1%} ({df} degrees of freedom), pooled with this run's own"
    )
