"""`tfscale run SUITE`: plan, run every config in its own worker process, store records, write the report."""

from __future__ import annotations

from pathlib import Path

import click

from tfscale import metrics as m
from tfscale.plan import expand
from tfscale.suite import load_suite


@click.command()
@click.argument("suite_file", metavar="SUITE", type=click.Path(dir_okay=False))
@click.option("--results-dir", default="results", show_default=True, help="Root of results/<suite>/<run_id>/.")
@click.option("--reports-dir", default="reports", show_default=True, help="Where <suite>.html is written.")
@click.option("--run-id", default=None, help="Name of the run folder (default: a timestamp).")
@click.option("--no-report", is_flag=True, help="Store records only; skip the HTML report.")
def run(suite_file: str, results_dir: str, reports_dir: str, run_id: str | None, no_report: bool) -> None:
    """Run every config of SUITE and report. Exits 1 when any config failed or timed out."""
    from tfscale.envinfo import collect_env
    from tfscale.progress import Progress
    from tfscale.runner import default_run_id, run_plan

    plan = expand(load_suite(suite_file))
    run_id = run_id or default_run_id()
    click.echo(f"suite {plan.suite.name!r}: {len(plan.specs)} configs, run {run_id}; capturing environment"
               + ("; all-reduce sweeps (commbench) first" if plan.suite.commbench else ""))
    result = run_plan(plan, results_dir, run_id, env=collect_env(), on_record=Progress(len(plan.specs), click.echo))
    click.echo(f"records: {result.run_dir / 'records.jsonl'}")
    for error in result.commbench_errors:
        click.echo(f"warning: {error}", err=True)

    if not no_report:
        _report(result.run_dir, Path(reports_dir) / f"{plan.suite.name}.html")
    failed = [r for r in result.records if r[m.STATUS] != m.STATUS_OK]
    if failed:
        click.echo(f"{len(failed)} of {len(result.records)} configs did not succeed (see the report's warnings)",
                   err=True)
        raise click.exceptions.Exit(1)


def _report(run_dir: Path, output: Path) -> None:
    # Late imports: pandas and plotly load only once the sweep is over.
    from tfscale.analysis import add_scaling, summary_rows
    from tfscale.report import write_report
    from tfscale.store import load_results
    from tfscale.textable import format_table

    click.echo(format_table(summary_rows(add_scaling(load_results(run_dir)))))
    click.echo(f"report: {write_report([run_dir], output)}")
