"""`tfscale run --launcher slurm` against a real Slurm (Debian's slurmctld, slurmd, munge) started for the tests
in a private folder: one node on this host, and two nodes in network namespaces. Skipped, with the reason, where
the packages are missing or the tests do not run as root (.ci/run installs them; CI runs as root)."""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tfscale.metrics import RECORD_COLUMNS

from .support import workers_left
from .support.slurm_cluster import HOSTS_MARK, NAMESPACE_PREFIX, Cluster, missing, remove_stale

REASON = missing()
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.workers,
    pytest.mark.system,
    pytest.mark.skipif(REASON is not None, reason=REASON or ""),
]

SUITE = """
name: onslurm
device: cpu
defaults: {repeats: 1, model_size: tiny, batch_size: 16, steps: 4, warmup_steps: 1, comm_steps: 2, timeout_s: 150,
           telemetry_hz: 0}
matrix:
  strategy: [one_device]
include:
  - {strategy: multi_worker_mirrored, nodes: 2}
commbench: {min_bytes: 1024, max_bytes: 8192, iters: 2, warmup: 1}
"""


def slurm_daemons() -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                name = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                continue
            if name in ("slurmctld", "slurmd", "slurmstepd", "munged"):
                found.append(f"{pid} {name}")
    return found


@pytest.fixture(scope="module")
def one_node(tmp_path_factory):
    before = slurm_daemons()
    cluster = Cluster(tmp_path_factory.mktemp("slurm1"), nodes=1).start()
    yield cluster
    cluster.stop()
    time.sleep(0.5)
    assert set(slurm_daemons()) <= set(before)  # every daemon the cluster started is gone


