"""What the end-to-end tests share: process checks, waiting, the CLI in a child process, record checks. The
scripts and user models the tests run live beside this file."""

import contextlib
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest


def worker_processes(under, task: str = "") -> list[psutil.Process]:
    """tfscale worker processes alive now whose files are under the folder `under` (`task`: the files of that
    cluster task, such as "worker-1", its result or its log; workers of other runs on the
    machine, such as a second test session, are not this test's): a worker started afresh names them on its command
    line; one forked by the zygote (tfscale-worker in `ps -e`) has its log open there."""
    found = []
    for p in psutil.process_iter(["cmdline", "name"]):
        with contextlib.suppress(psutil.Error):
            cmdline = " ".join(p.info["cmdline"] or [])
            if "tfscale.worker" not in cmdline or p.info["name"] == "tfscale-zygote":
                continue
            names = [cmdline, *(f.path for f in p.open_files())]
            if any(str(under) in name and (not task or f".{task}." in name) for name in names):
                found.append(p)
    return found


def workers_left(under) -> list[str]:
    """Command lines and pids of tfscale worker processes still alive whose files are under `under` (a run must
    leave none)."""
    found = []
    for p in worker_processes(under):
        with contextlib.suppress(psutil.Error):
            found.append(f"pid {p.pid} {p.name()}: {' '.join(p.cmdline())}")
    return found


def wait_for(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def tfscale(*args, cwd):
    """The real CLI in a child process, with absolute result paths (so worker command lines name tmp_path)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tfscale", *args, "--results-dir", str(cwd / "results")],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},  # SIGABRT prints its threads' stacks (finish)
    )


def finish(parent: subprocess.Popen, timeout_s: float) -> tuple[str, str]:
    """The output of a `tfscale()` child once it exits. One still running after `timeout_s` fails the test with
    where each of its threads was (faulthandler, on SIGABRT) and is killed, so that what it made can go: seen once
    in CI, a tfscale interrupted inside a simulated network not exiting within 60 s, without a stack to say why."""
    try:
        return parent.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        parent.send_signal(signal.SIGABRT)
        try:
            _, err = parent.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            parent.kill()
            _, err = parent.communicate()
        raise AssertionError(f"tfscale did not exit within {timeout_s:g} s; its stacks:\n{err[-6000:]}") from None


COMM_FIELDS = (
    "compute_time_s",
    "comm_time_exposed_s",
    "comm_time_split_s",
    "comm_time_isolated_s",
    "algbw_bytes_per_s",
    "busbw_bytes_per_s",
    "overlap_fraction",
)


def assert_communication_fields(r: dict) -> None:
    """Multi-replica data-parallel records carry every communication figure; single-replica ones none (null)."""
    if r["replicas"] == 1:
        assert all(r[f] is None for f in COMM_FIELDS + ("overlap_fraction_raw", "comm_method")), r["config_id"]
        return
    if r["jit"]:
        assert all(r[f] is None for f in COMM_FIELDS), r["config_id"]
        assert r["comm_method"].startswith("not measured: with jit (XLA)")
        return
    if r["strategy"] == "central_storage":  # fused - compute-only is not communication (measures.comm)
        assert r["comm_time_exposed_s"] is None and r["overlap_fraction"] is None, r["config_id"]
        assert "; exposed communication not measured: under central_storage" in r["comm_method"]
        assert all(r[f] > 0 for f in COMM_FIELDS if f not in ("comm_time_exposed_s", "overlap_fraction"))
        return
    assert all(r[f] is not None for f in COMM_FIELDS), r["config_id"]
    for f in ("compute_time_s", "comm_time_split_s", "comm_time_isolated_s", "algbw_bytes_per_s"):
        assert r[f] > 0, (r["config_id"], f)
    assert r["comm_time_exposed_s"] == pytest.approx(r["step_time_median_s"] - r["compute_time_s"])
    n = r["replicas"]
    assert r["algbw_bytes_per_s"] == pytest.approx(r["grad_bytes"] / r["comm_time_isolated_s"])
    assert r["busbw_bytes_per_s"] == pytest.approx(r["grad_bytes"] / r["comm_time_isolated_s"] * 2 * (n - 1) / n)
    assert 0.0 <= r["overlap_fraction"] <= 1.0
    raw = (r["compute_time_s"] + r["comm_time_split_s"] - r["step_time_median_s"]) / r["comm_time_split_s"]
    assert r["overlap_fraction_raw"] == pytest.approx(raw)
    assert r["overlap_out_of_range"] == (not 0.0 <= raw <= 1.0)
    assert "all_reduce" in r["comm_method"]
