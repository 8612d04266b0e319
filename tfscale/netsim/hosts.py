"""Simulated hosts for one cluster config: the network, the link check, and the placement of each TF task on its
node (address and namespace), as the cluster launcher takes it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from tfscale.contract import LOOPBACK, Placement, Task, node_of
from tfscale.netsim.linkcheck import LinkCheck, measure_link
from tfscale.netsim.network import Layout, SimNetwork, new_layout
from tfscale.suite.spec import RunSpec


@dataclass(frozen=True)
class Hosts:
    placement: Placement
    link_bytes_per_s: float | None = None  # configured rate; None over loopback
    check: LinkCheck | None = None  # TCP check of the link; None over loopback


def placement(layout: Layout) -> Placement:
    def address(task: Task) -> str:
        return layout.address(node_of(task, layout.nodes))

    def wrap(task: Task, argv: list[str]) -> list[str]:
        return layout.wrap(node_of(task, layout.nodes), argv)

    return Placement(address, wrap)


@contextlib.contextmanager
def cluster_hosts(spec: RunSpec, run_id: str, check_link: bool = True) -> Iterator[Hosts]:
    """Loopback for configs without `network_link`; else a simulated network of spec.nodes nodes (removed on
    exit, whatever happens), its link measured first when `check_link`."""
    if spec.network_link is None:
        yield Hosts(LOOPBACK)
        return
    layout = new_layout(run_id, spec.nodes)
    with SimNetwork(layout, spec.network_link) as network:
        check = measure_link(layout, network.rate_bytes_per_s) if check_link and spec.nodes > 1 else None
        yield Hosts(placement(layout), network.rate_bytes_per_s, check)
