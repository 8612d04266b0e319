"""`tfscale report PATH... [-o FILE]`: one self-contained HTML report from records."""

from __future__ import annotations

import click

from tfscale.cli.echo import click_echo
from tfscale.runner.sweep import summary_and_report


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="HTML file to write.")
@click.option("--reports-dir", default="reports", show_default=True, help="Folder of the default output.")
def report(paths: tuple[str, ...], output: str | None, reports_dir: str) -> None:
    """Render records (files, run folders, suite folders or a results root) as one HTML report; print the summary
    table."""
    summary_and_report(list(paths), output, reports_dir, click_echo())
