"""The worker zygote with real processes (tfscale.launch.zygote, tfscale.worker.zygote): a forked worker trains a
config in a session of its own under the zygote, with the environment it was given; killing it, or the zygote, is
seen by whoever waits on it, and nothing is left."""

import json
import os
import signal
import subprocess

import psutil
import pytest

from tfscale import contract
from tfscale.launch import zygote
from tfscale.launch.local import LocalLauncher
from tfscale.launch.processes import LIVE, kill_tree, start_worker
from tfscale.launch.zygote import ForkedWorker, stop_zygote
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

from .support import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.workers]

SUITE = """
name: z
defaults: {repeats: 1,
           model_size: tiny, batch_size: 8, steps: 3, warmup_steps: 1, comm_breakdown: false, telemetry_hz: 0}
include: [{strategy: mirrored, devices_per_node: 2}]
"""


@pytest.fixture
def own_zygote(monkeypatch):
    """Each test starts its own zygote and stops it after."""
    monkeypatch.delenv(contract.WORKER_START_ENV, raising=False)
    monkeypatch.setattr(zygote, "_FAILED", [])
    monkeypatch.setattr(zygote, "_ROUND", [0])
    monkeypatch.setattr(zygote, "_ROUNDS", [1])
    stop_zygote()
    yield
    stop_zygote()


def start(tmp_path, sleep_s: float = 0.0, **env) -> tuple[ForkedWorker | subprocess.Popen, object]:
    """A training worker of SUITE's config started as the local launcher starts one (fork=True); with `sleep_s`,
    each of its steps sleeps that long first (contract.TEST_SLEEP_ENV), to keep it alive."""
    [spec] = expand(parse_suite(SUITE, "z.yaml")).specs
    (tmp_path / "spec.json").write_text(json.dumps(spec.to_dict()))
    argv = contract.worker_argv(tmp_path / "result.json", contract.TRAIN, tmp_path / "spec.json")
    if sleep_s:
        env[contract.TEST_SLEEP_ENV] = f"{spec.config_id}={sleep_s}"
    log = open(tmp_path / "worker.log", "ab")  # noqa: SIM115 (closed by the caller)
    return start_worker(argv, log, {**os.environ, **env}, fork=True), log


def test_a_forked_worker_trains_in_its_own_session_under_the_zygote_and_leaves_nothing(tmp_path, own_zygote):
    worker, log = start(tmp_path, sleep_s=0.2)
    try:
        assert isinstance(worker, ForkedWorker)
        process = psutil.Process(worker.pid)
        [the_zygote] = zygote._ZYGOTE
        assert process.ppid() == the_zygote.process.pid
        wait_for(lambda: process.name() == "tfscale-worker", 10, "the forked worker to name itself")
        assert os.getsid(worker.pid) == worker.pid  # its process group is what tfscale kills
        assert worker.wait(120) == 0
    finally:
        log.close()
    assert json.loads((tmp_path / "result.json").read_text())["ok"] is True
    text = (tmp_path / "worker.log").read_text()
    assert f"tfscale worker: config {json.loads((tmp_path / 'spec.json').read_text())['config_id']}" in text
    assert "tfscale worker: done" in text
    kill_tree(worker)  # as the launcher ends every attempt: the worker is no longer live
    assert worker not in LIVE and not psutil.pid_exists(worker.pid)  # reaped by the zygote
    zygote_pid = the_zygote.process.pid
    stop_zygote()
    assert not psutil.pid_exists(zygote_pid)


def test_killing_a_forked_worker_s_tree_is_seen_by_wait(tmp_path, own_zygote):
    worker, log = start(tmp_path, sleep_s=5.0)
    try:
        wait_for(lambda: "tfscale worker: config" in (tmp_path / "worker.log").read_text(), 60, "the worker to start")
        kill_tree(worker)
    finally:
        log.close()
    assert worker.returncode == -signal.SIGTERM
    assert not psutil.pid_exists(worker.pid)
    assert worker not in LIVE


def test_a_zygote_that_dies_takes_its_workers_with_it_and_the_next_worker_gets_a_new_one(tmp_path, own_zygote):
    worker, log = start(tmp_path, sleep_s=5.0)
    log.close()
    [first] = zygote._ZYGOTE
    first.process.kill()
    assert worker.wait(30) == -signal.SIGKILL
    wait_for(lambda: not psutil.pid_exists(worker.pid), 10, "the worker to die with its zygote")
    LIVE.discard(worker)
    again, log = start(tmp_path)
    try:
        assert isinstance(again, ForkedWorker) and again.wait(120) == 0
    finally:
        log.close()
    assert zygote._ZYGOTE[0] is not first


def test_exec_in_the_environment_starts_a_fresh_interpreter(tmp_path, own_zygote, monkeypatch):
    monkeypatch.setenv(contract.WORKER_START_ENV, contract.WORKER_START_EXEC)
    worker, log = start(tmp_path)
    try:
        assert isinstance(worker, subprocess.Popen)
        kill_tree(worker)
    finally:
        log.close()
    assert zygote._ZYGOTE == []


def test_the_next_round_s_zygote_starts_beside_the_first_and_serves_that_round(tmp_path, own_zygote):
    zygote.expect_rounds(2)
    worker, log = start(tmp_path)
    log.close()
    [first] = zygote._ZYGOTE
    spare = zygote._SPARE[1]
    assert spare.alive and spare._ready.is_set()  # imported beside the first, before any worker ran
    assert spare.log_path.name == "zygote-1.log" and first.log_path.name == "zygote.log"
    assert worker.wait(120) == 0
    kill_tree(worker)
    zygote.serve_round(1)
    assert not psutil.pid_exists(first.process.pid)  # stopped and reaped as its round ended
    again, log = start(tmp_path)
    log.close()
    assert zygote._ZYGOTE[0] is spare and len(zygote._ZYGOTE) == 1
    assert not zygote._SPARE  # none for a round the sweep does not have
    assert psutil.Process(again.pid).ppid() == spare.process.pid
    assert again.wait(120) == 0
    kill_tree(again)
    stop_zygote()
    assert not psutil.pid_exists(spare.process.pid)


def test_a_zygote_that_cannot_start_leaves_no_process_and_the_run_is_told(tmp_path, own_zygote, monkeypatch):
    fake = tmp_path / "fake"
    (fake / "tensorflow").mkdir(parents=True)
    (fake / "tensorflow" / "__init__.py").write_text("raise ImportError('no tensorflow here')\n")
    monkeypatch.setenv("PYTHONPATH", str(fake))
    zygote.expect_rounds(2)  # the next round's zygote starts beside it, and must go with it
    worker, log = start(tmp_path)
    try:
        assert isinstance(worker, subprocess.Popen)  # started afresh instead
        kill_tree(worker)
    finally:
        log.close()
    assert "no tensorflow here" in zygote.zygote_failure()
    assert zygote._ZYGOTE == [] and not zygote._SPARE
    mine = [p for p in psutil.Process().children(recursive=True) if "tfscale.worker.zygote" in " ".join(p.cmdline())]
    assert mine == []
    [line] = LocalLauncher().warnings()
    assert line.startswith("CPU workers were started as fresh interpreters") and "no tensorflow here" in line
