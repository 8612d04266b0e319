"""Measured to a precision, end to end: auto windows, warm-up and stopping in real workers (single process, a
MultiWorkerMirrored cluster whose ranks must take the same decisions, ParameterServer), an A/A comparison that
must not flag anything, and a planted slowdown that must be flagged."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tfscale.cli import cli
from tfscale.contract import TEST_SLEEP_ENV
from tfscale.stats.precision import (
    STOP_BUDGET,
    STOP_MIN_SAMPLES,
    STOP_TARGET,
    WARMUP_BUDGET,
    WARMUP_STEADY,
    ci_half_width_rel,
)
from tfscale.stats.repeats import covers_spread, pooled, run_process_spread
from tfscale.stats.uncertainty import ProcessSpread
from tfscale.store.records import load_results

pytestmark = [pytest.mark.e2e, pytest.mark.workers]

AUTO_SUITE = """
name: auto
device: cpu
defaults: {repeats: 1, model_size: tiny, batch_size: 16, max_measure_s: 1.5, max_warmup_s: 1.0, min_window_s: 0.02,
           timeout_s: 120}
matrix:
  model: [mlp]
  strategy: [one_device]
include:
  - {model: mlp, strategy: multi_worker_mirrored, nodes: 2, devices_per_node: 1}
  - {model: mlp, strategy: parameter_server, nodes: 2, devices_per_node: 1, num_ps: 1}
"""

# Twins: the transformer with OneDevice and with Mirrored on one device do the same work. This shared VM moves one
# config's median by up to +-10 % from one process to the next (14.8, 13.2 and 16.2 ms in three runs a minute
# apart; the mlp once +28 %), and a whole run sometimes drifts more: in one CI run the untouched twin's step was
# +38.5 % slower than in the base run a minute before. So the gate's threshold here is 50 % (above that drift, as
# docs/commands.md advises), the planted slowdown triples the step, and the check that the plant, not the machine,
# was flagged is made against the twin run beside it: the planted config's slowdown relative to its twin's must be
# about the planted factor, whatever the whole run drifted. Five processes per config: compare gives a verdict
# only from five or more per side.
AA_SUITE = """
name: aa
device: cpu
defaults: {model_size: tiny, batch_size: 32, repeats: 5, max_measure_s: 0.5, max_warmup_s: 0.5, timeout_s: 120}
matrix:
  model: [transformer]
  strategy: [one_device, mirrored]
"""
THRESHOLD = "0.5"
PLANTED = 2.0  # sleep two median steps before each step


def run(tmp: Path, name: str, text: str, run_id: str) -> list[dict]:
    suite = tmp / f"{name}.yaml"
    suite.write_text(text)
    args = ["run", str(suite), "--results-dir", str(tmp / "results"), "--reports-dir", str(tmp / "reports")]
    result = CliRunner().invoke(cli, [*args, "--run-id", run_id])
    assert result.exit_code == 0, result.output
    path = tmp / "results" / name / run_id / "records.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_auto_measuring_in_one_process_and_in_clusters(tmp_path):
    records = run(tmp_path, "auto", AUTO_SUITE, "r1")
    assert [r["status"] for r in records] == ["ok"] * 3, [r.get("reason") for r in records]
    for r in records:
        samples = r["step_times_s"]
        assert r["samples"] == len(samples) and r["timed_steps"] == len(samples) * r["window_steps"]
        assert r["measure_stop"] in (STOP_TARGET, STOP_BUDGET), r["measure_stop"]
        assert len(samples) >= (STOP_MIN_SAMPLES if r["measure_stop"] == STOP_TARGET else 6)
        assert r["warmup_stop"] in (WARMUP_STEADY, WARMUP_BUDGET) and r["warmup_steps"] > 1
        assert r["ci_target"] == 0.02 and r["ci_half_width_rel"] == pytest.approx(ci_half_width_rel(samples))
        assert r["ci_met"] == (r["ci_half_width_rel"] <= 0.02)
        # the first step's tracing never falls in a window; windows are calibrated to about min_window_s (steps
        # can get faster after calibration, hence the slack)
        assert r["window_steps"] * r["step_time_median_s"] >= 0.02 / 2
        assert "stopped: " in r["timing"]
    mwms = records[1]
    assert len(mwms["rank_step_time_median_s"]) == 2  # both ranks' samples merged window by window


def test_aa_comparison_passes_and_a_planted_slowdown_is_flagged(tmp_path, monkeypatch):
    """Two runs: the base, then one with a slowdown planted in one config. The untouched twin is an A/A pair across
    the two runs (same commit, fresh processes): it must get no REGRESSION; the planted config must."""
    base = run(tmp_path, "aa", AA_SUITE, "base")
    runs = tmp_path / "results" / "aa"
    report = tmp_path / "cmp.html"
    gate = ["-o", str(report), "--threshold", THRESHOLD, "--fail-on-regression"]
    # a planted slowdown of one twin, slept before each of its steps (records: the combined five processes)
    planted, twin = load_results(runs / "base").to_dict("records")
    monkeypatch.setenv(TEST_SLEEP_ENV, f"{planted['config_id']}={planted['step_time_median_s'] * PLANTED}")
    slow_lines = run(tmp_path, "aa", AA_SUITE, "slow")
    result = CliRunner().invoke(cli, ["compare", str(runs / "base"), str(runs / "slow"), *gate])
    medians = json.dumps([r["step_time_median_s"] for r in base + slow_lines])
    assert result.exit_code == 1, result.output + medians
    assert "2 configs compared, 1 significant regression(s)" in result.output, result.output + medians
    assert "without a verdict" not in result.output, result.output
    flagged = [line.split()[0] for line in result.output.splitlines() if "REGRESSION" in line]
    assert planted["config_id"] in flagged and twin["config_id"] not in flagged, result.output + medians
    slow = {r["config_id"]: r["step_time_median_s"] for r in load_results(runs / "slow").to_dict("records")}
    before = {r["config_id"]: r["step_time_median_s"] for r in (planted, twin)}
    relative = (slow[planted["config_id"]] / before[planted["config_id"]]) / (
        slow[twin["config_id"]] / before[twin["config_id"]]
    )
    # 3x planted: the planted config slowed at least 2x more than its twin, whatever the whole run drifted (a
    # loaded machine stretches the sleep and the step unevenly: 4.1 was seen, so no upper bound)
    assert relative >= 1 + PLANTED / 2, (relative, result.output)


REPEAT_SUITE = """
name: rep
device: cpu
defaults: {model_size: tiny, batch_size: 16, repeats: 2, steps: 20, warmup_steps: 5, timeout_s: 120}
matrix:
  model: [mlp]
  strategy: [one_device, mirrored]
  devices_per_node: [1, 2]
