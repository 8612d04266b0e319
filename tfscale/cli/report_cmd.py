"""`tfscale report PATH... [-o FILE]`: one self-contained HTML report from records."""

from __future__ import annotations

from pathlib import Path

import click


def default_report_path(paths: tuple[str, ...], reports_dir: str) -> Path:
    """reports/<suite>.html when PATH is a run or suite folder (results/<suite>/<run>), else reports/report.html."""
    if len(paths) == 1:
        path = Path(paths[0])
        if (path / "records.jsonl").is_file():
            return Path(reports_dir) / f"{path.parent.name}.html"
        if path.is_dir() and any(path.glob("*/records.jsonl")):
            return Path(reports_dir) / f"{path.name}.html"
    return Path(reports_dir) / "report.html"


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="HTML file to write.")
@click.option("--reports-dir", default="reports", show_default=True, help="Folder of the default output.")
def report(paths: tuple[str, ...], output: str | None, reports_dir: str) -> None:
    """Render records (files, run folders, suite folders or a results root) as one HTML report."""
    from tfscale.report import write_report  # late: pandas and plotly load only for this command

    written = write_report(list(paths), output or default_report_path(paths, reports_dir))
    click.echo(f"report: {written}")
