"""Fault injection with real processes: interrupting the parent, killing a cluster worker."""

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .support import finish, tfscale, wait_for, worker_processes, workers_left

pytestmark = [pytest.mark.e2e, pytest.mark.workers]

SUITE = """
name: faults
defaults: {repeats: 1,
           model_size: tiny, batch_size: 8, steps: 3, warmup_steps: 1, comm_breakdown: false, telemetry_hz: 0}
matrix:
  strategy: [one_device, mirrored]
  devices_per_node: [1, 2, 4]
exclude: [{strategy: one_device, devices_per_node: [2, 4]}]
"""


def records(path: Path) -> list[dict]:
    """Complete records only: a line being appended while we read may be cut short."""
    found = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return found


def test_interrupt_mid_sweep_then_resume_runs_every_config_once(tmp_path):
    (tmp_path / "faults.yaml").write_text(SUITE)
    path = tmp_path / "results" / "faults" / "r" / "records.jsonl"
    # several seconds per config: the interrupt lands while configs remain, even on a loaded machine
    (tmp_path / "faults.yaml").write_text(SUITE.replace("steps: 3,", "steps: 300,"))
    parent = tfscale("run", "faults.yaml", "--run-id", "r", "--no-report", cwd=tmp_path)
    wait_for(lambda: len(records(path)) >= 1, 120, "the first record")
    parent.send_signal(signal.SIGINT)
    _, err = finish(parent, 60)
    assert parent.returncode == 130, err
    assert "resume with: tfscale run faults.yaml --run-id r" in err
    kept = records(path)
    assert 1 <= len(kept) < 4
    assert len({r["config_id"] for r in kept}) == len(kept)
    assert workers_left(tmp_path) == []

    resumed = tfscale("run", "faults.yaml", "--run-id", "r", "--no-report", cwd=tmp_path)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert f"{len(kept)} already recorded, skipped" in out
    final = records(path)
    assert len(final) == 4 and len({r["config_id"] for r in final}) == 4
    assert [r["config_id"] for r in final[: len(kept)]] == [r["config_id"] for r in kept]
    assert all(r["status"] == "ok" for r in final)


def test_rerun_failed_replaces_the_failed_record(tmp_path):
    (tmp_path / "faults.yaml").write_text(
        # 2000 steps of ~1.2 ms: a fork of the zygote ran 3 steps within the 1 s timeout on a fast machine
        SUITE.replace(
            "matrix:", "include: [{strategy: mirrored, devices_per_node: 2, steps: 2000, timeout_s: 1}]\nmatrix:"
        ).replace("devices_per_node: [1, 2, 4]", "devices_per_node: [1]")
    )
    first = tfscale("run", "faults.yaml", "--run-id", "r", "--no-report", cwd=tmp_path)
    first.communicate(timeout=300)
    assert first.returncode == 1
    path = tmp_path / "results" / "faults" / "r" / "records.jsonl"
    assert [r["status"] for r in records(path)] == ["ok", "ok", "timeout"]
    (tmp_path / "faults.yaml").write_text(
        (tmp_path / "faults.yaml").read_text().replace("timeout_s: 1", "timeout_s: 120")
    )
    # the longer timeout is a run setting: same config_id, so it is the same config run again
    again = tfscale("run", "faults.yaml", "--run-id", "r", "--rerun-failed", "--no-report", cwd=tmp_path)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert "1 failed ones run again" in out
    assert [r["status"] for r in records(path)] == ["ok", "ok", "ok"]


def test_an_existing_run_without_resume_is_refused(tmp_path):
    (tmp_path / "faults.yaml").write_text(SUITE)
    folder = tmp_path / "results" / "faults" / "r"
    folder.mkdir(parents=True)
    (folder / "records.jsonl").write_text("")
    done = tfscale("run", "faults.yaml", "--run-id", "r", "--no-resume", cwd=tmp_path)
    _, err = done.communicate(timeout=60)
    assert done.returncode == 2
    assert err == (
        f"tfscale: error: {folder}: this run already has records; resume it "
        "(--resume, --rerun-failed) or start a new one (--fresh)\n"
    )


def long_mwms_run(tmp_path: Path, strategy: str = "multi_worker_mirrored") -> subprocess.Popen:
    """A 2-worker MultiWorkerMirrored (or ParameterServer) config of many steps, started through the CLI; returns
    once its trainer times its steps."""
    (tmp_path / "k.yaml").write_text(
        "name: k\ndefaults: {repeats: 1, model_size: small, steps: 400, warmup_steps: 1, "
        "timeout_s: 120, comm_breakdown: false}\n"
        f"matrix: {{strategy: [{strategy}], nodes: [2]}}\n"
    )
    parent = tfscale("run", "k.yaml", "--run-id", "r", "--no-report", cwd=tmp_path)
    work = tmp_path / "results" / "k" / "r" / "work"
    trainer = "worker-1" if strategy == "multi_worker_mirrored" else "chief-0"

    def timing() -> bool:
        return any("window" in p.read_text() for p in work.glob(f"*.{trainer}.progress"))

    with contextlib.suppress(AssertionError):  # not timing after 120 s: handled below, with tfscale's stderr
        wait_for(lambda: parent.poll() is not None or timing(), 120, f"{trainer} timing its steps")
    if timing():
        return parent
    # Not timing (the run ended or is still starting): stop it here, not in a later test's garbage collection (a
    # Popen left running fails whichever test collects it), and say what tfscale said
    parent.kill()
    _, err = parent.communicate(timeout=30)
    raise AssertionError(f"{trainer} never timed its steps (tfscale exit {parent.returncode}): {err[-3000:]}")


