"""`tfscale clean-net`: remove simulated-network namespaces and links left by a tfscale process that died
without cleaning up (SIGKILL, power loss). Those of a live tfscale process are kept unless `everything`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from tfscale.netsim.network import (
    IFACE_PREFIX,
    NAMESPACE_PREFIX,
    list_links,
    list_namespaces,
    run_tool,
    token_of,
)

_NAMESPACE = re.compile(rf"^{NAMESPACE_PREFIX}(?P<owner>.+-p(?P<pid>\d+)-c\d+)-n\d+$")
_LINK = re.compile(rf"^{IFACE_PREFIX}(?P<token>[0-9a-f]{{6}})(br|h\d+|n\d+)$")


@dataclass(frozen=True)
class Stale:
    namespaces: list[str]
    links: list[str]


def find_stale(
    namespaces: list[str], links: list[str], alive: Callable[[int], bool], everything: bool = False
) -> Stale:
    """The tfscale namespaces whose owner process is gone, and the tfscale links not belonging to a live owner's
    namespaces (a link without any namespace left is stale too). Names of other software are never touched."""
    live_tokens, stale_ns = set(), []
    for name in namespaces:
        match = _NAMESPACE.match(name)
        if match is None:
            continue
        if not everything and alive(int(match.group("pid"))):
            live_tokens.add(token_of(match.group("owner")))
        else:
            stale_ns.append(name)
    stale_links = [
        name for name in links if (match := _LINK.match(name)) is not None and match.group("token") not in live_tokens
    ]
    return Stale(stale_ns, stale_links)


def clean(everything: bool = False, dry_run: bool = False) -> Stale:
    """Delete what find_stale names on this host (nothing with dry_run); return it."""
    stale = find_stale(list_namespaces(), list_links(), psutil.pid_exists, everything)
    if not dry_run:
        for name in stale.namespaces:
            run_tool(["ip", "netns", "delete", name])
        left = set(list_links())  # veths went with their namespaces
        for name in stale.links:
            if name in left:
                run_tool(["ip", "link", "delete", name])
    return stale
