"""tfscale's side of the worker zygote (tfscale.worker.zygote): a TensorFlow-loaded process that forks the workers
of CPU configs on this host. One forks per tfscale process: started on the first forked worker of each round of a
sweep (serve_round), stopped when the round changes, when the launcher's `with` ends, or at exit. Where the sweep
has another round (expect_rounds), a fresh zygote's start starts that round's too, idle until its round comes.

Why: `import tensorflow` took 3.3-7 s of every worker here, a third of the quickstart's process time (104 s of 283 s
in 23 processes). A forked worker starts its own TensorFlow runtime as a fresh interpreter would (the zygote never
initialises one), in its own session, and is watched and killed like any other (`ForkedWorker` answers as
subprocess.Popen does). GPU configs, workers in a simulated host's network namespace and workers of another Python
are still started as fresh interpreters; so is every worker when TFSCALE_WORKER_START is "exec".
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tfscale import contract

READY_TIMEOUT_S = 120.0  # the zygote's import of TensorFlow (3.3 s here quiet, 15 s under load)
STARTED_TIMEOUT_S = 30.0  # one fork of a TensorFlow-loaded process, request to answer (0.012-0.020 s here)
EXIT_GRACE_S = 5.0  # at exit: how long the zygote may take to go once its stdin is closed


class ZygoteError(RuntimeError):
    """The zygote could not be started or stopped answering."""


class ForkedWorker:
    """A worker forked by the zygote, with the part of subprocess.Popen's interface the launchers use: pid,
    returncode, poll(), wait(). Its pid is its process group's (the worker calls setsid)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._exited = threading.Event()

    def _exit(self, code: int) -> None:
        self.returncode = code
        self._exited.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._exited.wait(timeout):
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
        return self.returncode  # type: ignore[return-value]


@dataclass
class _Fork:
    """One fork asked of the zygote: set when it answers (worker) or is gone (worker None)."""

    answered: threading.Event = field(default_factory=threading.Event)
    worker: ForkedWorker | None = None


class Zygote:
    """One running zygote: a request pipe, a thread reading its answers. Started by the constructor; wait_ready()
    before the first fork."""

    def __init__(self, log_path: Path, env: dict[str, str]) -> None:
        self.log_path = log_path
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tfscale.worker.zygote"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                start_new_session=True,
            )
        self._lock = threading.Lock()
        self._next_id = 0
        self._forks: dict[int, _Fork] = {}  # by request id, until answered
        self._workers: dict[int, ForkedWorker] = {}
        self._ready = threading.Event()
        self._gone = False
        self._reader = threading.Thread(target=self._read, name="tfscale-zygote", daemon=True)
        self._reader.start()

    def wait_ready(self) -> None:
        """Return once it has imported TensorFlow; stop it and raise ZygoteError if it died or took too long."""
        if not self._ready.wait(READY_TIMEOUT_S) or self._gone:
            self.stop()
            raise ZygoteError(f"the worker zygote did not start: {self.log_tail()}")

    def log_tail(self) -> str:
        with contextlib.suppress(OSError):
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
            if lines:
                return lines[-1]
        return f"exit code {self.process.poll()}"

    @property
    def alive(self) -> bool:
        return not self._gone and self.process.poll() is None

    def _read(self) -> None:
        assert self.process.stdout is not None
        try:
            for line in self.process.stdout:
                self._answer(json.loads(line))
        finally:  # its end, or an answer that is not one: either way no more answers come
            self._lost()

    def _answer(self, message: dict) -> None:
        with self._lock:
            if "ready" in message:
                self._ready.set()
            elif "started" in message:
                fork = self._forks[message["started"]]
                fork.worker = self._workers[message["pid"]] = ForkedWorker(message["pid"])
                fork.answered.set()
            elif "exited" in message:
                worker = self._workers.pop(message["exited"], None)
                if worker is not None:
                    worker._exit(message["code"])

    def _lost(self) -> None:
        """The zygote is gone: its workers died with it (PR_SET_PDEATHSIG, SIGKILL); whoever waits is told so."""
        with self._lock:
            self._gone = True
            self._ready.set()
            for fork in self._forks.values():
                fork.answered.set()
            for worker in self._workers.values():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(worker.pid, signal.SIGKILL)
                worker._exit(-signal.SIGKILL)
            self._workers.clear()

    def fork(self, argv: list[str], env: dict[str, str], log_path: str) -> ForkedWorker:
        """Fork a worker running `argv` (contract.worker_argv's) with `env`, its output appended to `log_path`."""
        with self._lock:
            request_id = self._next_id
            self._next_id += 1
            fork = self._forks[request_id] = _Fork()
        env = env | {contract.PARENT_PID_ENV: str(self.process.pid)}  # the worker dies with the zygote
        request = {"id": request_id, "argv": argv, "env": env, "cwd": os.getcwd(), "log": log_path}
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        except OSError as error:
            raise ZygoteError(f"the worker zygote is gone: {error}") from None
        answered = fork.answered.wait(STARTED_TIMEOUT_S)
        with self._lock:
            del self._forks[request_id]
        if not answered:
            raise ZygoteError(f"the worker zygote did not fork within {STARTED_TIMEOUT_S:g} s")
        if fork.worker is None:
            raise ZygoteError(f"the worker zygote is gone: {self.log_tail()}")
        return fork.worker

    def stop(self) -> None:
        """Close its stdin (it exits, its workers with it); kill it if it has not gone after EXIT_GRACE_S."""
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(EXIT_GRACE_S)
        if not self._reader.is_alive():
            assert self.process.stdout is not None
            self.process.stdout.close()


