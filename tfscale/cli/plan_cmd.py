"""`tfscale plan SUITE`: the expanded configs, without running (or importing) anything heavy."""

from __future__ import annotations

import click

from tfscale.api import plan as plan_suite
from tfscale.netsim.network import unavailable_reason
from tfscale.planner import network_note, plan_rows
from tfscale.preflight import gpu_preflight
from tfscale.textable import format_table


@click.command()
@click.argument("suite_file", metavar="SUITE", type=click.Path(dir_okay=False))
def plan(suite_file: str) -> None:
    """Print the configs SUITE expands to and their count."""
    result = plan_suite(suite_file)
    click.echo(format_table(plan_rows(result)))
    collapsed = f" ({result.duplicates} duplicates collapsed)" if result.duplicates else ""
    click.echo(f"{len(result.specs)} configs in suite {result.suite.name!r} (device: {result.suite.device}){collapsed}")
    note = network_note(result, unavailable_reason())
    if note:
        click.echo(note, err=True)
    if result.suite.device == "gpu":
        from tfscale.envinfo import host_gpus  # late: asks NVML, which only GPU suites need

        gpus = host_gpus()
        problem = gpu_preflight(result.specs, gpus, None)
        if problem:
            click.echo(f"note: `tfscale run` here would refuse this suite: {problem}", err=True)
