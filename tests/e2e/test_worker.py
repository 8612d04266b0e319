"""Worker-side pieces that need TensorFlow."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def test_strategy_registries_agree():
    from tfscale.axes import STRATEGIES
    from tfscale.worker.strategies import BUILDERS

    assert set(BUILDERS) == set(STRATEGIES)


def test_mode_registries_agree():
    from tfscale.axes import MODES
    from tfscale.worker.modes import MODES as TRAINERS

    assert set(TRAINERS) == set(MODES)


def test_env_command_reports_tensorflow_and_host(runner, tmp_path):
    import json

    from tfscale.cli import cli

    out = tmp_path / "env.json"
    result = runner.invoke(cli, ["env", "-o", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    summary, _, text = result.output.partition("\n\n")
    assert json.loads(text) == document
    # the paragraph a person reads first, from the same document
    assert summary.startswith(f"host {document['host']}: ") and "TensorFlow 2.21" in summary
    assert "sees 0 GPU(s)" in summary or Path("/dev/nvidiactl").exists()
    assert document["tensorflow"]["version"].startswith("2.21")
    assert "CPU" in " ".join(document["tensorflow"]["physical_devices"])
    assert document["packages"]["tensorflow"].startswith("2.21")
    piped = runner.invoke(cli, ["env", "--json"])  # the JSON alone, for a pipe
    assert piped.exit_code == 0 and json.loads(piped.output)["host"] == document["host"]
    # no GPU driver on CI machines: the NVML part must say why instead of failing
    if Path("/dev/nvidiactl").exists():
        assert document["nvml"]["available"] and document["nvml"]["gpus"]
    else:
        assert document["nvml"] == {"available": False, "reason": document["nvml"]["reason"]}
        assert document["nvml"]["reason"].startswith("NVML not available on this host: ")


GPU_SUITE = """
name: g
device: gpu
matrix:
  model: [mlp]
  strategy: [mirrored]
  devices_per_node: [1, 2]
"""


def test_a_gpu_suite_is_refused_before_any_config_starts_on_a_host_without_gpus(runner, tmp_path, monkeypatch):
    from tfscale.cli import cli

    if Path("/dev/nvidiactl").exists():
        pytest.skip("this host has a GPU driver")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    suite = tmp_path / "g.yaml"
    suite.write_text(GPU_SUITE)
    args = ["--results-dir", str(tmp_path / "results"), "--reports-dir", str(tmp_path / "reports")]
    result = runner.invoke(cli, ["run", str(suite), *args])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == (
        "tfscale: error: refused before the sweep: device: gpu, but this host has no GPU to give out (NVML finds "
        "none, or CUDA_VISIBLE_DEVICES hides them); 2 config(s) need GPUs"
    )
    assert "sees 0 GPU(s)" in result.output  # the summary paragraph came first
    assert not (tmp_path / "results").exists()  # no config ran, nothing was stored
    plan = runner.invoke(cli, ["plan", str(suite)])
    assert plan.exit_code == 0 and "note: `tfscale run` here would refuse this suite: device: gpu" in plan.output


@pytest.mark.parametrize("mode", ["tensor", "pipeline"])
def test_model_parallel_gpu_start_builds_on_the_host_and_starts_dtensor_before_the_runtime(mode):
    # Fakes for the device set-up, DTensor's start and the model builder record the calls (no GPU here): DTensor's
    # all-reduce runs on NCCL only when initialize_accelerator_system("GPU") ran before the runtime started, and a
    # model built with no device scope was a whole unsharded copy on GPU:0.
    import json
    import subprocess
    import sys

    script = Path(__file__).parent / "support" / "model_parallel_calls.py"
    done = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    calls = json.loads(done.stdout.splitlines()[-1])["calls"]
    start = ["initialize_accelerator_system(GPU)"] if mode == "tensor" else []
    assert calls == [
        "configure_devices(gpu, 2)",
        *start,
        "device_names",
        "build_workload under /job:localhost/replica:0/task:0/device:CPU:0",
    ]
