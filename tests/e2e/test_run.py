"""End to end through the real CLI: real TensorFlow worker processes on logical CPU devices."""

import html
import json
import math
import os
import tempfile
from pathlib import Path

import pytest

from tfscale import load_results
from tfscale.analysis import add_scaling
from tfscale.cli import cli
from tfscale.host.envinfo import cpu_set_text
from tfscale.metrics import RECORD_COLUMNS
from tfscale.store.records import SCHEMA_VERSION

from .support import assert_communication_fields, workers_left

pytestmark = [pytest.mark.e2e, pytest.mark.workers]
SUPPORT = Path(__file__).resolve().parent / "support"

SUITE = """
name: e2e
device: cpu
defaults: {repeats: 1, model_size: tiny, batch_size: 16, steps: 6, warmup_steps: 2, timeout_s: 120}
matrix:
  model: [mlp, regressor]
  strategy: [one_device, mirrored]
  devices_per_node: [1, 2]
exclude:
  - {strategy: one_device, devices_per_node: 2}
  - {model: regressor, devices_per_node: 1}
include:
  - {model: mlp, strategy: mirrored, devices_per_node: 4}
  - {model: mlp, strategy: mirrored, devices_per_node: 2, precision: mixed_bfloat16, jit: true, optimizer: adam}
  - {model: transformer, strategy: central_storage, devices_per_node: 2, precision: mixed_float16,
     batch_policy: strong, batch_size: 16}
models:
  regressor: {entry: "user_models:tiny_regressor", args: {width: 16}}
"""


def _compute(precision: str) -> str:
    from tfscale.measures.peaks import CPU_DTYPES

    return CPU_DTYPES[precision]


def read_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    from click.testing import CliRunner

    tmp = tmp_path_factory.mktemp("e2e")
    (tmp / "user_models.py").write_text((SUPPORT / "user_models.py").read_text())
    suite = tmp / "e2e.yaml"
    suite.write_text(SUITE)
    before = autograph_files()
    result = CliRunner().invoke(
        cli,
        [
            "run",
            str(suite),
            "--results-dir",
            str(tmp / "results"),
            "--reports-dir",
            str(tmp / "reports"),
            "--run-id",
            "r1",
        ],
    )
    return tmp, result, autograph_files() - before


def autograph_files() -> set[str]:
    """The modules TensorFlow's autograph wrote to the temporary folder (workers: to tfscale's scratch folder)."""
    return {p.name for p in Path(tempfile.gettempdir()).glob("__autograph_generated_file*")}


def test_sweep_succeeds_and_reports(sweep):
    tmp, result, _ = sweep
    assert result.exit_code == 0, result.output
    assert "[####################] 7/7" in result.output
    own = tmp / "reports" / "e2e" / "r1.html"  # kept per run; e2e.html is the suite's latest, the same page
    assert result.output.rstrip().endswith(f"report: {tmp / 'reports' / 'e2e.html'} (this run's own: {own})")
    assert own.read_bytes() == (tmp / "reports" / "e2e.html").read_bytes()
    html = (tmp / "reports" / "e2e.html").read_text()
    assert 'id="plotlyjs-gz"' in html and "<script src=" not in html  # plotly.js packed inside


def test_workers_leave_nothing_in_the_temporary_folder(sweep):
    _, result, left = sweep
    assert result.exit_code == 0, result.output
    assert left == set()  # before: 5 per one-device mlp config (measured 2026-12-07)


