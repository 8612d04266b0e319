"""Local launcher: one child process (in its own session) per worker, killed with its whole tree on timeout or
interrupt, so a run never leaves processes behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

KILL_GRACE_S = 5.0  # SIGTERM first; SIGKILL whatever is still alive after this long


@dataclass(frozen=True)
class ProcessOutcome:
    returncode: int | None  # None when killed for the timeout; negative N: killed by signal N
    timed_out: bool
    duration_s: float  # wall time from start to exit, s


def kill_trees(processes: list[subprocess.Popen], grace_s: float = KILL_GRACE_S) -> None:
    """Terminate each process and every descendant (also those that left its process group): SIGTERM to all,
    then SIGKILL to whatever is still alive after `grace_s`."""
    family: list[psutil.Process] = []
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            root = psutil.Process(process.pid)
            family += [root, *root.children(recursive=True)]
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)
    for p in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.terminate()
    _, alive = psutil.wait_procs(family, timeout=grace_s)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(alive, timeout=grace_s)
    for process in processes:
        process.wait()


def kill_tree(process: subprocess.Popen, grace_s: float = KILL_GRACE_S) -> None:
    kill_trees([process], grace_s)


def run_worker(argv: list[str], log_path: str | Path, timeout_s: float,
               env: dict[str, str] | None = None) -> ProcessOutcome:
    """Run argv to completion with stdout+stderr appended to log_path; kill its tree after timeout_s."""
    start = time.perf_counter()
    with open(log_path, "ab") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, start_new_session=True)
        try:
            returncode = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            kill_tree(process)
            return ProcessOutcome(None, True, time.perf_counter() - start)
        except BaseException:  # KeyboardInterrupt or a signal turned exception: never leave the child running
            kill_tree(process)
            raise
    return ProcessOutcome(returncode, False, time.perf_counter() - start)
