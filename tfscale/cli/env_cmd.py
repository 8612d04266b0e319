"""`tfscale env`: this host's environment as JSON (what each run stores as env.json)."""

from __future__ import annotations

import json

import click


@click.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Also write the JSON to this file.")
@click.option("--json", "as_json", is_flag=True, help="The JSON alone on standard output (the summary goes to none).")
def env(output: str | None, as_json: bool) -> None:
    """Print a one-paragraph summary, then the JSON: TF version and build, devices, CPU, memory, GPUs (NVML) and
    package versions."""
    from tfscale.host.envinfo import collect_env
    from tfscale.host.preflight import env_summary
    from tfscale.store.records import write_json_atomic

    document = collect_env()
    if not as_json:
        click.echo(env_summary(document) + "\n")
    click.echo(json.dumps(document, indent=1))
    if output:
        write_json_atomic(output, document)
