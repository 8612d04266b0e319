"""Worker-side pieces that need TensorFlow."""

import pytest

pytestmark = pytest.mark.e2e


def test_strategy_registries_agree():
    from tfscale.axes import STRATEGIES
    from tfscale.worker.strategies import BUILDERS

    assert set(BUILDERS) == set(STRATEGIES)


def test_env_command_reports_tensorflow_and_host(runner, tmp_path):
    import json

    from tfscale.cli import cli

    out = tmp_path / "env.json"
    result = runner.invoke(cli, ["env", "-o", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    assert json.loads(result.output) == document
    assert document["tensorflow"]["version"].startswith("2.21")
    assert "CPU" in " ".join(document["tensorflow"]["physical_devices"])
    assert document["packages"]["tensorflow"].startswith("2.21")
    # no GPU driver on CI machines: the NVML part must say why instead of failing
    assert document["nvml"]["available"] or document["nvml"]["reason"]
