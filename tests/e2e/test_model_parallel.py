"""Pipeline, tensor and hybrid parallelism on 2 and 4 logical CPU devices: each trains, its first-step loss is the
single-device Keras model's on the same weights and batch, its devices hold the expected share of the
parameters, and a suite of all four modes runs through the CLI."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tfscale.cli import cli

from .support import workers_left

pytestmark = [pytest.mark.e2e, pytest.mark.workers]
CHECK = Path(__file__).resolve().parent / "support" / "model_parallel_check.py"


def check(model: str, size: str, mode: str, devices: int) -> dict:
    done = subprocess.run(
        [sys.executable, str(CHECK), model, size, mode, str(devices)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("model", "size", "mode", "devices", "share"),
    [
        ("mlp", "small", "pipeline", 2, 0.57),  # stages [784x1024] [1024x1024, 1024x10]: layers are the granularity
        ("transformer", "small", "pipeline", 4, 0.42),  # the embedding and the classifier are 4.1 MB each
        ("mlp", "small", "tensor", 4, 0.26),
        ("transformer", "tiny", "tensor", 2, 0.51),
        ("mlp", "small", "hybrid", 4, 0.51),  # 2 data x 2 tensor
        ("transformer", "tiny", "hybrid", 4, 0.51),
    ],
)
def test_model_parallel_mode_matches_the_single_device_loss_and_splits_the_weights(model, size, mode, devices, share):
    result = check(model, size, mode, devices)
    assert result["first"] == pytest.approx(result["reference"], rel=1e-5)
    losses = result["losses"]
    assert losses[-1] < losses[0] and all(b <= a + 1e-6 for a, b in zip(losses, losses[1:], strict=False))
    assert result["per_device_bytes"] <= share * result["whole_bytes"]
    if mode == "pipeline":
        assert result["placed"] == [[f"CPU:{i}"] for i in range(devices)]  # each stage's weights on its device
    else:
        parts = result["tensor_parallel"]
        assert result["per_device_bytes"] >= result["whole_bytes"] / parts * 0.95  # about 1/T, not less


SUITE = """
name: modes
device: cpu
defaults: {repeats: 1, strategy: mirrored, model_size: small, batch_size: 16, steps: 3, warmup_steps: 1, comm_steps: 2,
           timeout_s: 240, telemetry_hz: 0}
matrix:  # the mlp only: each mode's transformer trains in the checks above; here the CLI, records and report
  model: [mlp]
  parallelism: [data, pipeline, tensor, hybrid]
  devices_per_node: [2, 4]
exclude:  # mlp/small has 3 layers to cut between: 4 stages need the next size up
  - {model: mlp, parallelism: pipeline, devices_per_node: 4}
include:
  - {model: mlp, model_size: medium, parallelism: pipeline, devices_per_node: 4}
"""


def test_four_modes_run_through_the_cli_and_the_report_compares_them(runner, tmp_path):
    (tmp_path / "modes.yaml").write_text(SUITE)
    result = runner.invoke(
        cli,
        [
            "run",
            str(tmp_path / "modes.yaml"),
            "--results-dir",
            str(tmp_path / "results"),
            "--reports-dir",
            str(tmp_path / "reports"),
            "--run-id",
            "m",
        ],
    )
    assert result.exit_code == 0, result.output
    records = [
        json.loads(line) for line in (tmp_path / "results" / "modes" / "m" / "records.jsonl").read_text().splitlines()
    ]
    assert len(records) == 8 and all(r["status"] == "ok" for r in records)
    by_mode = {}
    for r in records:
        by_mode.setdefault(r["parallelism"], []).append(r)
    for r in by_mode["pipeline"]:
        assert r["strategy"] is None and r["stages"] == r["devices"] and r["micro_batches"] == 4
        assert len(r["stage_param_bytes"]) == r["stages"] and r["param_bytes_per_device"] == max(r["stage_param_bytes"])
        assert r["bubble_fraction_theory"] == pytest.approx((r["stages"] - 1) / (4 + r["stages"] - 1))
        assert isinstance(r["bubble_fraction"], float)
    for r in by_mode["tensor"] + by_mode["hybrid"]:
        assert r["tensor_parallel"] == (r["devices"] if r["parallelism"] == "tensor" else 2)
        assert r["replicas"] == r["devices"] // r["tensor_parallel"]
        assert r["param_bytes_per_device"] < r["grad_bytes"]
    for r in by_mode["data"]:
        assert r["strategy"] == "mirrored" and r["stages"] is None and r["bubble_fraction"] is None
    html = (tmp_path / "reports" / "modes.html").read_text()
    assert "Data vs model parallelism" in html
    assert workers_left(tmp_path) == []
