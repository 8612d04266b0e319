"""`tfscale collect DIR`: the result parts of a run started from `tfscale launch`'s files, as records and a report."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False))
@click.option("--run-id", default=None, help="Run folder name for the records (default: a new timestamp).")
@click.option("--results-dir", default="results", show_default=True, help="Root folder of run folders.")
@click.option("--reports-dir", default="reports", show_default=True, help="Folder of the HTML report.")
@click.option("--no-report", is_flag=True, help="Store records only; skip the summary and the HTML report.")
def collect(folder: str, run_id: str | None, results_dir: str, reports_dir: str, no_report: bool) -> None:
    """Merge the result parts in DIR/results (written by the tasks of DIR's launch files) into records, as
    `tfscale run` does, then print the summary and write the report."""
    from tfscale.cli.echo import click_echo
    from tfscale.runner.collect import collect as collect_parts
    from tfscale.runner.configs import default_run_id
    from tfscale.runner.sweep import summary_and_report

    done = collect_parts(folder, results_dir, run_id or default_run_id())
    click.echo(f"collected {len(done.records)} process(es) into {done.run_dir / 'records.jsonl'}")
    if done.not_run:
        click.echo(f"no result part yet for {len(done.not_run)} process(es): {', '.join(done.not_run)}")
    if done.records and not no_report:
        suite = done.run_dir.parent.name
        own = Path(reports_dir) / suite / f"{done.run_dir.name}.html"
        summary_and_report([done.run_dir], own, reports_dir, click_echo(), Path(reports_dir) / f"{suite}.html")