def tfscale(
    cluster: Cluster, cwd: Path, *args: str, timeout: float = 400, patch: str = ""
) -> subprocess.CompletedProcess:
    """`tfscale run ARGS --launcher slurm` in `cwd`, in a process that first runs `patch` (Python) where given."""
    start = (
        [sys.executable, "-c", f"{patch}\nfrom tfscale.cli import main\nmain()"]
        if patch
        else [sys.executable, "-m", "tfscale"]
    )
    return subprocess.run(
        [
            *start,
            "run",
            *args,
            "--launcher",
            "slurm",
            "--results-dir",
            str(cwd / "results"),
            "--reports-dir",
            str(cwd / "reports"),
        ],
        cwd=cwd,
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def records(cwd: Path, suite: str, run: str) -> list[dict]:
    path = cwd / "results" / suite / run / "records.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_sweep_through_slurm_has_the_shape_of_a_local_one(one_node, tmp_path):
    (tmp_path / "s.yaml").write_text(SUITE)
    done = tfscale(one_node, tmp_path, "s.yaml", "--run-id", "a")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "slurm: allocation" in done.stdout and "granted" in done.stdout
    single, mwms = records(tmp_path, "onslurm", "a")
    for r in (single, mwms):
        assert set(RECORD_COLUMNS) <= set(r)
        assert (r["status"], r["launcher"]) == ("ok", "slurm"), r["reason"]
        assert r["slurm_job_id"].isdigit() and r["slurm_step_id"].isdigit()
    assert single["slurm_job_id"] == mwms["slurm_job_id"]  # one allocation, one step per config
    assert int(mwms["slurm_step_id"]) > int(single["slurm_step_id"])
    assert mwms["cluster"] == {"worker": 2} and len(mwms["rank_throughput_examples_per_s"]) == 2
    assert mwms["throughput_examples_per_s"] == pytest.approx(sum(mwms["rank_throughput_examples_per_s"]))
    assert mwms["comm_time_isolated_s"] > 0
    # the all-reduce sweep ran through the same launcher, as a job step of its own
    commbench = (tmp_path / "results" / "onslurm" / "a" / "commbench.jsonl").read_text()
    [sweep] = [json.loads(line) for line in commbench.splitlines()]
    assert (sweep["strategy"], sweep["nodes"], len(sweep["rows"])) == ("multi_worker_mirrored", 2, 4)
    assert all(row["time_s"] > 0 for row in sweep["rows"])
    # the fit reached the record (its value, a 4-point fit extrapolated to the gradients' size, can be far off)
    assert isinstance(mwms["comm_time_model_s"], float) and "commbench" not in done.stderr
    assert (tmp_path / "reports" / "onslurm.html").exists()
    again = tfscale(one_node, tmp_path, "s.yaml", "--run-id", "a")  # a later submission resumes the run
    assert again.returncode == 0 and "2 already recorded, skipped; 0 to run" in again.stdout, again.stdout
    # the allocation tfscale asked for is cancelled at the end
    left = one_node.run("squeue", "-h", "-o", "%i %j").stdout.split("\n")
    assert [line for line in left if "tfscale" in line] == []
    assert workers_left(tmp_path) == []


def test_cancelled_and_timed_out_steps_become_records_and_the_sweep_goes_on(one_node, tmp_path):
    (tmp_path / "f.yaml").write_text("""
name: faults
device: cpu
defaults: {repeats: 1, model_size: tiny, batch_size: 8, warmup_steps: 1, comm_breakdown: false, telemetry_hz: 0}
include:
  - {strategy: one_device, batch_size: 9, steps: 100000, timeout_s: 300}
  - {strategy: one_device, batch_size: 10, steps: 100000, timeout_s: 12}
  - {strategy: one_device, batch_size: 11, steps: 3, timeout_s: 120}
""")

    def cancel_first_step():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            steps = one_node.run("squeue", "-h", "-s", "-o", "%i %j").stdout.split("\n")
            running = [line.split()[0] for line in steps if "tfscale-" in line]
            if running:
                time.sleep(6)  # let the worker start training
                one_node.run("scancel", running[0])
                return
            time.sleep(0.3)

    canceller = threading.Thread(target=cancel_first_step)
    canceller.start()
    done = tfscale(one_node, tmp_path, "f.yaml", "--run-id", "f", "--no-report")
    canceller.join()
    assert done.returncode == 1, done.stdout + done.stderr
    cancelled, timed_out, fine = records(tmp_path, "faults", "f")
    assert cancelled["status"] == "failed"
    assert "CANCELLED" in cancelled["reason"] and f"step {cancelled['slurm_job_id']}." in cancelled["reason"]
    assert timed_out["status"] == "timeout"
    assert timed_out["reason"].startswith("timed out after 12 s (step ")
    assert fine["status"] == "ok"
    assert workers_left(tmp_path) == []


def test_waiting_in_the_queue_is_reported(one_node, tmp_path):
    # an exclusive job holds the only node: tfscale's allocation waits, and says why
    blocker = one_node.run(
        "sbatch", "--exclusive", "--parsable", f"--output={tmp_path / 'blocker.out'}", "--wrap", "sleep 300"
    ).stdout.strip()
    try:
        (tmp_path / "w.yaml").write_text(SUITE.split("include:")[0])
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import tfscale.launch.slurm as s; s.PENDING_NOTE_S = 1.0; from tfscale.cli import main; main()",
                "run",
                "w.yaml",
                "--launcher",
                "slurm",
                "--no-report",
                "--results-dir",
                str(tmp_path / "results"),
                "--run-id",
                "w",
            ],
            cwd=tmp_path,
            env=one_node.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            lines.append(line)
            if "waiting for allocation" in line and "PENDING" in line:
                break
        one_node.run("scancel", blocker)
        out, err = process.communicate(timeout=200)
    finally:
        one_node.run("scancel", blocker)
    assert any("waiting for allocation" in line and "PENDING" in line for line in lines), "".join(lines) + err
    assert process.returncode == 0, "".join(lines) + out + err
    assert [r["status"] for r in records(tmp_path, "onslurm", "w")] == ["ok"]


