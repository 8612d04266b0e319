"""A run started from `tfscale launch`'s files, outside `tfscale run`, ends in records and a report through
`tfscale collect`: the hosts target's commands of a 2-node MultiWorkerMirrored config, a ParameterServer config
(chief, two workers, one PS) and a single-process one, executed as a person would (each line in a shell, from the
launch folder)."""

import json
import socket
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tfscale.cli import cli

pytestmark = [pytest.mark.e2e, pytest.mark.workers]

SUITE = """
name: launched
defaults: {repeats: 1, model_size: tiny, batch_size: 16, steps: 20, warmup_steps: 2, timeout_s: 120}
matrix:
  model: [mlp]
  strategy: [multi_worker_mirrored]
  nodes: [2]
include:
  - {model: mlp, strategy: one_device}
  - {model: mlp, strategy: parameter_server, nodes: 2}
"""


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def test_hosts_commands_run_by_hand_end_in_records_and_a_report(tmp_path):
    suite = tmp_path / "launched.yaml"
    suite.write_text(SUITE)
    out = tmp_path / "launch"
    hosts = ",".join(f"127.0.0.1:{port}" for port in free_ports(4))
    runner = CliRunner()
    emitted = runner.invoke(
        cli, ["launch", str(suite), "--target", "hosts", "--hosts", hosts, "-o", str(out), "--python", sys.executable]
    )
    assert emitted.exit_code == 0, emitted.output
    groups = []  # each config's commands, after its comment line
    for line in (out / "hosts.txt").read_text().splitlines()[1:]:
        if line.startswith("# "):
            groups.append([])
        else:
            groups[-1].append(line.split(": ", 1)[1])
    assert [len(g) for g in groups] == [2, 1, 4]  # two MWMS workers, one single process, chief + 2 workers + PS
    for config in groups:  # a config's tasks run side by side
        processes = [
            subprocess.Popen(["bash", "-c", c], cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for c in config
        ]
        try:
            logs = [p.communicate(timeout=180)[0].decode(errors="replace") for p in processes]
        finally:
            for p in processes:
                p.kill()
        assert [p.returncode for p in processes] == [0] * len(config), "\n".join(log[-2000:] for log in logs)

    args = ["--results-dir", str(tmp_path / "results"), "--reports-dir", str(tmp_path / "reports")]
    result = runner.invoke(cli, ["collect", str(out), "--run-id", "c1", *args])
    assert result.exit_code == 0, result.output
    run = tmp_path / "results" / "launched" / "c1"
    assert result.output.splitlines()[0] == f"collected 3 process(es) into {run / 'records.jsonl'}"
    own = tmp_path / "reports" / "launched" / "c1.html"
    assert result.output.splitlines()[-1] == f"report: {tmp_path / 'reports' / 'launched.html'} (this run's own: {own})"
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert [(r["strategy"], r["status"], r["launcher"]) for r in records] == [
        ("multi_worker_mirrored", "ok", "launch"),
        ("one_device", "ok", "launch"),
        ("parameter_server", "ok", "launch"),
    ]
    mwms, single, ps = records
    assert ps["cluster"] == {"chief": 1, "worker": 2, "ps": 1} and ps["replicas"] == 2
    assert (
        len(mwms["rank_throughput_examples_per_s"]) == 2 and mwms["cluster"] == {"worker": 2} and mwms["replicas"] == 2
    )
    assert mwms["timed_steps"] == 20 and single["timed_steps"] == 20
    # each task's device environment as it recorded it: a CPU suite's tasks see no GPU (a GPU suite's per-task
    # CUDA_VISIBLE_DEVICES in these commands: tests/unit/launch/test_emit.py; on hardware: tests/gpu/validate.sh)
    assert mwms["rank_gpu_uuids"] == [[], []] and len(mwms["rank_cpu_affinity"]) == 2
    assert mwms["duration_s"] is None  # not known from result parts: empty, not 0
    assert (tmp_path / "reports" / "launched.html").is_file()
    again = runner.invoke(cli, ["collect", str(out), "--run-id", "c1", *args])
    assert again.exit_code == 2 and "already has records" in again.output
