"""`tfscale run SUITE`: plan, run every config in its own worker process, store records, write the report
(tfscale.runner.sweep.run_suite, which `tfscale.run` from Python calls too).

Resume: configs are identified by config_id; in a run folder that already has records, configs with a record are
skipped (default when --run-id names an existing run), --rerun-failed runs failed ones again (their old records are
removed first), --fresh starts a new run. Ctrl-C (or SIGTERM) stops the workers, keeps every finished record and
prints the command that resumes; a second Ctrl-C kills the workers at once and exits.
"""

from __future__ import annotations

import click

from tfscale.api import load
from tfscale.cli.echo import click_echo
from tfscale.runner.sweep import INTERRUPTED_EXIT, RUN_LAUNCHERS, SlurmArgs, run_suite


@click.command()
@click.argument("suite_file", metavar="SUITE")
@click.option("--results-dir", default="results", show_default=True, help="Root of results/<suite>/<run_id>/.")
@click.option("--reports-dir", default="reports", show_default=True, help="Where <suite>.html is written.")
@click.option("--run-id", default=None, help="Name of the run folder (default: a timestamp).")
@click.option(
    "--resume/--no-resume",
    default=None,
    help="Skip configs that already have a record in the run folder (default: on when it exists).",
)
@click.option("--rerun-failed", is_flag=True, help="Also run again the configs whose record says failed/timeout.")
@click.option("--fresh", is_flag=True, help="Start a new run (a new timestamped run id).")
@click.option("--no-report", is_flag=True, help="Store records only; skip the HTML report.")
@click.option(
    "--launcher",
    type=click.Choice(list(RUN_LAUNCHERS)),
    default="local",
    show_default=True,
    help="local: worker processes on this host; slurm: each config a job step in a Slurm allocation.",
)
@click.option("--partition", default=None, help="slurm: partition of the allocation.")
@click.option("--account", default=None, help="slurm: account charged for the allocation.")
@click.option("--time-limit", default=None, help="slurm: time limit of the allocation (e.g. 2:00:00).")
@click.option("--slurm-arg", "slurm_args", multiple=True, help="slurm: extra salloc argument (repeatable).")
@click.option(
    "--label",
    default=None,
    help="A name for this run (a release, a commit) kept in its plan.json and shown by `tfscale history`.",
)
def run(
    suite_file: str,
    results_dir: str,
    reports_dir: str,
    run_id: str | None,
    resume: bool | None,
    rerun_failed: bool,
    fresh: bool,
    no_report: bool,
    launcher: str,
    partition: str | None,
    account: str | None,
    time_limit: str | None,
    slurm_args: tuple[str, ...],
    label: str | None,
) -> None:
    """Run every config of SUITE (a suite file, or a run folder: the suite that run was run with, again) and
    report. Exits 1 when any config failed or timed out."""
    try:
        outcome = run_suite(
            load(suite_file),
            suite_file=suite_file,
            run_id=run_id,
            results_dir=results_dir,
            reports_dir=reports_dir,
            resume=resume,
            rerun_failed=rerun_failed,
            fresh=fresh,
            no_report=no_report,
            launcher=launcher,
            slurm=SlurmArgs(partition, account, time_limit, slurm_args),
            echo=click_echo(),
            label=label,
        )
    except KeyboardInterrupt:  # run_suite stopped the workers and printed the resume command
        raise click.exceptions.Exit(INTERRUPTED_EXIT) from None
    if outcome.failed:
        raise click.exceptions.Exit(1)
