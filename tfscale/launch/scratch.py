"""The temporary folder of the worker processes this host starts (their TMPDIR): one per tfscale process, removed
when it exits, and by the next tfscale if it was killed.

Why: TensorFlow's autograph writes one module per traced function to the temporary folder and deletes it only at a
normal interpreter exit, which a single-process worker skips (`os._exit`, 0.9 s saved per config) and a killed task
never reaches: a one-device mlp config left 5 `__autograph_generated_file*.py` in /tmp (4,400 after two days of
tests here). Owners are told apart by pid: a temporary folder shared with another pid namespace (a container's
tfscale) would see its live folders as stale.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
from pathlib import Path

import psutil

from tfscale.contract import SCRATCH_PREFIX, WORKER_TMP_PREFIX

_OWN: list[Path] = []  # this process's folder, once made


def worker_tmpdir() -> str:
    """This process's scratch folder for its workers (made on first use, removed at exit); folders of dead
    tfscale processes are removed first."""
    if not _OWN:
        remove_stale()
        _OWN.append(Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")))
        atexit.register(remove_own)
    return str(_OWN[0])


def remove_own() -> None:
    """Remove this process's scratch folder and what its workers left in it; then the folders of ranks that died
    during the run (an srun rank Slurm cancelled cannot remove its own: seen once per Slurm test session)."""
    while _OWN:
        shutil.rmtree(_OWN.pop(), ignore_errors=True)
    remove_stale()


def owner_pid(name: str) -> int | None:
    """The pid in the name of a tfscale's or a worker's own temporary folder (`tfscale-tmp-<pid>-<random>`,
    `tfscale-worker-<pid>-<random>`), None for any other name."""
    prefix = next((p for p in (SCRATCH_PREFIX, WORKER_TMP_PREFIX) if name.startswith(p)), None)
    if prefix is None:
        return None
    pid = name[len(prefix) :].split("-", 1)[0]
    return int(pid) if pid.isdigit() else None


def remove_stale(root: str | Path | None = None) -> list[Path]:
    """Remove the scratch folders under `root` (the temporary folder) whose tfscale or worker is no longer alive
    (killed before it could: an srun rank cancelled by Slurm, a tfscale killed with SIGKILL); return them."""
    removed = []
    with contextlib.suppress(OSError):
        for path in Path(root or tempfile.gettempdir()).iterdir():
            pid = owner_pid(path.name)
            if pid is not None and pid != os.getpid() and not psutil.pid_exists(pid) and path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed
