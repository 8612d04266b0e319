"""A worker process's life around worker.main: its own temporary folder, and how it exits. Shared by
`python -m tfscale.worker` (a fresh interpreter) and the zygote's forked workers (tfscale.worker.zygote)."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from typing import NoReturn

from tfscale import contract
from tfscale.worker import main as worker


def run_process(argv: list[str] | None = None) -> NoReturn:
    """Run worker.main on `argv` (None: sys.argv) and end the process with its exit code."""
    # TensorFlow's autograph writes one module per traced function to the temporary folder and removes it only at a
    # normal interpreter exit, which os._exit below skips: this process keeps them in a folder of its own, removed as
    # it ends (that of a killed local worker goes with its tfscale's scratch folder; that of a killed srun rank, in
    # its node's own TMPDIR, is removed by the next tfscale there: tfscale.launch.scratch.remove_stale).
    tempfile.tempdir = None  # a forked worker's TMPDIR is its own, not its zygote's: read it again
    own_tmp = tempfile.mkdtemp(prefix=f"{contract.WORKER_TMP_PREFIX}{os.getpid()}-")
    os.environ[contract.TMPDIR_ENV] = tempfile.tempdir = own_tmp
    code = worker.main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    if worker.TEARDOWN_NEEDED[0]:
        # A cluster task exits through TF's teardown, whose shutdown waits for its peers: skipped, a worker that ended
        # first closed its sockets while a peer still received the last all-reduce (UNAVAILABLE: Socket closed, seen
        # once on a 100 mbit simulated link).
        atexit.register(shutil.rmtree, own_tmp, ignore_errors=True)  # runs first: autograph then finds its files gone
        sys.exit(code)
    # A single process: the result file is written and nothing is left to flush: skip the interpreter's and
    # TensorFlow's teardown, which took 0.9 s of every config here (result written 5.3 s after the start, gone at
    # 6.2 s).
    shutil.rmtree(own_tmp, ignore_errors=True)
    os._exit(code)
