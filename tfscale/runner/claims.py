"""One owner per config process: before a `tfscale run` runs one process of a config, it claims it with a file in
the run folder, created exclusively (O_EXCL) with its pid and host; a second `tfscale run` on the same run folder
(another terminal, a second Slurm job resuming the run) skips what is claimed, and says by whom. A claim whose owner
died on this host (its pid is gone) is stale and taken over; the owner of a claim from another host cannot be
checked from here and counts as alive. Parent side: no TensorFlow."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from pathlib import Path

import psutil

CLAIMS_DIR = "claims"


def claim_path(folder: Path, name: str) -> Path:
    return folder / CLAIMS_DIR / f"{name}.claim"


def _owner(path: Path) -> dict | None:
    try:
        owner = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) else None


def _stale(owner: dict | None) -> bool:
    """A claim of a process that died on this host. An unreadable claim is being written: not stale."""
    if owner is None or owner.get("host") != socket.gethostname():
        return False
    pid = owner.get("pid")
    return not isinstance(pid, int) or not psutil.pid_exists(pid)


def claim(folder: Path, name: str) -> str | None:
    """Claim process `name` (contract.process_name) of the run folder for this process: None when claimed, else who
    holds it ("pid 123 on host h1")."""
    path = claim_path(folder, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    me = {"pid": os.getpid(), "host": socket.gethostname()}
    for _ in range(2):  # a stale claim is removed once, then claimed again
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            owner = _owner(path)
            if not _stale(owner):
                return f"pid {owner['pid']} on {owner['host']}" if owner else "another tfscale (claim being written)"
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(me, f)
        return None
    return "another tfscale (claimed it again first)"


def release(folder: Path, name: str) -> None:
    """Drop this process's claim, and the claims folder once it is empty."""
    path = claim_path(folder, name)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    with contextlib.suppress(OSError):
        path.parent.rmdir()
