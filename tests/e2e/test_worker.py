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
    # no GPU driver on CI machines: the NVML part must say why instead of failing
    if Path("/dev/nvidiactl").exists():
        assert document["nvml"]["available"] and document["nvml"]["gpus"]
    else:
        assert document["nvml"] == {"available": False, "reason": document["nvml"]["reason"]}
        assert document["nvml"]["reason"].startswith("NVML not available on this host: ")