def test_kill_9_of_one_mwms_worker_fails_the_config_quickly_and_leaves_nothing(tmp_path):
    parent = long_mwms_run(tmp_path)
    [victim] = worker_processes(tmp_path, task="worker-1")
    killed_at = time.monotonic()
    os.kill(victim.pid, signal.SIGKILL)
    parent.communicate(timeout=130)
    assert time.monotonic() - killed_at < 120 + 10
    [record] = records(tmp_path / "results" / "k" / "r" / "records.jsonl")
    assert record["status"] == "failed"
    assert record["reason"] == (
        "worker-1: killed by signal SIGKILL (also what the kernel's out-of-memory killer sends; see dmesg)"
    )
    assert workers_left(tmp_path) == []


def test_a_second_interrupt_exits_at_once_without_orphans(tmp_path):
    parent = long_mwms_run(tmp_path)
    parent.send_signal(signal.SIGINT)
    time.sleep(0.05)
    parent.send_signal(signal.SIGINT)
    _, err = finish(parent, 30)
    assert parent.returncode == 130, err
    wait_for(lambda: workers_left(tmp_path) == [], 10, "the workers to be gone")
    assert records(tmp_path / "results" / "k" / "r" / "records.jsonl") == []  # no partial record


@pytest.mark.parametrize("strategy", ["parameter_server", "multi_worker_mirrored"])
def test_kill_9_of_tfscale_itself_takes_every_worker_and_server_with_it(tmp_path, strategy):
    parent = long_mwms_run(tmp_path, strategy)
    started = workers_left(tmp_path)
    assert len(started) == (4 if strategy == "parameter_server" else 2)  # chief, 2 workers, 1 PS | 2 workers
    killed_at = time.monotonic()
    parent.kill()  # SIGKILL: tfscale runs no cleanup of its own
    parent.communicate(timeout=10)
    wait_for(lambda: workers_left(tmp_path) == [], 10, "every worker and server to die with tfscale")
    print(f"{strategy}: {len(started)} processes gone {time.monotonic() - killed_at:.2f} s after SIGKILL of tfscale")


TEN = """
name: ten
defaults: {repeats: 1,
           model_size: tiny, batch_size: 8, steps: 10, warmup_steps: 1, comm_breakdown: false, telemetry_hz: 0}
matrix:
  model: [mlp]
  strategy: [one_device, mirrored, central_storage]
  batch_size: [8, 16, 32]
exclude: [{strategy: one_device, batch_size: 32}]
include: [{model: mlp, strategy: mirrored, devices_per_node: 2}, {model: mlp, strategy: mirrored, devices_per_node: 4}]
"""


def test_two_concurrent_runs_of_one_run_id_run_each_config_once(tmp_path):
    (tmp_path / "ten.yaml").write_text(TEN)
    first = tfscale("run", "ten.yaml", "--run-id", "same", "--no-report", cwd=tmp_path)
    time.sleep(1.0)  # both plan the same 10 configs; each claims a config before running it
    second = tfscale("run", "ten.yaml", "--run-id", "same", "--resume", "--no-report", cwd=tmp_path)
    outputs = [p.communicate(timeout=600) for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], outputs
    lines = records(tmp_path / "results" / "ten" / "same" / "records.jsonl")
    ids = [r["config_id"] for r in lines]
    assert len(ids) == 10 and len(set(ids)) == 10 and all(r["status"] == "ok" for r in lines)
    ran = [sum(" ok, " in line for line in out.splitlines()) for out, _ in outputs]  # one progress line a config
    skipped = [sum(line.startswith("skipping ") for line in err.splitlines()) for _, err in outputs]
    assert sum(ran) == 10, outputs
    print(f"two concurrent runs: {ran[0]} and {ran[1]} configs run; {skipped} skipped as claimed by the other")
    assert not (tmp_path / "results" / "ten" / "same" / "claims").exists()
    assert workers_left(tmp_path) == []


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs (root only): a results folder that fills up."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_results_disk_stops_the_sweep_in_one_line_and_resume_finishes_it(tmp_path, small_disk):
    (small_disk / "faults.yaml").write_text(SUITE)  # the results folder goes beside it, on the small disk
    results = small_disk / "results"
    run = results / "faults" / "d"
    first = tfscale("run", "faults.yaml", "--run-id", "d", "--no-report", cwd=small_disk)
    wait_for(lambda: len(records(run / "records.jsonl")) >= 1, 120, "the first record")
    filler = small_disk / "filler"
    with open(filler, "wb", buffering=0) as f, contextlib.suppress(OSError):  # fill what is left of the disk
        while True:
            f.write(b"\0" * 65536)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 2, err
    [line] = [line for line in err.splitlines() if line.startswith("tfscale: error: ")]
    assert "No space left on device" in line and str(results) in line and "resume" in line
    kept = (run / "records.jsonl").read_bytes()
    assert kept.endswith(b"\n") and len(records(run / "records.jsonl")) == kept.count(b"\n")  # no partial line
    filler.unlink()
    second = tfscale("run", "faults.yaml", "--run-id", "d", "--resume", "--no-report", cwd=small_disk)
    _, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    finished = records(run / "records.jsonl")
    assert sorted(r["config_id"] for r in finished) == sorted({r["config_id"] for r in finished})
    assert len(finished) == 4 and all(r["status"] == "ok" for r in finished), [r["reason"] for r in finished]
    assert (run / "records.jsonl").read_bytes().startswith(kept)