def test_records_carry_every_column_with_real_values(sweep):
    tmp, _, _ = sweep
    run = tmp / "results" / "e2e" / "r1"
    records = read_records(run / "records.jsonl")
    assert [(r["model"], r["strategy"], r["devices_per_node"], r["precision"]) for r in records] == [
        ("mlp", "one_device", 1, "float32"),
        ("mlp", "mirrored", 1, "float32"),
        ("mlp", "mirrored", 2, "float32"),
        ("regressor", "mirrored", 2, "float32"),
        ("mlp", "mirrored", 4, "float32"),
        ("mlp", "mirrored", 2, "mixed_bfloat16"),
        ("transformer", "central_storage", 2, "mixed_float16"),
    ]
    for r in records:
        assert set(RECORD_COLUMNS) <= set(r), set(RECORD_COLUMNS) - set(r)
        assert r["status"] == "ok", r["reason"]
        assert r["reason"] is None
        assert r["schema_version"] == SCHEMA_VERSION
        assert r["device_kind"] == "cpu-logical"
        assert r["timed_steps"] == 6 and len(r["step_times_s"]) == 6
        times = sorted(r["step_times_s"])
        assert r["step_time_median_s"] == pytest.approx((times[2] + times[3]) / 2)
        assert r["step_time_ci95_low_s"] == times[0] and r["step_time_ci95_high_s"] == times[-1]
        assert r["throughput_examples_per_s"] == pytest.approx(r["global_batch_size"] / r["step_time_median_s"])
        assert r["first_step_s"] > r["step_time_median_s"]  # tracing is not in the timed steps
        # CPU workers are forked by the zygote: their peak leaves out its pages they never touched (launch.zygote)
        assert r["peak_memory_bytes"] > 0 and r["memory_kind"] == "forked_process_peak_rss"
        assert r["peak_memory_device"] == "process"
        # the peak is read right after the timed loop; the process's own peak at its end (after the breakdown)
        assert r["host_rss_peak_bytes"] >= r["peak_memory_bytes"]
        assert r["rank_gpu_uuids"] == [[]] and len(r["rank_cpu_affinity"]) == 1
        assert r["rank_cpu_affinity"][0] == cpu_set_text(os.sched_getaffinity(0))  # a local worker inherits ours
        assert "host sync" in r["timing"]
        assert math.isfinite(r["final_loss"])
        assert 0.0 <= r["host_cpu_util_mean_pct"] <= 100.0 and r["telemetry_samples"] >= 1
        assert (r["gpu_util_mean_pct"], r["gpu_mem_peak_bytes"], r["gpu_power_mean_w"]) == (None, None, None)
        assert r["gpu_telemetry_note"]  # empty GPU figures say why
        assert (run / r["telemetry_path"]).is_file()
        assert (run / r["log_path"]).is_file()
    mirrored2 = records[2]
    assert (
        mirrored2["replicas"],
        mirrored2["global_batch_size"],
        mirrored2["throughput_per_replica_examples_per_s"],
    ) == (
        2,
        32,
        pytest.approx(mirrored2["throughput_examples_per_s"] / 2),
    )
    # FLOPs counted from each config's own gradient graph: the mlp's is the analytic count at the replica's batch
    # share, x replicas; the user model's is counted too (its two dense layers, no input gradient for the first)
    for r in records:
        assert r["flops_method"].startswith("graph count"), r["flops_method"]
        assert r["flops_per_step"] == r["flops_per_replica_step"] * r["replicas"] > 0
    from tfscale.measures.flops import analytic_flops

    # the CPU's peak measured before the sweep (env.json), each device's share of it in the record, MFU derived
    env_peaks = json.loads((run / "env.json").read_text())["peak_flops_per_s"]
    assert env_peaks["host"]["float32"] > 1e9 and env_peaks["method"].startswith("matmul microbenchmark")
    for r in records:
        assert r["peak_flops_per_s"] == pytest.approx(env_peaks["host"][_compute(r["precision"])] / r["devices"])
        assert r["peak_flops_method"] == env_peaks["method"]
    frame = add_scaling(load_results(run))
    assert (frame["mfu"] > 0).all() and (frame["achieved_flops_per_s"] > 0).all()
    # energy: the host's RAPL counters where the kernel has them, else empty with the reason (never 0)
    for r in records:
        if r["energy_j"] is None:
            assert r["energy_method"].startswith("not measured: "), r["energy_method"]
        else:
            assert r["energy_j"] > 0 and r["energy_method"].startswith("RAPL package counters")

    assert mirrored2["flops_per_step"] == 2 * analytic_flops("mlp", "tiny", 16)
    regressor = records[3]
    assert regressor["flops_per_replica_step"] == 2 * 16 * (4 * 16 * 2 + 16 * 1 * 3)  # 16 examples per replica
    assert regressor["model_size"] is None
    assert regressor["params"] == 4 * 16 + 16 + 16 + 1  # Dense(16) on 4 features, Dense(1)
    assert regressor["grad_bytes"] == regressor["params"] * 4
    strong = records[6]
    assert (strong["batch_policy"], strong["global_batch_size"], strong["replicas"]) == ("strong", 16, 2)
    for r in records:
        assert_communication_fields(r)
    env = json.loads((run / "env.json").read_text())
    assert env["tensorflow"]["version"].startswith("2.21")
    assert env["cpu_logical_cores"] >= 1


