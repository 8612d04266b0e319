"""`tfscale plan SUITE`: the expanded configs, without running (or importing) anything heavy."""

from __future__ import annotations

import json

import click

from tfscale.api import plan as plan_suite
from tfscale.host.preflight import gpu_preflight
from tfscale.netsim.network import unavailable_reason
from tfscale.suite.planview import nccl_link_note, network_note, plan_rows, spread_note
from tfscale.textable import format_table


@click.command()
@click.argument("suite_file", metavar="SUITE")
@click.option("--json", "as_json", is_flag=True, help="Every config's resolved spec as JSON, alone on standard output.")
def plan(suite_file: str, as_json: bool) -> None:
    """Print the configs SUITE (a suite file, or a run folder: the suite it ran with) expands to and their count."""
    result = plan_suite(suite_file)
    if as_json:  # what plan.json of a run would hold, for scripts
        specs = [spec.to_dict() for spec in result.specs]
        click.echo(json.dumps({"suite": result.suite.name, "device": result.suite.device, "specs": specs}, indent=1))
        return
    click.echo(format_table(plan_rows(result)))
    collapsed = f" ({result.duplicates} duplicates collapsed)" if result.duplicates else ""
    click.echo(f"{len(result.specs)} configs in suite {result.suite.name!r} (device: {result.suite.device}){collapsed}")
    for note in (network_note(result, unavailable_reason()), nccl_link_note(result), spread_note(result)):
        if note:
            click.echo(note, err=True)
    if result.suite.device == "gpu":
        from tfscale.gpus import host_gpus  # late: asks NVML, which only GPU suites need

        gpus = host_gpus()
        problem = gpu_preflight(result.specs, gpus, None)
        if problem:
            click.echo(f"note: `tfscale run` here would refuse this suite: {problem}", err=True)
