"""One simulated network: a namespace per node, a veth pair from each node to a bridge on the host, each node's
link shaped by `tc tbf` in both directions (host side: bridge → node; node side: node → bridge), so every node
sends and receives at the configured rate, as through a switch port.

`Layout` (pure) names everything; `SimNetwork` creates it on entry and removes all of it on exit, whatever
happened in between. Names carry the `tfscale-` prefix, the run id and the owning process id, so two runs never
collide and `tfscale clean-net` can tell stale leftovers (owner gone) from live ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from tfscale.errors import TfscaleError
from tfscale.suite.linkrate import parse_rate, tbf_burst_bytes

NAMESPACE_PREFIX = "tfscale-"
IFACE_PREFIX = "tfs"  # interface names are limited to 15 characters: tfs + 6 hex + role + node
SUBNET = "10.213.0"  # each network is its own bridge (layer 2 island): runs may reuse the range without clashing
TBF_LATENCY = "100ms"  # longest a packet waits in the bucket queue (10 ms changed busbw by no more than the noise)
COMMAND_TIMEOUT_S = 30.0
TOOLS = ("ip", "tc", "nsenter")
CAP_NET_ADMIN, CAP_SYS_ADMIN = 12, 21  # capability bits (linux/capability.h); netns add needs SYS_ADMIN to mount
MAX_NODES = 250
MTU = 1500  # standard Ethernet frames (9000 gave 0.78 instead of 0.77 of 1 gbit for 4 MB all-reduces)
_counter = itertools.count()
LIVE: set[SimNetwork] = set()  # networks of this process not yet removed: what a second Ctrl-C removes at once


class NetworkError(TfscaleError):
    """A simulated network could not be created (or fully removed)."""


def unavailable_reason(effective_caps: int | None = None, missing_tools: tuple[str, ...] | None = None) -> str | None:
    """Why simulated networking cannot run here, in one line (None when it can). Arguments default to this
    process's effective capabilities and the tools missing from PATH."""
    if effective_caps is None:
        effective_caps = _effective_caps()
    if missing_tools is None:
        missing_tools = tuple(t for t in TOOLS if shutil.which(t) is None)
    needs = []
    if not (effective_caps >> CAP_NET_ADMIN & 1 and effective_caps >> CAP_SYS_ADMIN & 1):
        needs.append("root (CAP_NET_ADMIN and CAP_SYS_ADMIN): run tfscale as root, e.g. `sudo -E tfscale run ...`")
    if missing_tools:
        needs.append(f"the tools {', '.join(missing_tools)} (Debian: apt-get install iproute2 util-linux)")
    if not needs:
        return None
    return "simulated networking (network_link) is unavailable: it needs " + " and ".join(needs)


def _effective_caps() -> int:
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:40]


@dataclass(frozen=True)
class Layout:
    """Names and addresses of one simulated network of `nodes` nodes. `owner` = "<run id>-p<pid>-c<count>"."""

    owner: str
    nodes: int

    @property
    def token(self) -> str:
        return token_of(self.owner)

    @property
    def bridge(self) -> str:
        return f"{IFACE_PREFIX}{self.token}br"

    def namespace(self, node: int) -> str:
        return f"{NAMESPACE_PREFIX}{self.owner}-n{node}"

    def host_veth(self, node: int) -> str:
        return f"{IFACE_PREFIX}{self.token}h{node}"

    def node_veth(self, node: int) -> str:
        return f"{IFACE_PREFIX}{self.token}n{node}"

    def address(self, node: int) -> str:
        return f"{SUBNET}.{node + 1}"

    def wrap(self, node: int, argv: list[str]) -> list[str]:
        """argv run inside node's namespace. nsenter (not `ip netns exec`, which remounts /sys) execs argv, so
        the process id the launcher holds is the command's own."""
        return ["nsenter", f"--net=/run/netns/{self.namespace(node)}", "--", *argv]


def token_of(owner: str) -> str:
    return hashlib.sha256(owner.encode()).hexdigest()[:6]


def new_layout(run_id: str, nodes: int, pid: int | None = None) -> Layout:
    if not 1 <= nodes <= MAX_NODES:
        raise NetworkError(f"simulated network: {nodes} nodes; at most {MAX_NODES}")
    return Layout(f"{_safe(run_id)}-p{os.getpid() if pid is None else pid}-c{next(_counter)}", nodes)