_ZYGOTE: list[Zygote] = []  # this process's zygote, once started
_ROUND: list[int] = [0]  # the round of the sweep it forks for (serve_round)
_ROUNDS: list[int] = [1]  # how many rounds the sweep has (expect_rounds)
_SPARE: dict[int, Zygote] = {}  # the next round's zygote, started beside a fresh one (round -> zygote)
_FAILED: list[str] = []  # why it could not be started: the run goes on with fresh interpreters


def forks(argv: list[str]) -> bool:
    """Whether a worker with this command line is forked by the zygote: this Python's own worker (not one behind
    nsenter, not another interpreter), unless TFSCALE_WORKER_START says "exec" or the zygote could not start."""
    own = argv[:3] == [sys.executable, "-m", "tfscale.worker"]
    return own and os.environ.get(contract.WORKER_START_ENV) != contract.WORKER_START_EXEC and not _FAILED


def zygote(env: dict[str, str], log_path: Path) -> Zygote | None:
    """This process's zygote, started (with `env`, its log at `log_path`) if none is alive; None if it cannot
    start (the reason stays in zygote_failure())."""
    if _ZYGOTE and _ZYGOTE[0].alive:
        return _ZYGOTE[0]
    _stop(_ZYGOTE)  # one that died: reaped, its pipes closed
    if _FAILED:
        return None
    started = time.monotonic()
    try:
        _ZYGOTE[:] = [_this_round(env, log_path)]
    except (ZygoteError, OSError) as error:
        _FAILED.append(f"{error} (after {time.monotonic() - started:.1f} s)")
        return None
    return _ZYGOTE[0]


def _this_round(env: dict[str, str], log_path: Path) -> Zygote:
    """The round's zygote: its spare if one was started and lives, else a fresh one, with the next round's spare
    started beside it where the sweep has a next round. Why: a zygote's start is an import of TensorFlow (the
    quickstart's first config and its second round's first spent 4.3 and 4.7 s outside their worker's phases here,
    other mlp configs 0.3-0.4 s); two at once, while nothing is measured, cost one. A spare is never started while
    a round's workers run: its import would share their cores."""
    spare = _SPARE.pop(_ROUND[0], None)
    if spare is not None and spare.alive:
        return spare
    if spare is not None:
        spare.stop()
    fresh = Zygote(log_path, env)
    following = _ROUND[0] + 1
    try:
        if following < _ROUNDS[0] and following not in _SPARE:
            _SPARE[following] = Zygote(log_path.with_name(f"{log_path.stem}-{following}{log_path.suffix}"), env)
        fresh.wait_ready()
    except (ZygoteError, OSError):
        fresh.stop()
        if following in _SPARE:
            _SPARE.pop(following).stop()
        raise
    if following in _SPARE:
        try:
            _SPARE[following].wait_ready()
        except ZygoteError:  # not this round's: the next round starts a fresh one
            del _SPARE[following]
    return fresh


def expect_rounds(rounds: int) -> None:
    """The sweep forks workers in `rounds` rounds (each config's repeat-th process in round `repeat`)."""
    _ROUNDS[0] = rounds


def serve_round(repeat: int) -> None:
    """The workers to fork next are of the sweep's round `repeat` (each config's repeat-th fresh process): a zygote
    of another round is stopped, so that the next worker gets a new one. Why: the workers of one zygote share a
    random draw of what a process is (its memory layout, its hash seed, copied at fork; which matters is not
    measured): cnn Mirrored x2 here, three workers each from three zygotes: 110.7-123.0, 111.3-129.3 and 91.3-98.5
    ms, fresh interpreters interleaved with them 89.1-134.1 ms. A config's processes in different rounds are then
    independent draws, as fresh ones are, and their spread (repeats) covers what a rerun with new zygotes measures.
    Configs of one round share their draw."""
    if _ROUND[0] != repeat:
        _stop(_ZYGOTE)
        _ROUND[0] = repeat


def zygote_failure() -> str | None:
    return _FAILED[0] if _FAILED else None


def stop_zygote() -> None:
    """Stop this process's zygotes: the round's and any spare."""
    _stop(_ZYGOTE)
    _stop([_SPARE.pop(round_) for round_ in list(_SPARE)])


def _stop(zygotes: list[Zygote]) -> None:
    while zygotes:
        zygotes.pop().stop()


# At exit, before the scratch folder its log is in goes (atexit runs last-registered first; launch.scratch registers
# its removal on first use, after this import).
atexit.register(stop_zygote)
