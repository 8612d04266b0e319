"""A private Slurm cluster on this host for tests: munged, slurmctld and one slurmd per node, every file in one
folder, every daemon stopped by its PID (see ../shared/notes/slurm-single-host.md).

One node: the host itself. Several nodes: each slurmd in its own network namespace (nsenter), joined to the host
by a veth pair, so each node has its own address and TensorFlow's servers on different nodes never share ports.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import wait_for

DAEMONS = ("slurmctld", "slurmd", "munged", "srun", "mungekey")
SUBNET = "10.214.{node}"  # node i: host side .1, node side .2 of 10.214.i.0/24
NAMESPACE_PREFIX = "tfscale-slurmtest-"  # + "<pid of the test process>-<node>"
HOSTS_MARK = "\n# tfscale slurm test\n"  # starts the lines a cluster adds to /etc/hosts


def missing() -> str | None:
    """Why the cluster cannot start here (None when it can)."""
    if os.geteuid() != 0:
        return "a private Slurm cluster needs root"
    absent = [d for d in DAEMONS if shutil.which(d) is None and not Path(f"/usr/sbin/{d}").exists()]
    if absent:
        return (
            f"Slurm/munge not installed ({', '.join(absent)} missing; .ci/run installs slurmctld slurmd "
            "slurm-client munge)"
        )
    return None


def _which(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


@dataclass
class Cluster:
    folder: Path
    nodes: int = 1
    pids: list[int] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    hosts_backup: str | None = None
    ip_forward: str | None = None
    munge: Path | None = None

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.folder / "slurm.conf")}

    @property
    def node_names(self) -> list[str]:
        return [socket.gethostname().split(".")[0]] if self.nodes == 1 else [f"n{i}" for i in range(self.nodes)]

    def run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
        # in the cluster's folder: anything a command writes where it runs (sbatch's slurm-<job>.out) stays there
        return subprocess.run(
            argv, env=self.env, cwd=self.folder, capture_output=True, text=True, timeout=timeout, check=False
        )

    # --- bring-up --------------------------------------------------------------------------------------------
    def start(self) -> Cluster:
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            self._munge()
            if self.nodes > 1:
                self._namespaces()
            self._config()
            self._daemon([_which("slurmctld")], "slurmctld.pid")
            for i, name in enumerate(self.node_names):
                prefix = [] if self.nodes == 1 else ["nsenter", f"--net=/run/netns/{self.namespaces[i]}"]
                self._daemon(
                    [*prefix, _which("slurmd"), *([] if self.nodes == 1 else ["-N", name])], f"slurmd-{name}.pid"
                )
            wait_for(
                lambda: self.run("sinfo", "-h", "-t", "idle", "-o", "%D").stdout.strip() == str(self.nodes),
                30,
                "the slurm test cluster's nodes to be idle",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _munge(self) -> None:
        # its own folder under /tmp: munged runs as the munge user, who cannot enter pytest's 0700 folders
        munge = self.munge = Path(tempfile.mkdtemp(prefix="tfscale-munge-"))
        shutil.chown(munge, "munge", "munge")
        munge.chmod(0o755)  # munged wants its socket folder reachable by every user
        key = munge / "munge.key"
        subprocess.run([_which("mungekey"), "-c", "-k", str(key)], check=True, capture_output=True)
        shutil.chown(key, "munge", "munge")
        key.chmod(0o400)
        self._daemon(
            [
                "runuser",
                "-u",
                "munge",
                "--",
                _which("munged"),
                f"--key-file={key}",
                f"--socket={munge / 'munge.socket'}",
                f"--pid-file={munge / 'munged.pid'}",
                f"--log-file={munge / 'munged.log'}",
                f"--seed-file={munge / 'munged.seed'}",
            ],
            munge / "munged.pid",
        )

    def _namespaces(self) -> None:
        remove_stale()
        self.ip_forward = Path("/proc/sys/net/ipv4/ip_forward").read_text().strip()
        Path("/proc/sys/net/ipv4/ip_forward").write_text("1")
        hosts = Path("/etc/hosts")
        self.hosts_backup = hosts.read_text()
        lines = []
        for i, name in enumerate(self.node_names):
            ns = f"{NAMESPACE_PREFIX}{os.getpid()}-{name}"
            host_side, node_side = f"tfsst{i}h", f"tfsst{i}n"
            subnet = SUBNET.format(node=i)
            for command in (
                ["ip", "netns", "add", ns],
                ["ip", "link", "add", host_side, "type", "veth", "peer", "name", node_side],
                ["ip", "link", "set", node_side, "netns", ns],
                ["ip", "addr", "add", f"{subnet}.1/24", "dev", host_side],
                ["ip", "link", "set", host_side, "up"],
                ["ip", "-n", ns, "addr", "add", f"{subnet}.2/24", "dev", node_side],
                ["ip", "-n", ns, "link", "set", node_side, "up"],
                ["ip", "-n", ns, "link", "set", "lo", "up"],
                ["ip", "-n", ns, "route", "add", "default", "via", f"{subnet}.1"],
            ):
                subprocess.run(command, check=True, capture_output=True)
                if command[:3] == ["ip", "netns", "add"]:
                    self.namespaces.append(ns)
            lines.append(f"{subnet}.2 {name}")
        hosts.write_text(self.hosts_backup + HOSTS_MARK + "\n".join(lines) + "\n")

    def _config(self) -> None:
        f = self.folder
        host = socket.gethostname().split(".")[0]
        (f / "state").mkdir(exist_ok=True)
        ctld = host if self.nodes == 1 else f"{host}({SUBNET.format(node=0)}.1)"
        lines = [
            "ClusterName=tfscaletest",
            f"SlurmctldHost={ctld}",
            "SlurmUser=root",
            "AuthType=auth/munge",
            f"AuthInfo=socket={self.munge / 'munge.socket'}",
            "CredType=cred/munge",
            "MpiDefault=none",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "ReturnToService=2",
            "MailProg=/bin/true",
            f"StateSaveLocation={f / 'state'}",
            f"SlurmdSpoolDir={f / 'spool'}/%n",
            f"SlurmctldPidFile={f / 'slurmctld.pid'}",
            f"SlurmdPidFile={f / 'slurmd-%n.pid'}",
            f"SlurmctldLogFile={f / 'slurmctld.log'}",
            f"SlurmdLogFile={f / 'slurmd-%n.log'}",
            # free ports: another test cluster (a module's fixture) may still be up
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "MinJobAge=600",
        ]
        for i, name in enumerate(self.node_names):
            (f / "spool" / name).mkdir(parents=True, exist_ok=True)
            if self.nodes == 1:
                lines.append(f"NodeName={name} CPUs={os.cpu_count()} RealMemory=1000 State=UNKNOWN")
            else:
                lines.append(
                    f"NodeName={name} NodeHostname={host} NodeAddr={SUBNET.format(node=i)}.2 "
                    f"Port={_free_port()} CPUs={os.cpu_count()} RealMemory=1000 State=UNKNOWN"
                )
        lines.append("PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
        (f / "slurm.conf").write_text("\n".join(lines) + "\n")

    def _daemon(self, argv: list[str], pid_file: str | Path) -> None:
        path = self.folder / pid_file
        done = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=30, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"slurm test cluster: {' '.join(argv)} failed: {done.stderr.strip()[-500:]}")
        wait_for(lambda: path.exists() and path.read_text().strip(), 15, f"the slurm test cluster's {path}")
        self.pids.append(int(path.read_text().split()[0]))

    # --- tear-down -------------------------------------------------------------------------------------------
    def stop(self) -> None:
        for pid in reversed(self.pids):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for pid in self.pids:
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.pids.clear()
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True, check=False)
        for i in range(len(self.namespaces)):
            subprocess.run(["ip", "link", "delete", f"tfsst{i}h"], capture_output=True, check=False)
        self.namespaces.clear()
        if self.hosts_backup is not None:
            Path("/etc/hosts").write_text(self.hosts_backup)
            self.hosts_backup = None
        if self.ip_forward is not None:
            Path("/proc/sys/net/ipv4/ip_forward").write_text(self.ip_forward)
            self.ip_forward = None
        if self.munge is not None:
            shutil.rmtree(self.munge, ignore_errors=True)
            self.munge = None


def remove_stale() -> list[str]:
    """Remove what a test session killed before its clusters' tear-down left (seen: a session stopped mid-test
    left n0/n1's namespaces, veths tfsst0h/tfsst1h and its /etc/hosts lines, and the next session's two-node
    cluster failed on `ip link add tfsst0h`: File exists). A live test process's cluster stays. Returns what was
    removed."""
    removed = []
    for ns in _namespaces_listed():
        pid = ns[len(NAMESPACE_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True, check=False)  # its veth pair goes too
            removed.append(ns)
    hosts = Path("/etc/hosts")
    text = hosts.read_text()
    if HOSTS_MARK in text and not _namespaces_listed():
        hosts.write_text(text[: text.index(HOSTS_MARK)])  # what the cluster backed up ends with its newline
        removed.append("/etc/hosts: the test nodes' lines")
    return removed


def _namespaces_listed() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith(NAMESPACE_PREFIX)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