def test_two_nodes_in_namespaces_run_a_two_node_config(tmp_path):
    before = slurm_daemons()
    cluster = Cluster(tmp_path / "slurm2", nodes=2).start()
    try:
        (tmp_path / "s.yaml").write_text(
            SUITE.split("matrix:")[0] + "matrix:\n  strategy: [multi_worker_mirrored]\n  nodes: [2]\n"
        )
        done = tfscale(cluster, tmp_path, "s.yaml", "--run-id", "n2")
        assert done.returncode == 0, done.stdout + done.stderr
        [mwms] = records(tmp_path, "onslurm", "n2")
        assert (mwms["status"], mwms["nodes"], mwms["cluster"]) == ("ok", 2, {"worker": 2})
        log = (tmp_path / "results" / "onslurm" / "n2" / mwms["log_path"]).read_text()
        assert "--nodes=2 --ntasks=2" in log
    finally:
        cluster.stop()
    time.sleep(0.5)
    assert set(slurm_daemons()) <= set(before)  # every daemon the cluster started is gone
    assert workers_left(tmp_path) == []
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"slurmtest-{os.getpid()}-" not in namespaces  # this session's (another may run its own beside it)


def test_what_a_killed_test_session_left_is_removed_before_a_two_node_cluster_starts():
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid no process has now, as a killed session's
    ns, hosts = f"{NAMESPACE_PREFIX}{dead.pid}-n0", Path("/etc/hosts")
    backup = hosts.read_text()
    try:
        subprocess.run(["ip", "netns", "add", ns], check=True)
        subprocess.run(["ip", "link", "add", "tfsst9h", "type", "veth", "peer", "name", "tfsst9n"], check=True)
        subprocess.run(["ip", "link", "set", "tfsst9n", "netns", ns], check=True)
        hosts.write_text(backup + HOSTS_MARK + "10.214.9.2 n9\n")
        removed = remove_stale()
        listed = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
        assert ns in removed and "tfsst9h" not in listed
        assert hosts.read_text() == backup
    finally:
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
        subprocess.run(["ip", "link", "delete", "tfsst9h"], capture_output=True)
        hosts.write_text(backup)


def test_a_trainer_silent_under_slurm_gets_its_step_cancelled(one_node, tmp_path):
    (tmp_path / "user_models.py").write_text((Path(__file__).parent / "support" / "user_models.py").read_text())
    (tmp_path / "z.yaml").write_text(
        "name: stall\ndefaults: {repeats: 1, steps: 2, warmup_steps: 1, timeout_s: 150, stall_timeout_s: 3,\n"
        "           telemetry_hz: 0}\n"
        "matrix: {strategy: [multi_worker_mirrored], nodes: [2], model: [m]}\n"
        "models: {m: {entry: 'user_models:sleepy_regressor', args: {sleep_s: 60}}}\n"
    )
    started = time.monotonic()
    done = tfscale(one_node, tmp_path, "z.yaml", "--run-id", "z", "--no-report")
    assert done.returncode == 1, done.stdout + done.stderr
    [record] = records(tmp_path, "stall", "z")
    assert record["status"] == "timeout"
    assert record["reason"].startswith("a trainer made no progress for stall_timeout_s=3 s (step "), record["reason"]
    assert record["reason"].endswith("cancelled); last phase worker-0: model built, worker-1: model built")
    assert time.monotonic() - started < 100  # not the 60 s sleep, nor timeout_s
    assert workers_left(tmp_path) == []


def test_a_port_taken_on_the_node_makes_the_step_start_again_on_other_ports(one_node, tmp_path):
    (tmp_path / "p.yaml").write_text(
        SUITE.split("matrix:")[0] + "matrix: {strategy: [multi_worker_mirrored], nodes: [2]}\n"
    )
    # The parent holds a port and hands it out as the first step's port base: worker-0 cannot bind it.
    patch = (
        "import socket, tfscale.launch.slurm as s\n"
        "held = socket.socket(); held.bind(('0.0.0.0', 0)); held.listen()\n"
        "picks = []\n"
        "real = s.pick_ports\n"
        "s.pick_ports = lambda n: picks.append(n) or ([held.getsockname()[1]] if len(picks) == 1 else real(n))"
    )
    done = tfscale(one_node, tmp_path, "p.yaml", "--run-id", "p", "--no-report", patch=patch)
    assert done.returncode == 0, done.stdout + done.stderr
    [record] = records(tmp_path, "onslurm", "p")
    assert (record["status"], record["port_retries"]) == ("ok", 1), record["reason"]
    log = (tmp_path / "results" / "onslurm" / "p" / record["log_path"]).read_text()
    assert log.count("--- tfscale: srun") == 2
    assert workers_left(tmp_path) == []
