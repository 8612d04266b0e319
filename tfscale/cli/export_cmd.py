"""`tfscale export PATH --format csv|parquet`: the records as one table file for notebooks."""

from __future__ import annotations

from pathlib import Path

import click

from tfscale.errors import TfscaleError


@click.command()
@click.argument("path", type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="File to write (default: beside the records).")
def export(path: str, fmt: str, output: str | None) -> None:
    """Write the records under PATH (file, run, suite folder or results root), with the scaling columns."""
    from tfscale.analysis import add_scaling  # late: pandas only for this command
    from tfscale.store import load_results

    frame = add_scaling(load_results(path))
    source = Path(path)
    target = Path(output) if output else (source.parent if source.is_file() else source) / f"records.{fmt}"
    if fmt == "csv":
        frame.to_csv(target, index=False)  # list columns (step_times_s, rank_*) are written as their text
    else:
        try:
            frame.to_parquet(target, index=False)
        except ImportError as error:
            raise TfscaleError(f"--format parquet needs pyarrow (pip install pyarrow): {error}") from None
    click.echo(f"wrote {len(frame)} records to {target}")
