"""Multi-process clusters on this host: real MultiWorkerMirrored and ParameterServer jobs over gRPC on 127.0.0.1."""

import json
import socket
from pathlib import Path

import pytest

from tfscale import contract
from tfscale.cli import cli
from tfscale.launch import tasks as launch_tasks
from tfscale.runner.configs import run_config
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

from .support import assert_communication_fields, workers_left

pytestmark = [pytest.mark.e2e, pytest.mark.workers]
SUPPORT = Path(__file__).resolve().parent / "support"

SUITE = """
name: clusters
device: cpu
defaults: {repeats: 1, model_size: tiny, batch_size: 16, steps: 6, warmup_steps: 2, timeout_s: 120}
matrix:
  strategy: [multi_worker_mirrored, parameter_server]
  nodes: [1, 2]
"""


def records_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_cluster_sweep_through_the_cli(runner, tmp_path):
    suite = tmp_path / "clusters.yaml"
    suite.write_text(SUITE)
    result = runner.invoke(
        cli,
        [
            "run",
            str(suite),
            "--results-dir",
            str(tmp_path / "results"),
            "--reports-dir",
            str(tmp_path / "reports"),
            "--run-id",
            "c",
        ],
    )
    assert result.exit_code == 0, result.output
    records = records_of(tmp_path / "results" / "clusters" / "c" / "records.jsonl")
    assert [(r["strategy"], r["nodes"], r["status"]) for r in records] == [
        ("multi_worker_mirrored", 1, "ok"),
        ("multi_worker_mirrored", 2, "ok"),
        ("parameter_server", 1, "ok"),
        ("parameter_server", 2, "ok"),
    ]
    mwms2 = records[1]
    assert mwms2["cluster"] == {"worker": 2}
    assert (mwms2["replicas"], mwms2["global_batch_size"]) == (2, 32)
    assert len(mwms2["rank_throughput_examples_per_s"]) == 2 and len(mwms2["rank_step_time_median_s"]) == 2
    assert mwms2["throughput_examples_per_s"] == pytest.approx(sum(mwms2["rank_throughput_examples_per_s"]))
    assert mwms2["rank_throughput_examples_per_s"][0] == pytest.approx(16 / mwms2["rank_step_time_median_s"][0])
    assert isinstance(mwms2["straggler"], bool)
    assert len(mwms2["step_times_s"]) == 6
    assert_communication_fields(mwms2)
    assert_communication_fields(records[0])  # one worker, one replica: no communication figures
    ps2 = records[3]
    assert ps2["cluster"] == {"chief": 1, "worker": 2, "ps": 1}
    assert (ps2["num_ps"], ps2["partitioner"], ps2["replicas"], ps2["global_batch_size"]) == (1, "min_size", 2, 32)
    assert "12 completed closures counted" in ps2["timing"]  # 6 steps x 2 workers
    assert len(ps2["rank_throughput_examples_per_s"]) == 2 and isinstance(ps2["straggler"], bool)
    timed_s = sum(ps2["step_times_s"])
    assert sum(ps2["rank_throughput_examples_per_s"]) == pytest.approx(
        12 * 16 / timed_s
    )  # all completed examples / time
    assert ps2["throughput_examples_per_s"] == pytest.approx(sum(ps2["rank_throughput_examples_per_s"]))
    assert ps2["comm_time_pull_s"] > 0 and ps2["comm_time_push_s"] > 0
    assert ps2["comm_method"].startswith("parameter_server: medians of 10 rounds")
    assert ps2["comm_time_split_s"] is None  # no all-reduce under PS
    from tfscale.measures.flops import analytic_flops

    for r in records:
        assert r["port_retries"] == 0 and r["launcher"] == "local"
        assert r["throughput_examples_per_s"] > 0
        # counted once, by rank 0 (the part the merge starts from): 16 examples per replica, x replicas
        assert r["flops_per_step"] == analytic_flops("mlp", "tiny", 16) * r["replicas"]
    logs = sorted(p.name for p in (tmp_path / "results" / "clusters" / "c" / "logs").iterdir())
    assert f"{ps2['config_id']}.ps-0.log" in logs and f"{mwms2['config_id']}.worker-1.log" in logs
    assert workers_left(tmp_path) == []


def cluster_spec(text: str, tmp_path: Path):
    (tmp_path / "user_models.py").write_text((SUPPORT / "user_models.py").read_text())
    suite = tmp_path / "s.yaml"
    suite.write_text(text)
    return expand(parse_suite(text, str(suite))).specs[0]