exclude:
  - {strategy: one_device, devices_per_node: 2}
  - {strategy: mirrored, devices_per_node: 1}
"""


def test_repeats_run_interleaved_fresh_processes_combined_into_one_record(tmp_path):
    lines = run(tmp_path, "rep", REPEAT_SUITE, "r1")
    # one stored line per process, interleaved: each config's first process, then each one's second
    assert [(r["strategy"], r["repeat"]) for r in lines] == [
        ("one_device", 0),
        ("mirrored", 0),
        ("one_device", 1),
        ("mirrored", 1),
    ]
    assert len({r["log_path"] for r in lines}) == 4  # every process keeps its own log
    frame = load_results(tmp_path / "results" / "rep" / "r1")
    assert len(frame) == 2
    for _, record in frame.iterrows():
        mine = [r for r in lines if r["config_id"] == record["config_id"]]
        medians = [r["step_time_median_s"] for r in mine]
        assert record["repeat_medians_s"] == medians and record["repeat_samples"] == [r["samples"] for r in mine]
        assert record["step_time_median_s"] == pytest.approx(sum(medians) / 2)  # median of two
        # both configs ran twice: the run's spread between processes is pooled from them, and both CIs cover it
        spread = run_process_spread([[r for r in lines if r["config_id"] == c] for c in frame["config_id"]])
        assert (record["process_spread_sd_rel"], record["process_spread_df"]) == (pytest.approx(spread.sd_log), 2)
        assert record["ci_covers"] == covers_spread(2, spread)
        assert record["step_time_ci95_low_s"] <= record["step_time_median_s"] <= record["step_time_ci95_high_s"]
        assert record["samples"] == sum(r["samples"] for r in mine)
        assert record["timed_steps"] == 2 * 20  # steps: 20 in each process, in windows that divide it
    # the second process skips the communication breakdown and the FLOPs count: the record keeps the first's
    first, later = [r for r in lines if r["strategy"] == "mirrored"]
    assert first["comm_method"] and first["flops_per_step"] and first["comm_time_isolated_s"]
    assert (later["comm_method"], later["flops_per_step"], later["comm_time_isolated_s"]) == (None, None, None)
    [mirrored] = frame[frame["strategy"] == "mirrored"].to_dict("records")
    kept = ("comm_method", "comm_time_isolated_s", "flops_per_step", "peak_memory_bytes")
    assert [mirrored[key] for key in kept] == [first[key] for key in kept]
    html = (tmp_path / "reports" / "rep.html").read_text()
    assert "2 config(s): its 2 processes&#x27; windows and the spread between fresh processes" in html
    # a second run of the suite on this machine pools the first one's spread between processes with its own
    again = run(tmp_path, "rep", REPEAT_SUITE, "r2")
    for r in again:
        assert (r["history_spread_sd_rel"], r["history_spread_df"], r["history_spread_runs"]) == (
            pytest.approx(spread.sd_log),
            2,
            1,
        )
    own = run_process_spread([[r for r in again if r["config_id"] == c] for c in frame["config_id"]])
    both = pooled(own, ProcessSpread(spread.sd_log, spread.df, 1))
    assert both.df == 4 and both.earlier_runs == 1
    for _, record in load_results(tmp_path / "results" / "rep" / "r2").iterrows():
        assert (record["process_spread_sd_rel"], record["process_spread_df"]) == (pytest.approx(both.sd_log), 4)
        assert record["ci_covers"] == covers_spread(2, both)
