"""`tfscale export --format tensorboard`: the HParams experiment read back through TensorBoard's own HParams
backend (the plugin the dashboard talks to), and no TensorFlow imported on the way."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tfscale.cli import cli

DATA = Path(__file__).resolve().parents[2] / "data"
# TensorBoard's HParams plugin imports its vendored html5lib, which warns about its own deprecation.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:tensorboard")
STATUSES = ["STATUS_UNKNOWN", "STATUS_SUCCESS", "STATUS_FAILURE", "STATUS_RUNNING"]


def hparams_backend(logdir: Path):
    """POST a JSON request to one route of TensorBoard's HParams plugin over `logdir`; returns the JSON answer."""
    from tensorboard.backend.event_processing import data_provider
    from tensorboard.backend.event_processing import plugin_event_multiplexer as pem
    from tensorboard.plugins import base_plugin
    from tensorboard.plugins.hparams import hparams_plugin
    from werkzeug.test import Client
    from werkzeug.wrappers import Response

    multiplexer = pem.EventMultiplexer()
    multiplexer.AddRunsFromDirectory(str(logdir))
    multiplexer.Reload()
    provider = data_provider.MultiplexerDataProvider(multiplexer, str(logdir))
    context = base_plugin.TBContext(logdir=str(logdir), multiplexer=multiplexer, data_provider=provider)
    apps = hparams_plugin.HParamsPlugin(context).get_plugin_apps()

    def post(route: str, request: dict) -> dict:
        answer = Client(apps[route], Response).post(route, data=json.dumps(request), content_type="application/json")
        assert answer.status_code == 200, answer.get_data()
        return json.loads(answer.get_data())

    return post


def test_export_tensorboard_is_an_hparams_experiment_tensorboard_reads(runner, tmp_path):
    import pandas as pd

    from tfscale.analysis import add_scaling
    from tfscale.store.records import load_results

    run = tmp_path / "quickstart" / "r"
    shutil.copytree(DATA / "quickstart-run", run)
    out = tmp_path / "tb"
    result = runner.invoke(cli, ["export", str(run), "--format", "tensorboard", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output == f"wrote 17 trials to {out} (tensorboard --logdir {out}, HPARAMS tab)\n"
    post = hparams_backend(out)
    experiment = post("/experiment", {"experimentName": ""})
    infos = {h["name"]: h for h in experiment["hparamInfos"]}
    assert {"model", "strategy", "nodes", "devices_per_node", "devices", "batch_size", "status"} <= set(infos)
    assert infos["strategy"]["domainDiscrete"] == [
        "central_storage",
        "mirrored",
        "multi_worker_mirrored",
        "one_device",
        "parameter_server",
    ]
    assert infos["devices"]["domainDiscrete"] == [1, 2, 4] and infos["strategy"]["description"].startswith("tf.")
    metrics = [info["name"]["tag"] for info in experiment["metricInfos"]]
    assert metrics[:2] == ["throughput_examples_per_s", "step_time_median_s"] and "scaling_efficiency" in metrics
    groups = post(
        "/session_groups",
        {"experimentName": "", "allowedStatuses": STATUSES, "colParams": [], "startIndex": 0, "sliceSize": 100},
    )
    assert groups["totalSize"] == 17
    frame = add_scaling(load_results(run)).set_index("config_id")
    for group in groups["sessionGroups"]:
        row = frame.loc[group["name"]]
        assert group["hparams"]["strategy"] == row["strategy"] and group["hparams"]["devices"] == row["devices"]
        values = {v["name"]["tag"]: v["value"] for v in group["metricValues"]}
        assert values["throughput_examples_per_s"] == pytest.approx(row["throughput_examples_per_s"], rel=1e-6)
        if pd.isna(row["scaling_efficiency"]):
            assert "scaling_efficiency" not in values  # empty, not 0
        else:
            assert values["scaling_efficiency"] == pytest.approx(row["scaling_efficiency"], rel=1e-6)


def test_the_export_imports_no_tensorflow(tmp_path):
    code = (
        "import sys; from tfscale.cli import cli; "
        f"cli(['export', {str(DATA / 'quickstart-run')!r}, '--format', 'tensorboard', '-o', {str(tmp_path)!r}], "
        "standalone_mode=False); print('tensorflow' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "False"
