"""tfscale from Python: `run`, `plan` and `report`, the same path as the `tfscale` command (its click commands are
thin wrappers over these), for notebooks and scripts.

The same checks and errors as the CLI: a bad suite or option raises `tfscale.errors.TfscaleError` (a `SuiteError`
for the suite) with the one line the CLI prints; Ctrl-C stops the workers, keeps every finished record, prints the
resume command and raises KeyboardInterrupt. Where the CLI exits 1 because a config failed, `run` returns the
records: their `status` column says which.

Importing this module imports neither TensorFlow (only worker processes do) nor pandas (loaded once there are
records to return).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfscale.errors import SuiteError
from tfscale.runner.sweep import PRINT, QUIET, SlurmArgs, run_suite, summary_and_report

if TYPE_CHECKING:
    import pandas as pd

    from tfscale.suite.planner import Plan


def load(suite: str | Path | Mapping[str, Any]):
    """A validated `Suite` from a suite file's path, from a run folder (the suite it was run with:
    tfscale.store.runfolder) or from a dict of the same keys (its user models are then imported relative to the current
    directory)."""
    from tfscale.store.runfolder import suite_of_run
    from tfscale.suite.suitefile import load_suite, suite_from_dict

    if isinstance(suite, Mapping):
        return suite_from_dict(dict(suite))
    if not isinstance(suite, (str, Path)):
        raise SuiteError(f"suite: give a suite file's path, a run folder or a dict, got {type(suite).__name__}")
    return suite_of_run(suite) if Path(suite).is_dir() else load_suite(suite)


def plan(suite: str | Path | Mapping[str, Any]) -> Plan:
    """The configs a suite expands to (`Plan.specs`, one `RunSpec` each), without running anything. Raises
    SuiteError."""
    from tfscale.suite.planner import expand

    return expand(load(suite))


def history(path: str | Path):
    """Every run of the suite folder `path` (results/<suite>) as series per machine, config and headline figure, and
    the steps found in them (analysis.history.History: `series`, `steps`, `runs` DataFrames; docs/history.md)."""
    from tfscale.analysis.history import history as of_suite  # late: pandas

    return of_suite(path)


def load_results(*paths: str | Path, derived: bool = True) -> pd.DataFrame:
    """The records under the paths (records files, run or suite folders, a results root) as a DataFrame, one row per
    config and run (repeats combined), with every derived column of docs/records.md (tfscale.analyze); `derived`
    False: the stored columns only."""
    from tfscale.analysis import analyze  # late: pandas
    from tfscale.store.records import load_results as stored

    frame = stored(*paths)
    return analyze(frame) if derived else frame


def analyze(frame: pd.DataFrame) -> pd.DataFrame:
    """A records DataFrame (load_results(..., derived=False), or one of your own) with every derived column."""
    from tfscale.analysis import analyze as derive  # late: pandas

    return derive(frame)


def report(
    paths: str | Path | list[str | Path],
    output: str | Path | None = None,
    *,
    reports_dir: str | Path = "reports",
    quiet: bool = False,
) -> Path:
    """Render records (files, run folders, suite folders or a results root) as one self-contained HTML report;
    returns its path (default: reports/<suite>.html for a run or suite folder, else reports/report.html). Prints
    the summary table unless `quiet`."""
    return summary_and_report(paths, output, reports_dir, QUIET if quiet else PRINT)


def run(
    suite: str | Path | Mapping[str, Any],
    *,
    run_id: str | None = None,
    results_dir: str | Path = "results",
    reports_dir: str | Path = "reports",
    resume: bool | None = None,
    rerun_failed: bool = False,
    fresh: bool = False,
    no_report: bool = False,
    launcher: str = "local",
    partition: str | None = None,
    account: str | None = None,
    time_limit: str | None = None,
    slurm_args: tuple[str, ...] | list[str] = (),
    quiet: bool = False,
    label: str | None = None,
) -> pd.DataFrame:
    """Run every config of `suite` (a suite file's path, a run folder or a dict), store the records in
    results_dir/<suite>/<run_id>/ and write reports_dir/<suite>/<run_id>.html and reports_dir/<suite>.html (the
    latest); return the run's records with every derived column (tfscale.load_results), `frame.attrs["run_dir"]`
    the run folder, `frame.attrs["report"]` the report. The keywords are the options of `tfscale run`."""
    return run_suite(
        load(suite),
        suite_file=None if isinstance(suite, Mapping) else str(suite),
        run_id=run_id,
        results_dir=str(results_dir),
        reports_dir=str(reports_dir),
        resume=resume,
        rerun_failed=rerun_failed,
        fresh=fresh,
        no_report=no_report,
        launcher=launcher,
        slurm=SlurmArgs(partition, account, time_limit, tuple(slurm_args)),
        echo=QUIET if quiet else PRINT,
        label=label,
    ).frame()
