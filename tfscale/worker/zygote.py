"""The worker zygote (`python -m tfscale.worker.zygote`): a process that imports TensorFlow once and forks one
worker per request, so that a CPU suite's workers do not each pay `import tensorflow` (3.3-7 s here, most of a
small config's process time). Each forked worker is a fresh TensorFlow runtime: the zygote only imports modules; it
never creates a device, a context, a thread pool or a gRPC channel: each worker starts its own TensorFlow runtime.
The one other thread after the imports is OpenBLAS's pool (numpy's; one per extra core), which OpenBLAS stops
before a fork and starts again after (pthread_atfork). What the workers of one zygote share is what was drawn when
it started (its memory layout, its hash seed; which of them matters is not measured): tfscale.launch.zygote.serve_round
gives each round of a sweep its own.

Protocol (tfscale.launch.zygote is the other side), one JSON object per line: tfscale writes requests to stdin,
{"id", "argv", "env", "cwd", "log"}; the zygote answers on stdout {"ready": pid} once, then {"started": id,
"pid": pid} per request and {"exited": pid, "code": returncode} per worker (negative: killed by that signal, as
subprocess reports it). stdin closed: the zygote exits, and its workers die with it (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import sys
import traceback
from typing import NoReturn

from tfscale import contract
from tfscale.worker.main import PR_SET_NAME, die_with_parent, prctl, prepare_environment

# Imported once here, not in every worker: what every training config imports after TensorFlow (Keras and
# tfscale's loop): 0.09-0.13 s after import_tensorflow here (Keras mostly comes in with TensorFlow).
PRELOAD = ("keras", "tfscale.worker.modes", "tfscale.worker.synchronous", "tfscale.worker.models")
WORKER_NAME = b"tfscale-worker"  # at most 15 bytes
ZYGOTE_NAME = b"tfscale-zygote"


def become_worker(request: dict, inherited: tuple[int, ...]) -> NoReturn:
    """In the forked child: a session of its own (its process group is what tfscale kills), none of the zygote's
    pipes (`inherited`) or signal handling, output to the config's log, tfscale's environment for this worker,
    then the worker itself (tfscale.worker.process)."""
    os.setsid()
    name_process(WORKER_NAME)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in inherited:
        os.close(fd)
    log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ[contract.FORKED_FROM_ENV] = str(os.getppid())
    sys.argv = [request["argv"][0], *request["argv"][3:]]  # as `python -m tfscale.worker` would see it
    from tfscale.worker.process import run_process

    run_process(request["argv"][3:])


def name_process(name: bytes) -> None:
    """The name `ps -e`, `top` and psutil show (the command line stays the zygote's: Python cannot change it)."""
    prctl(PR_SET_NAME, name)


def say(answers: int, message: dict) -> None:
    os.write(answers, (json.dumps(message) + "\n").encode())


def reap(answers: int) -> None:
    """Report every worker that has exited since the last call."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        say(answers, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def serve(answers: int) -> None:
    """Fork a worker per request line on stdin until stdin closes; report each worker as it exits. Between the
    two the zygote sleeps in select: a worker's exit wakes it through SIGCHLD's wake-up pipe (polling every 20 ms
    instead cost 490 wake-ups and 0.08-0.09 s of CPU per 10 s, while workers were being timed)."""
    woken, wake = os.pipe()
    os.set_blocking(wake, False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # a handler of its own: the wake-up byte is written
    signal.set_wakeup_fd(wake)
    pending = b""
    while True:
        readable, _, _ = select.select([0, woken], [], [])
        if woken in readable:
            os.read(woken, 1 << 12)
        if 0 in readable:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                fork_worker(json.loads(line), answers, (answers, woken, wake))
        reap(answers)


def fork_worker(request: dict, answers: int, inherited: tuple[int, ...]) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            become_worker(request, inherited)
        except Exception:  # not SystemExit: a cluster task leaves through the interpreter's exit
            traceback.print_exc()
            os._exit(1)
    say(answers, {"started": request["id"], "pid": pid})


def main() -> None:
    name_process(ZYGOTE_NAME)
    die_with_parent()  # tfscale's pid: the zygote, and with it every worker it forked, dies with tfscale
    answers = os.dup(1)
    os.dup2(2, 1)  # anything printed while importing goes to the zygote's log, not into the answers
    prepare_environment("cpu")  # CPU suites only: no GPU is ever initialised
    for module in PRELOAD:
        importlib.import_module(module)
    say(answers, {"ready": os.getpid()})
    serve(answers)
    os._exit(0)  # tfscale is done with it: skip TensorFlow's teardown (~1 s), as single-process workers do


if __name__ == "__main__":
    main()