def test_load_results_reads_the_run(sweep):
    tmp, _, _ = sweep
    frame = load_results(tmp / "results")
    assert len(frame) == 7
    assert list(frame.columns[: len(RECORD_COLUMNS)]) == list(RECORD_COLUMNS)


FAILING = """
name: failing
device: cpu
defaults: {repeats: 1, model_size: tiny, batch_size: 8, steps: 3, warmup_steps: 1, timeout_s: 60}
matrix:
  model: [crashes, raises, mlp, hangs]
include:
  - {model: mlp, batch_size: 4, steps: 100000, timeout_s: 1}  # ~1 ms steps: a fork of the zygote ends 3 in < 1 s
exclude:
  - {model: hangs}
models:
  crashes: {entry: "user_models:crashes_in_training"}
  raises: {entry: "user_models:raises_in_training"}
  hangs: {entry: "user_models:sleepy_regressor", args: {sleep_s: 600}}
"""


def test_failures_become_records_and_the_sweep_goes_on(tmp_path, runner):
    (tmp_path / "user_models.py").write_text((SUPPORT / "user_models.py").read_text())
    suite = tmp_path / "failing.yaml"
    suite.write_text(FAILING.replace("include:\n", "include:\n  - {model: hangs, timeout_s: 8}\n"))
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
            "f",
        ],
    )
    assert result.exit_code == 1, result.output
    records = read_records(tmp_path / "results" / "failing" / "f" / "records.jsonl")
    assert [(r["model"], r["status"]) for r in records] == [
        ("crashes", "failed"),
        ("raises", "failed"),
        ("mlp", "ok"),
        ("hangs", "timeout"),
        ("mlp", "timeout"),
    ]
    crash, raises, _, hang, early = records
    assert crash["reason"] == "killed by signal SIGSEGV"
    assert raises["reason"].startswith("ValueError: ") and "this loss is broken" in raises["reason"]
    assert "this loss is broken" in raises["log_tail"]
    assert set(RECORD_COLUMNS) <= set(raises)
    assert raises["step_time_median_s"] is None and raises["timed_steps"] is None
    assert early["reason"] == "timed out after 1 s (process tree killed)"
    assert hang["reason"] == "timed out after 8 s (process tree killed)"
    report = (tmp_path / "reports" / "failing.html").read_text()
    for r in (crash, raises, hang):
        assert html.escape(r["reason"]) in report
    assert workers_left(tmp_path) == []  # every timed-out worker was killed with its tree


def test_a_user_model_of_the_wrong_type_is_a_suite_error(tmp_path, runner):
    (tmp_path / "user_models.py").write_text((SUPPORT / "user_models.py").read_text())
    suite = tmp_path / "bad.yaml"
    suite.write_text("name: bad\nmatrix: {model: [broken]}\nmodels: {broken: {entry: 'user_models:not_a_workload'}}\n")
    result = runner.invoke(cli, ["run", str(suite), "--results-dir", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.output == (
        f"tfscale: error: {suite}: models.broken.entry: user_models:not_a_workload returned "
        "str, expected tfscale.Workload\n"
    )
    suite.write_text("name: bad\nmatrix: {model: [m]}\nmodels: {m: {entry: 'no_such_module:f'}}\n")
    result = runner.invoke(cli, ["run", str(suite), "--results-dir", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.output.startswith(
        f"tfscale: error: {suite}: models.m.entry: cannot import 'no_such_module': ModuleNotFoundError"
    )
    assert not (tmp_path / "r").exists()
