"""tfscale.suite.planner / tfscale.run / tfscale.htmlreport from Python: the CLI's checks
and errors, before anything runs."""

import shutil
from pathlib import Path

import pytest

import tfscale
from tfscale.errors import TfscaleError

DATA = Path(__file__).resolve().parents[1] / "data"
SUITES = Path(__file__).resolve().parents[2] / "suites"
SUITE = {
    "name": "api",
    "defaults": {"model_size": "tiny", "steps": 4, "warmup_steps": 1},
    "matrix": {"model": ["mlp"], "strategy": ["one_device", "mirrored"], "devices_per_node": [1, 2]},
    "exclude": [{"strategy": "one_device", "devices_per_node": 2}],
}


def test_plan_of_a_dict_and_of_a_file_are_the_same_configs(tmp_path):
    import yaml

    assert len(tfscale.plan(SUITE).specs) == 3
    for suite in (SUITE, yaml.safe_load((SUITES / "quickstart.yaml").read_text())):
        from_dict, from_file = tfscale.plan(suite).specs, tfscale.plan(_file(tmp_path, suite)).specs
        assert [s.config_id for s in from_dict] == [s.config_id for s in from_file]
        assert {s.suite_dir for s in from_dict} == {str(Path.cwd())}  # user models: imported from here


def test_the_dict_is_not_changed():
    suite = {"name": "n", "network": {"simulate": True, "link": ["1gbit"]}, "include": [{"nodes": 2}]}
    before = repr(suite)
    tfscale.plan(suite | {"defaults": {"strategy": "multi_worker_mirrored"}})
    assert repr(suite) == before


@pytest.mark.parametrize(
    ("suite", "message"),
    [
        ({**SUITE, "matrix": {"strategy": ["mirrored", "magic"]}}, "<dict>: matrix.strategy[1]: unknown strategy"),
        ({"matrix": {"model": ["mlp"]}}, "<dict>: name: required key is missing"),
        ([1, 2], "suite: give a suite file's path, a run folder or a dict, got list"),
    ],
)
def test_a_bad_suite_raises_the_cli_line(suite, message):
    with pytest.raises(TfscaleError) as error:
        tfscale.plan(suite)
    assert str(error.value).startswith(message)


def test_run_refuses_bad_options_before_running_anything(tmp_path):
    results = tmp_path / "results"
    with pytest.raises(TfscaleError, match="--fresh starts a new run: give it no --run-id"):
        tfscale.run(SUITE, run_id="x", fresh=True, results_dir=results)
    with pytest.raises(TfscaleError, match="launcher: 'k8s'; allowed: local, slurm"):
        tfscale.run(SUITE, launcher="k8s", results_dir=results)
    with pytest.raises(
        TfscaleError, match="--partition, --account, --time-limit and --slurm-arg need --launcher slurm"
    ):
        tfscale.run(SUITE, partition="gpu", results_dir=results)
    shutil.copytree(DATA / "example-run", results / "api" / "old")
    with pytest.raises(TfscaleError, match="this run already has records; resume it"):
        tfscale.run(SUITE, run_id="old", resume=False, results_dir=results)
    assert sorted(p.name for p in (results / "api").iterdir()) == ["old"]


def test_report_from_python_returns_the_written_path(tmp_path, capsys):
    run = tmp_path / "quickstart" / "r"
    shutil.copytree(DATA / "example-run", run)
    written = tfscale.report(run, reports_dir=tmp_path / "reports")
    assert written == tmp_path / "reports" / "quickstart.html" and written.stat().st_size > 100_000
    assert f"report: {written}" in capsys.readouterr().out
    quiet = tfscale.report([run], tmp_path / "q.html", quiet=True)
    assert quiet == tmp_path / "q.html" and capsys.readouterr().out == ""


def _file(tmp_path, suite) -> Path:
    import yaml

    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))  # the same key order: the same config order
    return path


def test_the_documented_example_suite_plans_to_the_count_it_states():
    import ast
    import re

    text = (Path(__file__).resolve().parents[2] / "docs" / "python-api.md").read_text()
    suite = ast.literal_eval(re.search(r"suite = (\{.*?\n\})", text, re.S).group(1))
    count = int(re.search(r'print\(len\(tfscale\.plan\(suite\)\.specs\), "configs"\) +# (\d+) configs', text).group(1))
    assert len(tfscale.plan(suite).specs) == count == 4


def test_load_results_gives_every_column_records_md_lists_and_no_other():
    # Issue 32: docs/records.md promised the derived columns, load_results gave none.
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "records.md").read_text().split("## Columns of `tfscale predict`")[0]
    listed = set(re.findall(r"^\| `([a-z0-9_]+)` \|", doc, re.M))
    frame = tfscale.load_results(root / "tests" / "data" / "quickstart-run")
    assert listed - set(frame.columns) == set()
    assert set(frame.columns) - listed == set()
    assert frame["layout"].iloc[0] == "1 node × 2" and frame["mode"].iloc[0] == "data (mirrored)"
    assert frame["gap_s"].notna().sum() == (frame["devices"] > 1).sum() == 10
    stored = tfscale.load_results(root / "tests" / "data" / "quickstart-run", derived=False)
    assert "scaling_efficiency" not in stored and len(stored) == len(frame) and frame["speedup"].notna().all()
    assert list(tfscale.analyze(stored).columns) == list(frame.columns)
