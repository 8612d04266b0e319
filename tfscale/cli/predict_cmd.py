"""`tfscale predict RUN [RUN...] --devices 8 16 64`: step time, throughput and efficiency at device counts not run."""

from __future__ import annotations

from pathlib import Path

import click

from tfscale import metrics as m
from tfscale.errors import TfscaleError


def split_arguments(words: tuple[str, ...]) -> tuple[list[str], list[int]]:
    """(paths, device counts) of PATH... : `--devices 8 16 64` leaves 16 and 64 among them (click gives an option
    one value), so a word that names no file or folder and is a whole number is a device count."""
    paths, counts = [], []
    for word in words:
        if not Path(word).exists() and word.isdigit():
            counts.append(int(word))
        elif Path(word).exists():
            paths.append(word)
        else:
            raise TfscaleError(f"{word}: no such file or folder (and not a device count)")
    if not paths:
        raise TfscaleError("give the records to predict from: tfscale predict RUN [RUN...] --devices 8 16 64")
    return paths, counts


@click.command()
@click.argument("paths", metavar="PATH...", nargs=-1, required=True)
@click.option(
    "--devices",
    "devices",
    type=int,
    multiple=True,
    help="Total device counts (nodes x devices per node) to predict: --devices 8 16 64.",
)
@click.option("--nodes", "old_devices", type=int, multiple=True, hidden=True, help="Deprecated: --devices.")
@click.option("--json", "as_json", is_flag=True, help="Predictions, hold-out checks, method: JSON alone on stdout.")
def predict(paths: tuple[str, ...], devices: tuple[int, ...], old_devices: tuple[int, ...], as_json: bool) -> None:
    """Fit compute + alpha + beta * S * 2(N-1)/N per workload and strategy of the records under PATH... (records
    files, run or suite folders), and predict."""
    if old_devices:
        click.echo("note: --nodes is deprecated: it always meant total devices; use --devices", err=True)
    folders, more = split_arguments(paths)
    devices = devices + old_devices + tuple(more)
    if not devices:
        raise TfscaleError("give the device counts to predict: --devices 8 16 64")
    from tfscale.analysis.predict import METHOD, holdout, unmodelled  # late: pandas only for this command
    from tfscale.analysis.predict import predict as predict_rows
    from tfscale.store.records import load_results

    frame = load_results(*folders)
    rows = predict_rows(frame, list(devices))
    if as_json:
        from tfscale.jsonout import dumps, table

        document = {
            "predictions": table(rows),
            "not_predicted": [{"what": what, "why": why} for what, why in unmodelled(frame)],
            "holdout": table(holdout(frame)),
            "method": METHOD,
        }
        click.echo(dumps(document))
    else:
        show(frame, rows)


def show(frame, rows) -> None:
    """The predictions for a person: a table, its warnings, what was not predicted, the hold-out checks, the method."""
    from tfscale import formatting as fmt
    from tfscale.analysis.predict import METHOD, holdout, link_of, unmodelled
    from tfscale.textable import format_table

    if rows.empty:
        click.echo("nothing to predict: no multi-device config with measured communication and a baseline")
        return
    links = any(link_of(r) for _, r in rows.iterrows())  # a link column only where simulated hosts were run
    click.echo(
        format_table(
            [
                {
                    "model": r["model"],
                    "strategy": r["strategy"],
                    **({"link": link_of(r) or ""} if links else {}),
                    "devices": r["devices"],
                    m.FITTED_ON: r[m.FITTED_ON],
                    "step (95 % interval)": fmt.ms(
                        r[m.PREDICTED_STEP_S], r[m.PREDICTED_STEP_CI95_LOW_S], r[m.PREDICTED_STEP_CI95_HIGH_S]
                    ),
                    "examples/s": fmt.rate(r[m.PREDICTED_THROUGHPUT_EXAMPLES_PER_S]),
                    "efficiency": f"{fmt.percent(r[m.PREDICTED_EFFICIENCY])} {r[m.SCALING]}",
                    "warning": "!" * bool(r[m.PREDICTION_WARNINGS]),
                }
                for _, r in rows.iterrows()
            ]
        )
    )
    warned = rows[rows[m.PREDICTION_WARNINGS] != ""]
    for text in dict.fromkeys(warned[m.PREDICTION_WARNINGS]):
        which = warned[warned[m.PREDICTION_WARNINGS] == text]
        counts = ", ".join(f"{r[m.MODEL]} {r[m.STRATEGY]} x{r[m.DEVICES]}" for _, r in which.iterrows())
        click.echo(f"warning (!): {counts}: {text}")
    for what, why in unmodelled(frame):
        click.echo(f"not predicted: {what}: {why}")
    checks = holdout(frame)
    if checks.empty:
        click.echo(
            "hold-out: none (a check needs three or more multi-device counts of a strategy: fitted on fewer, the "
            "model's two parameters fit any points)"
        )
    for _, r in checks.iterrows():
        link = f" @{link_of(r)}" if link_of(r) else ""
        inside = r[m.INSIDE_INTERVAL]
        verdict = "" if inside is None else "; inside its 95 % interval" if inside else "; OUTSIDE its 95 % interval"
        click.echo(
            f"hold-out: {r[m.MODEL]} {r[m.STRATEGY]}{link} x{r[m.DEVICES]} predicted from {r[m.FITTED_ON]}: "
            f"{fmt.ms(r[m.PREDICTED_STEP_S])} vs measured {fmt.ms(r[m.MEASURED_STEP_S])} "
            f"({fmt.change(r[m.PREDICTION_ERROR])}{verdict})"
        )
    click.echo(f"method: {METHOD}")