def test_a_taken_port_makes_the_launcher_pick_again(tmp_path, monkeypatch):
    spec = cluster_spec(
        "name: p\ndefaults: {repeats: 1, model_size: tiny, steps: 2, warmup_steps: 1, timeout_s: 120}\n"
        "matrix: {strategy: [multi_worker_mirrored], nodes: [2]}\n",
        tmp_path,
    )
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    held = holder.getsockname()[1]
    picks = []
    real_pick = launch_tasks.pick_ports

    def pick(count):  # the first pick hands worker-1 the held port, as if another process took it meanwhile
        ports = real_pick(count)
        if not picks:
            ports[1] = held
        picks.append(ports)
        return ports

    monkeypatch.setattr(launch_tasks, "pick_ports", pick)
    try:
        record = run_config(spec, tmp_path / "run", "r")
    finally:
        holder.close()
    assert record["status"] == "ok", record["reason"]
    assert record["port_retries"] == 1
    assert len(picks) == 2 and held not in picks[1]
    assert workers_left(tmp_path) == []


def test_a_failing_rank_fails_the_config_and_stops_its_peers(tmp_path):
    spec = cluster_spec(
        "name: p\ndefaults: {repeats: 1, steps: 2, warmup_steps: 1, timeout_s: 120}\n"
        "matrix: {strategy: [multi_worker_mirrored], nodes: [2], model: [m]}\n"
        "models: {m: {entry: 'user_models:fails_on_worker_1'}}\n",
        tmp_path,
    )
    record = run_config(spec, tmp_path / "run", "r")
    assert record["status"] == "failed"
    assert record["reason"] == "worker-1: RuntimeError: worker 1 refuses to build"
    assert record["log_path"].endswith("worker-1.log")
    assert "refuses to build" in record["log_tail"]
    assert workers_left(tmp_path) == []


def test_a_cluster_past_its_timeout_is_stopped_with_each_task_phase(tmp_path, monkeypatch):
    # Fresh interpreters: their import of TensorFlow (3-7 s) is what keeps the tasks from starting within 2 s (a
    # worker forked by the zygote would be serving by then).
    monkeypatch.setenv(contract.WORKER_START_ENV, contract.WORKER_START_EXEC)
    spec = cluster_spec(
        "name: p\ndefaults: {repeats: 1, model_size: tiny, timeout_s: 2}\n"
        "matrix: {strategy: [parameter_server], nodes: [2]}\n",
        tmp_path,
    )
    record = run_config(spec, tmp_path / "run", "r")
    assert record["status"] == "timeout"
    assert record["reason"] == (
        "timed out after 2 s (cluster stopped); last phase chief-0: not started, "
        "worker-0: not started, worker-1: not started, ps-0: not started"
    )
    assert workers_left(tmp_path) == []


def test_a_cluster_that_does_not_form_is_stopped_at_the_startup_deadline(tmp_path, monkeypatch):
    monkeypatch.setenv(contract.WORKER_START_ENV, contract.WORKER_START_EXEC)  # as above: not formed within 1 s
    spec = cluster_spec(
        "name: p\ndefaults: {repeats: 1, model_size: tiny, timeout_s: 120, startup_timeout_s: 1}\n"
        "matrix: {strategy: [multi_worker_mirrored], nodes: [2]}\n",
        tmp_path,
    )
    record = run_config(spec, tmp_path / "run", "r")
    assert record["status"] == "timeout"
    assert record["reason"] == (
        "cluster did not form within startup_timeout_s=1 s (cluster stopped); last phase "
        "worker-0: not started, worker-1: not started"
    )
    assert record["duration_s"] < 30
    assert workers_left(tmp_path) == []


def test_a_trainer_that_stops_making_progress_stops_the_cluster(tmp_path):
    spec = cluster_spec(
        "name: p\ndefaults: {repeats: 1, steps: 2, warmup_steps: 1, timeout_s: 120, stall_timeout_s: 3}\n"
        "matrix: {strategy: [multi_worker_mirrored], nodes: [2], model: [m]}\n"
        "models: {m: {entry: 'user_models:sleepy_regressor', args: {sleep_s: 30}}}\n",
        tmp_path,
    )
    record = run_config(spec, tmp_path / "run", "r")
    assert record["status"] == "timeout"
    assert record["reason"] == (
        "a trainer made no progress for stall_timeout_s=3 s (cluster stopped); last phase "
        "worker-0: model built, worker-1: model built"
    )
    assert record["duration_s"] < 60
    assert workers_left(tmp_path) == []
