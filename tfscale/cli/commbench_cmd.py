"""`tfscale commbench`: the all-reduce alone over message sizes on one topology, nccl-tests style."""

from __future__ import annotations

import click

from tfscale.runner.commbench import format_sweep, run_sweep, sizes_between, store_sweep, sweep_spec, topology_spec


@click.command()
@click.option(
    "--strategy",
    default="mirrored",
    show_default=True,
    type=click.Choice(["mirrored", "central_storage", "multi_worker_mirrored"]),
)
@click.option("--device", default="cpu", show_default=True, type=click.Choice(["cpu", "gpu"]))
@click.option("--devices-per-node", "devices_per_node", default=2, show_default=True, help="Devices per node.")
@click.option("--devices", "old_devices_per_node", type=int, hidden=True, help="Deprecated: --devices-per-node.")
@click.option("--nodes", default=1, show_default=True, help="Nodes (worker processes for multi_worker_mirrored).")
@click.option("--cross-device-ops", type=click.Choice(["nccl", "hierarchical_copy", "reduction_to_one_device"]))
@click.option("--collective", type=click.Choice(["auto", "ring", "nccl"]))
@click.option(
    "--link",
    "network_link",
    default=None,
    help="multi_worker_mirrored on several nodes: simulate hosts on links of this rate (e.g. 1gbit; root).",
)
@click.option("--min-bytes", default=1 << 10, show_default=True)
@click.option("--max-bytes", default=64 << 20, show_default=True)
@click.option("--iters", default=10, show_default=True, help="Timed calls per size.")
@click.option("--warmup", default=3, show_default=True, help="Untimed calls per size.")
@click.option("--timeout-s", default=600.0, show_default=True)
@click.option("--results-dir", default="results", show_default=True)
@click.option("--run-id", default=None, help="Folder under results/commbench/ (default: a timestamp).")
def commbench(
    strategy: str,
    device: str,
    devices_per_node: int,
    old_devices_per_node: int | None,
    nodes: int,
    cross_device_ops: str | None,
    collective: str | None,
    network_link: str | None,
    min_bytes: int,
    max_bytes: int,
    iters: int,
    warmup: int,
    timeout_s: float,
    results_dir: str,
    run_id: str | None,
) -> None:
    """Time the all-reduce alone from MIN_BYTES to MAX_BYTES by powers of two and fit T = alpha + beta*S*2(n-1)/n."""
    if old_devices_per_node is not None:  # --devices meant per node here, total devices in predict
        click.echo("note: --devices is deprecated here: it meant devices per node; use --devices-per-node", err=True)
        devices_per_node = old_devices_per_node
    from tfscale.launch.local import LocalLauncher
    from tfscale.runner.configs import default_run_id
    from tfscale.store.records import run_dir

    spec = topology_spec(
        device,
        strategy,
        nodes,
        devices_per_node,
        cross_device_ops=cross_device_ops,
        collective=collective,
        network_link=network_link,
        timeout_s=timeout_s,
    )
    folder = run_dir(results_dir, "commbench", run_id or default_run_id())
    with LocalLauncher() as launcher:
        sweep = run_sweep(sweep_spec(spec, sizes_between(min_bytes, max_bytes), iters, warmup), folder, launcher)
    click.echo(format_sweep(sweep))
    click.echo(f"stored: {store_sweep(sweep, folder)}")