def setup_commands(layout: Layout, rate_bytes_per_s: float) -> list[list[str]]:
    """The ip/tc commands that create the network, in order."""
    rate = f"{round(rate_bytes_per_s * 8)}bit"
    tbf = ["tbf", "rate", rate, "burst", str(tbf_burst_bytes(rate_bytes_per_s)), "latency", TBF_LATENCY]
    # The namespaces first: `tfscale clean-net` keeps a link only while a namespace of its live owner exists, so a
    # bridge made before them could be taken for a dead run's leftover and deleted under the run.
    commands = [["ip", "netns", "add", layout.namespace(node)] for node in range(layout.nodes)]
    # bridged frames must not go through the host's iptables (a FORWARD policy of DROP, as Docker sets, would
    # silently cut the nodes off)
    commands += [
        [
            "ip",
            "link",
            "add",
            layout.bridge,
            "type",
            "bridge",
            "nf_call_iptables",
            "0",
            "nf_call_ip6tables",
            "0",
            "nf_call_arptables",
            "0",
        ],
        ["ip", "link", "set", layout.bridge, "up"],
    ]
    for node in range(layout.nodes):
        ns, host, peer = layout.namespace(node), layout.host_veth(node), layout.node_veth(node)
        commands += [
            ["ip", "link", "add", host, "mtu", str(MTU), "type", "veth", "peer", "name", peer, "mtu", str(MTU)],
            ["ip", "link", "set", peer, "netns", ns],
            ["ip", "link", "set", host, "master", layout.bridge, "up"],
            ["ip", "-n", ns, "addr", "add", f"{layout.address(node)}/24", "dev", peer],
            ["ip", "-n", ns, "link", "set", peer, "up"],
            ["ip", "-n", ns, "link", "set", "lo", "up"],
            ["tc", "qdisc", "add", "dev", host, "root", *tbf],
            ["tc", "-n", ns, "qdisc", "add", "dev", peer, "root", *tbf],
        ]
    return commands


def teardown_commands(layout: Layout) -> list[list[str]]:
    """Deleting a namespace deletes the veth end inside it, and with it the host end and its qdisc."""
    return (
        [["ip", "netns", "delete", layout.namespace(n)] for n in range(layout.nodes)]
        + [["ip", "link", "delete", layout.host_veth(n)] for n in range(layout.nodes)]
        + [["ip", "link", "delete", layout.bridge]]
    )


def run_tool(command: list[str]) -> subprocess.CompletedProcess:
    """Run one ip/tc command; its exit status and stderr are the caller's to read."""
    return subprocess.run(
        command, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL
    )


def leftovers(layout: Layout) -> list[str]:
    """Namespaces and links of this layout that still exist."""
    names = set(list_namespaces()) | set(list_links())
    wanted = [layout.namespace(n) for n in range(layout.nodes)] + [layout.bridge]
    wanted += [layout.host_veth(n) for n in range(layout.nodes)]
    return [name for name in wanted if name in names]


def list_namespaces() -> list[str]:
    # `ip netns list` prints "name (id: N)" for namespaces with an id
    return [line.split()[0] for line in run_tool(["ip", "netns", "list"]).stdout.splitlines() if line.strip()]


def list_links() -> list[str]:
    names = []
    for line in run_tool(["ip", "-o", "link", "show"]).stdout.splitlines():
        parts = line.split(":", 2)
        if len(parts) > 1:
            names.append(parts[1].strip().split("@")[0])
    return names


class SimNetwork:
    """Context manager: the network of `layout` with every node link shaped to `rate` (e.g. "100mbit")."""

    def __init__(self, layout: Layout, rate: str):
        self.layout = layout
        self.rate = rate
        self.rate_bytes_per_s = parse_rate(rate)

    def __enter__(self) -> SimNetwork:
        reason = unavailable_reason()
        if reason is not None:
            raise NetworkError(reason)
        LIVE.add(self)
        try:
            for command in setup_commands(self.layout, self.rate_bytes_per_s):
                done = run_tool(command)
                if done.returncode != 0:
                    why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
                    raise NetworkError(f"simulated network: `{' '.join(command)}` failed: {why}")
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc) -> None:
        left = self.remove()
        if left and exc[0] is None:
            raise NetworkError(
                f"simulated network: could not remove {', '.join(left)}; run `tfscale clean-net` as root"
            )

    def remove(self) -> list[str]:
        """Delete everything of the layout that exists (each step best effort); return what is left."""
        for command in teardown_commands(self.layout):
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                run_tool(command)
        left = leftovers(self.layout)
        if not left:
            LIVE.discard(self)
        return left


def remove_live_networks() -> None:
    """Remove every network this process still has (called on a hard stop, after the workers are killed)."""
    for network in list(LIVE):
        network.remove()
