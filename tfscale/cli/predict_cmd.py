"""`tfscale predict RUN [RUN...] --devices 8 16 64`: step time, throughput and efficiency at device counts not run."""

from __future__ import annotations

from pathlib import Path

import click

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
def predict(paths: tuple[str, ...], devices: tuple[int, ...], old_devices: tuple[int, ...]) -> None:
    """Fit compute + alpha + beta * S * 2(N-1)/N per workload and strategy of the records under PATH... (records
    files, run or suite folders), and predict."""
    if old_devices:
        click.echo("note: --nodes is deprecated: it always meant total devices; use --devices", err=True)
    folders, more = split_arguments(paths)
    devices = devices + old_devices + tuple(more)
    if not devices:
        raise TfscaleError("give the device counts to predict: --devices 8 16 64")
    from tfscale import formatting as fmt
    from tfscale.predict import METHOD, holdout, link_of, unmodelled  # late: pandas only for this command
    from tfscale.predict import predict as predict_rows
    from tfscale.store import load_results
    from tfscale.textable import format_table

    frame = load_results(*folders)
    rows = predict_rows(frame, list(devices))
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
                    "fitted_on": r["fitted_on"],
                    "step (95 % interval)": fmt.ms(
                        r["predicted_step_s"], r["predicted_step_ci95_low_s"], r["predicted_step_ci95_high_s"]
                    ),
                    "examples/s": fmt.rate(r["predicted_throughput"]),
                    "efficiency": f"{fmt.percent(r['predicted_efficiency'])} {r['scaling']}",
                    "warning": "!" * bool(r["warnings"]),
                }
                for _, r in rows.iterrows()
            ]
        )
    )
    warned = rows[rows["warnings"] != ""]
    for text in dict.fromkeys(warned["warnings"]):
        which = warned[warned["warnings"] == text]
        counts = ", ".join(f"{r['model']} {r['strategy']} x{r['devices']}" for _, r in which.iterrows())
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
        inside = r["inside_interval"]
        verdict = "" if inside is None else "; inside its 95 % interval" if inside else "; OUTSIDE its 95 % interval"
        click.echo(
            f"hold-out: {r['model']} {r['strategy']}{link} x{r['devices']} predicted from {r['fitted_on']}: "
            f"{fmt.ms(r['predicted_step_s'])} vs measured {fmt.ms(r['measured_step_s'])} "
            f"({r['error']:+.1%}{verdict})"
        )
    click.echo(f"method: {METHOD}")
