"""Worker processes on this host: started in their own session, killed with their whole tree on timeout or
interrupt, so a run never leaves processes behind; and one-shot worker calls (`--env`, `--check-models`).

Whatever kills tfscale itself (SIGKILL from the OOM killer or a CI timeout, a closed terminal), what it started
dies with it: each worker asks the kernel for SIGKILL on its parent's death (contract.PARENT_PID_ENV,
worker.main.die_with_parent); a process that is not a worker (srun) is started through `setpriv --pdeathsig KILL`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import psutil

from tfscale import contract
from tfscale.launch.scratch import worker_tmpdir
from tfscale.launch.zygote import ForkedWorker, ZygoteError, forks, zygote

KILL_GRACE_S = 5.0  # SIGTERM first; SIGKILL whatever is still alive after this long

# Every worker process this parent has started and not yet reaped: what a second Ctrl-C kills at once.
LIVE: set[subprocess.Popen | ForkedWorker] = set()


def dies_with_parent(argv: list[str], env: dict[str, str] | None, worker: bool) -> tuple[list[str], dict[str, str]]:
    """argv and env of a child that the kernel kills when this process dies: a worker (its command ends in the
    worker, possibly through nsenter, which execs it) is told this pid and arms PR_SET_PDEATHSIG itself; any other
    command (srun) is started through util-linux's `setpriv --pdeathsig KILL`, where there is one. A worker on
    this host gets this process's scratch folder as TMPDIR (launch.scratch: what TensorFlow leaves there goes with
    it); srun's ranks may be on hosts without that folder, and keep theirs."""
    env = dict(os.environ if env is None else env)
    if worker:
        return argv, env | {contract.PARENT_PID_ENV: str(os.getpid()), contract.TMPDIR_ENV: worker_tmpdir()}
    setpriv = shutil.which("setpriv")
    return ([setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else argv), env


def start_worker(
    argv: list[str], log, env: dict[str, str] | None = None, worker: bool = True, fork: bool = False
) -> subprocess.Popen | ForkedWorker:
    """Start a worker (or, `worker` False, another command such as srun) in its own session (its own process
    group), output to `log`, killed by the kernel if this process dies (dies_with_parent); register it as live.
    `fork`: a CPU worker this Python runs is forked by the zygote (launch.zygote) rather than started afresh."""
    argv, env = dies_with_parent(argv, env, worker)
    if fork and worker and forks(argv):
        process = _forked(argv, log, env)
        if process is not None:
            LIVE.add(process)
            return process
    process = subprocess.Popen(
        argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True
    )
    LIVE.add(process)
    return process


def _forked(argv: list[str], log, env: dict[str, str]) -> ForkedWorker | None:
    """The worker forked by this process's zygote; None where there is no zygote (it could not start: the worker
    starts afresh)."""
    _, zygote_env = dies_with_parent([], None, worker=True)
    found = zygote(zygote_env, Path(worker_tmpdir()) / "zygote.log")
    if found is None:
        return None
    log.flush()
    try:
        return found.fork(argv, env, log.name)
    except ZygoteError:  # it died since: this worker starts afresh, the next one with a new zygote
        return None


def kill_live_now() -> None:
    """SIGKILL every live worker's process group and descendants, without waiting (second interrupt)."""
    for process in list(LIVE):
        with contextlib.suppress(psutil.NoSuchProcess):
            for child in psutil.Process(process.pid).children(recursive=True):
                with contextlib.suppress(psutil.NoSuchProcess):
                    child.kill()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


def kill_trees(processes: list[subprocess.Popen | ForkedWorker], grace_s: float = KILL_GRACE_S) -> None:
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
        LIVE.discard(process)


def kill_tree(process: subprocess.Popen | ForkedWorker, grace_s: float = KILL_GRACE_S) -> None:
    kill_trees([process], grace_s)


class WorkerCallError(RuntimeError):
    """A one-shot worker call (`--env`, `--check-models`) that wrote no result: timed out or crashed."""


def call_worker(mode: str, timeout_s: float, request: Any = None) -> Any:
    """Run the worker in `mode` (contract.ENV, contract.CHECK_MODELS) to completion, with `request` as its input
    file, and return the JSON it wrote. Used for the short TensorFlow-side questions the parent cannot answer
    without importing TensorFlow."""
    with tempfile.TemporaryDirectory(prefix="tfscale-call-", dir=worker_tmpdir()) as tmp:
        result, request_path = Path(tmp) / "result.json", None
        if request is not None:
            request_path = Path(tmp) / "request.json"
            request_path.write_text(json.dumps(request), encoding="utf-8")
        argv = contract.worker_argv(result, mode, request_path)
        try:
            argv, env = dies_with_parent(argv, None, worker=True)
            done = subprocess.run(
                argv, capture_output=True, timeout=timeout_s, stdin=subprocess.DEVNULL, env=env, check=False
            )
        except subprocess.TimeoutExpired:
            raise WorkerCallError(f"worker {mode} timed out after {timeout_s:g} s") from None
        if not result.exists():
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise WorkerCallError(f"worker {mode} exited {done.returncode}: {tail[0]}")
        return json.loads(result.read_text(encoding="utf-8"))
