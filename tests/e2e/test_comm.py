"""Communication timing on real strategies."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.workers]
SUPPORT = Path(__file__).resolve().parent / "support"


@pytest.mark.parametrize("devices", [2, 4])
def test_split_and_fused_steps_give_bit_identical_sgd_weights(devices):
    done = subprocess.run(
        [sys.executable, str(SUPPORT / "split_vs_fused.py"), str(devices)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"identical": True, "iterations": [3, 3], "changed": True}


def run_profiled(runner, tmp_path, text: str) -> tuple[Path, list[dict]]:
    """Run suite `text` (name p) through the CLI; its run folder and records."""
    from tfscale.cli import cli

    suite = tmp_path / "p.yaml"
    suite.write_text(text)
    result = runner.invoke(
        cli, ["run", str(suite), "--results-dir", str(tmp_path / "r"), "--no-report", "--run-id", "a"]
    )
    assert result.exit_code == 0, result.output
    run = tmp_path / "r" / "p" / "a"
    return run, [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]


def test_profiled_config_reads_collective_time_from_its_trace(runner, tmp_path):
    run, [record] = run_profiled(
        runner,
        tmp_path,
        "name: p\ndefaults: {repeats: 1, model_size: tiny, steps: 6, warmup_steps: 2, profile: true, "
        "profile_steps: 2}\nmatrix: {strategy: [mirrored], devices_per_node: [2]}\n",
    )
    assert record["trace_error"] is None
    assert record["trace_path"] == f"traces/{record['config_id']}/worker-0"
    # the layout TensorBoard's profiler plugin reads: <logdir>/plugins/profile/<run>/<host>.xplane.pb
    [xplane] = list((run / record["trace_path"]).glob("plugins/profile/*/*.xplane.pb"))
    assert xplane.stat().st_size > 0
    assert record["trace_steps"] == 2
    assert 0 < record["comm_time_trace_s"] < record["step_time_median_s"] * 10
    assert len(record["step_times_s"]) == 6  # traced steps are extra, never timed ones


def test_profile_in_model_parallel_modes_keeps_the_trace_and_reads_dtensor_collectives(runner, tmp_path):
    run, (pipeline, tensor) = run_profiled(
        runner,
        tmp_path,
        "name: p\ndefaults: {repeats: 1, model_size: tiny, steps: 4, warmup_steps: 1, profile: true, profile_steps: 2, "
        "devices_per_node: 2, micro_batches: 2, telemetry_hz: 0}\nmatrix: {parallelism: [pipeline, tensor]}\n",
    )
    for record in (pipeline, tensor):
        assert (record["trace_error"], record["trace_steps"]) == (None, 2)
        assert list((run / record["trace_path"]).glob("plugins/profile/*/*.xplane.pb"))
    assert pipeline["comm_time_trace_s"] is None  # its stages run no collectives: empty, not 0
    assert 0 < tensor["comm_time_trace_s"] < tensor["step_time_median_s"] * 10  # DTensor's all-reduces
