"""`tfscale export PATH --format csv|parquet|tensorboard`: the records as one table file for notebooks, or as a
TensorBoard HParams experiment."""

from __future__ import annotations

from pathlib import Path

import click

from tfscale.errors import TfscaleError

FORMATS = ("csv", "parquet", "tensorboard")


@click.command()
@click.argument("path", type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="csv", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    help="File to write (csv, parquet), or folder (tensorboard); default: beside the records.",
)
def export(path: str, fmt: str, output: str | None) -> None:
    """Write the records under PATH (file, run, suite folder or results root), with the scaling columns: as one
    table, or as an HParams experiment (axes as hyperparameters, figures as metrics) for `tensorboard --logdir`."""
    from tfscale.api import load_results  # late: pandas only for this command
    from tfscale.store.records import check_output, find_records_files, write_atomic

    source = Path(path)
    beside = source.parent if source.is_file() else source
    read = find_records_files(path)
    frame = load_results(path)  # with every derived column (tfscale.analyze)
    if fmt == "tensorboard":
        from tfscale.store.hparams import write_hparams

        target = Path(output) if output else beside / "tensorboard"
        if target.is_file():
            raise TfscaleError(f"{target}: is a file; --format tensorboard writes a folder")
        trials = write_hparams(frame, target)
        click.echo(f"wrote {trials} trials to {target} (tensorboard --logdir {target}, HPARAMS tab)")
        return
    target = check_output(Path(output) if output else beside / f"records.{fmt}", read)
    if fmt == "csv":
        write_atomic(target, frame.to_csv(index=False))  # list columns (step_times_s, rank_*) as their text
    else:
        try:
            write_atomic(target, frame.to_parquet(index=False))
        except ImportError:  # pandas' own message runs over several lines
            raise TfscaleError("--format parquet needs pyarrow: pip install 'tfscale[parquet]'") from None
    click.echo(f"wrote {len(frame)} records to {target}")
