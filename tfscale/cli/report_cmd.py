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
    """Render records (files, run folders, suite folders or a results root) as one HTML report; print the summary
    table."""
    summary_and_report([Path(p) for p in paths], Path(output) if output else default_report_path(paths, reports_dir))


def summary_and_report(paths: list[Path], output: Path) -> None:
    """The summary table on the terminal, then the HTML report (what `run`, `report` and `collect` end with)."""
    # Late imports: pandas and plotly load only once there are records to show.
    from tfscale.analysis import add_scaling, summary_rows
    from tfscale.report import write_report
    from tfscale.store import load_results
    from tfscale.textable import format_table

    click.echo(format_table(summary_rows(add_scaling(load_results(*paths)))))
    click.echo(f"report: {write_report(paths, output)}")
