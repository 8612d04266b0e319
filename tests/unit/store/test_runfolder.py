"""A run folder says how it was run (tfscale.store.runfolder): the suite as read and every config's resolved spec, and
the suite comes back from it to run again."""

import json
import os
import shutil
import subprocess

import pytest

from tfscale.api import load
from tfscale.errors import SuiteError
from tfscale.store.runfolder import describe_run, project_commit, read_plan, suite_of_run
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import load_suite, parse_suite, suite_from_dict

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


def _git(folder, *args):
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, env={**os.environ, **env})


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_run_keeps_its_label_and_the_suite_s_project_commit(tmp_path):
    project = tmp_path / "project"
    (project / "suites").mkdir(parents=True)
    source = project / "suites" / "rf.yaml"
    source.write_text(TEXT)
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "first")
    _git(project, "tag", "v1.0")
    assert project_commit(project / "suites") == "v1.0"
    source.write_text(TEXT + "# an edit not committed\n")
    assert project_commit(project / "suites") == "v1.0-dirty"
    run = tmp_path / "run"
    run.mkdir()
    describe_run(run, load_suite(source), [], label="nightly 7")
    stored = read_plan(run)
    assert (stored["plan_version"], stored["label"], stored["commit"]) == (2, "nightly 7", "v1.0-dirty")
    assert project_commit(tmp_path / "run") is None  # not in a git work tree
    assert project_commit(tmp_path / "no such folder") is None


def test_a_version_1_plan_reads_as_version_2_without_label_or_commit(tmp_path):
    (tmp_path / "plan.json").write_text(json.dumps({"plan_version": 1, "suite_path": "a.yaml", "specs": []}))
    assert read_plan(tmp_path) == {
        "plan_version": 2,
        "suite_path": "a.yaml",
        "specs": [],
        "label": None,
        "commit": None,
    }
