"""Which workers the zygote forks, and the Popen-like handle of a forked worker (tfscale.launch.zygote). Pure: no
process is started here (tests/e2e/test_zygote.py starts real ones)."""

import subprocess
import sys

import pytest

from tfscale import contract
from tfscale.launch import zygote
from tfscale.launch.zygote import ForkedWorker, forks


def test_only_this_python_s_own_worker_is_forked(monkeypatch):
    monkeypatch.delenv(contract.WORKER_START_ENV, raising=False)
    own = contract.worker_argv("r.json", contract.TRAIN, "s.json")
    assert forks(own)
    assert not forks(["nsenter", "--net=/run/netns/n0", "--", *own])  # a simulated host's namespace
    assert not forks(contract.worker_argv("r.json", contract.TRAIN, "s.json", python="/opt/py/bin/python"))
    assert not forks([sys.executable, "-m", "other.module"])


def test_exec_in_the_environment_starts_every_worker_afresh(monkeypatch):
    monkeypatch.setenv(contract.WORKER_START_ENV, contract.WORKER_START_EXEC)
    assert not forks(contract.worker_argv("r.json", contract.TRAIN, "s.json"))


def test_a_zygote_that_could_not_start_is_not_asked_again(monkeypatch):
    monkeypatch.delenv(contract.WORKER_START_ENV, raising=False)
    monkeypatch.setattr(zygote, "_FAILED", ["the worker zygote did not start: ImportError: no tensorflow"])
    assert not forks(contract.worker_argv("r.json", contract.TRAIN, "s.json"))
    assert zygote.zygote_failure() == "the worker zygote did not start: ImportError: no tensorflow"


def test_a_forked_worker_answers_poll_and_wait_as_popen_does():
    worker = ForkedWorker(4242)
    assert (worker.pid, worker.poll(), worker.returncode) == (4242, None, None)
    with pytest.raises(subprocess.TimeoutExpired):
        worker.wait(0.01)
    worker._exit(-9)  # the zygote reported it killed by SIGKILL
    assert (worker.poll(), worker.wait(), worker.wait(0), worker.returncode) == (-9, -9, -9, -9)
