"""`tfscale launch SUITE --target slurm|kubernetes|hosts`: write what a real cluster needs to run the suite."""

from __future__ import annotations

from pathlib import Path

import click

from tfscale import contract
from tfscale.api import plan as plan_suite
from tfscale.errors import TfscaleError
from tfscale.launch import TARGETS
from tfscale.launch.emit import LaunchOptions, emit


@click.command()
@click.argument("suite_file", metavar="SUITE", type=click.Path(dir_okay=False))
@click.option("--target", type=click.Choice(list(TARGETS)), required=True, help="What to emit.")
@click.option(
    "-o", "--output", type=click.Path(file_okay=False), help="Folder (default results/<suite>/launch-<target>)."
)
@click.option("--partition", help="Slurm partition.")
@click.option("--account", help="Slurm account.")
@click.option(
    "--time-limit",
    "time_limit",
    default=None,
    help="Slurm time limit of the batch job (default: the sum of its steps' timeout_s, which covers every step).",
)
@click.option("--time", "old_time_limit", default=None, hidden=True, help="Deprecated: --time-limit, as tfscale run.")
@click.option(
    "--python",
    default=None,
    show_default="slurm and hosts: the interpreter running tfscale launch; kubernetes: python on the image's PATH",
    help="Python the tasks start the worker with (it must have tfscale installed on the nodes or in the image).",
)
@click.option(
    "--port-base", default=contract.DEFAULT_PORT_BASE, show_default=True, help="First port of each node's TF tasks."
)
@click.option(
    "--image",
    default=None,
    help="Container image with tfscale installed (kubernetes: required; docker/Dockerfile builds one).",
)
@click.option("--hosts", help="Comma-separated host names (hosts target).")
@click.option("--pod-cpus", default=8, show_default=True, help="CPUs each pod requests (kubernetes).")
@click.option("--pod-memory", default="32Gi", show_default=True, help="Memory each pod requests (kubernetes).")
def launch(
    suite_file: str,
    target: str,
    output: str | None,
    partition: str | None,
    account: str | None,
    time_limit: str | None,
    old_time_limit: str | None,
    port_base: int,
    image: str | None,
    hosts: str | None,
    pod_cpus: int,
    pod_memory: str,
    python: str | None,
) -> None:
    """Write a Slurm batch script, Kubeflow TFJob manifests or per-host commands for SUITE's configs."""
    if old_time_limit is not None:
        click.echo("note: --time is deprecated: use --time-limit, as tfscale run does", err=True)
        time_limit = time_limit or old_time_limit
    plan = plan_suite(suite_file)
    if target == "hosts" and not hosts:
        raise TfscaleError("--target hosts needs --hosts h1,h2,...")
    options = LaunchOptions(
        partition=partition,
        account=account,
        time_limit=time_limit,
        python=python,
        port_base=port_base,
        image=image,
        hosts=tuple(h for h in (hosts or "").split(",") if h),
        pod_cpus=pod_cpus,
        pod_memory=pod_memory,
    )
    out = Path(output or Path("results") / plan.suite.name / f"launch-{target}")
    for path in emit(plan, target, out, options):
        click.echo(f"wrote {path}")
    for config_id, why in TARGETS[target].not_emitted(plan, options).items():
        click.echo(f"not emitted: config {config_id}: {why}")
    click.echo(f"{len(plan.specs)} config specs in {out / 'specs'}; result parts will appear in {out / 'results'}")
