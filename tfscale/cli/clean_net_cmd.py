"""`tfscale clean-net`: remove the simulated-network namespaces and links a crashed tfscale left behind."""

from __future__ import annotations

import click

from tfscale.errors import TfscaleError


@click.command("clean-net")
@click.option("--all", "everything", is_flag=True, help="Also remove those of tfscale processes still running.")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
def clean_net(everything: bool, dry_run: bool) -> None:
    """Remove tfscale network namespaces, veths and bridges whose tfscale process is gone (needs root)."""
    from tfscale.netsim.clean import clean
    from tfscale.netsim.network import unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        raise TfscaleError(reason)
    stale = clean(everything, dry_run)
    verb = "would remove" if dry_run else "removed"
    names = stale.namespaces + stale.links
    click.echo(
        f"{verb} {len(stale.namespaces)} namespace(s), {len(stale.links)} link(s)"
        + (f": {', '.join(names)}" if names else "")
    )
