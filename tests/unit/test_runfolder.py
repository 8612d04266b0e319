"""A run folder says how it was run (tfscale.runfolder): the suite as read and every config's resolved spec, and
the suite comes back from it to run again."""

import json
import shutil

import pytest

from tfscale.api import load
from tfscale.errors import SuiteError
from tfscale.planner import expand
from tfscale.runfolder import describe_run, read_plan, suite_of_run
from tfscale.suite import load_suite, parse_suite, suite_from_dict

TEXT = "name: rf  # a comment stays\ndefaults: {steps: 30, timeout_s: 90, comm_steps: 4}\nmatrix: {model: [mlp]}\n"
MODELS = "models: {m: {entry: 'my_models:build', args: {width: 8}}}\n"


def test_the_suite_and_every_setting_are_stored_and_come_back(tmp_path):
    source = tmp_path / "suites" / "rf.yaml"
    source.parent.mkdir()
    source.write_text(TEXT.replace("[mlp]", "[mlp, m]") + MODELS)
    suite = load_suite(source)
    plan = expand(suite)
    run = tmp_path / "results" / "rf" / "r1"
    run.mkdir(parents=True)
    describe_run(run, suite, [s.to_dict() for s in plan.specs])
    assert (run / "suite.yaml").read_text() == source.read_text()  # as read, comments included
    stored = read_plan(run)
    assert stored["suite_path"] == str(source) and len(stored["specs"]) == 2
    assert {(s["steps"], s["timeout_s"], s["comm_steps"]) for s in stored["specs"]} == {(30, 90.0, 4)}
    again = suite_of_run(run)
    assert again.path == str(source.resolve())  # user models are imported from the suite's own folder
    assert [s.to_dict() for s in expand(again).specs] == stored["specs"]
    assert load(run).text == source.read_text()  # tfscale run RUN_DIR, tfscale.run(RUN_DIR)
    shutil.rmtree(source.parent)  # the suite's folder is gone: read from the copy in the run folder
    assert suite_of_run(run).path == str(run / "suite.yaml")


def test_a_resumed_run_keeps_what_it_began_with(tmp_path):
    first = parse_suite(TEXT, "a.yaml")
    describe_run(tmp_path, first, [])
    describe_run(tmp_path, parse_suite(TEXT.replace("30", "40"), "a.yaml"), [{"x": 1}])
    assert (tmp_path / "suite.yaml").read_text() == TEXT and read_plan(tmp_path)["specs"] == []


def test_a_suite_given_as_a_dict_is_stored_as_yaml(tmp_path):
    suite = suite_from_dict({"name": "d", "matrix": {"model": ["mlp"]}, "defaults": {"steps": 5}})
    describe_run(tmp_path, suite, [])
    assert parse_suite((tmp_path / "suite.yaml").read_text(), "d.yaml").defaults == {"steps": 5}


def test_a_folder_without_a_stored_suite_is_one_line(tmp_path):
    with pytest.raises(SuiteError, match=f"^{tmp_path}: not a run folder with its suite.yaml"):
        suite_of_run(tmp_path)
    (tmp_path / "plan.json").write_text(json.dumps({"plan_version": 99}))
    assert read_plan(tmp_path) is None


@pytest.mark.parametrize("key", ["path", "text"])
def test_the_loaders_own_keys_are_refused_in_a_suite(key):
    with pytest.raises(SuiteError, match=f"^s.yaml: {key}: unknown key"):
        parse_suite(f"name: x\n{key}: y\nmatrix: {{model: [mlp]}}\n", "s.yaml")
