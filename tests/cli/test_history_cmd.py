"""`tfscale history`: the steps in the terminal, the gate's exit code, the page, Markdown, JUnit and JSON; outputs never
replace a run's own files."""

import json
import xml.etree.ElementTree as ET

import pytest

from tfscale.cli import cli


@pytest.fixture
def suite_with_runs(tmp_path, write_history_run):
    def runs(slow_from: int):
        folder = tmp_path / "results" / "quickstart"
        for day in range(1, 6):
            write_history_run(folder, f"r{day}", day, 1.25 if day >= slow_from else 1.0)
        return folder

    return runs


def test_history_names_the_step_and_fails_the_gate_on_it(runner, tmp_path, suite_with_runs):
    folder = suite_with_runs(slow_from=4)
    page, notes = tmp_path / "h.html", tmp_path / "h.md"
    args = ["history", str(folder), "-o", str(page), "--markdown", str(notes), "--fail-on-change"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("5 run(s) on 1 machine(s); 8 series; method: optimal partitioning")
    assert lines[1].startswith("step: mlp/tiny mirrored 1 node × 2, ")
    assert "-20." in lines[1] and "worse) from run r4 (2026-12-04T10:00:00+00:00)" in lines[1]
    assert lines[2] == "  since run r3: nothing recorded differs"
    assert "2 step(s) for the worse start in the newest runs (--fail-on-change fails)" in lines
    assert "from run r4" in page.read_text() and "<script" in page.read_text()
    assert notes.read_text().count("from run r4") == 2


def test_an_older_step_does_not_fail_the_gate_and_json_stands_alone(runner, suite_with_runs):
    folder = suite_with_runs(slow_from=3)  # three runs since: not the newest runs alone
    result = runner.invoke(cli, ["history", str(folder), "--fail-on-change", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert {s["first_run"] for s in document["steps"]} == {"r3"} and document["failing"] == []
    assert len(document["series"]) == 5 * 8 and document["method"].startswith("optimal partitioning")


def test_junit_has_one_case_per_series_failed_where_the_gate_fails(runner, tmp_path, suite_with_runs):
    folder = suite_with_runs(slow_from=4)
    junit = tmp_path / "history.xml"
    result = runner.invoke(cli, ["history", str(folder), "--junit", str(junit)])
    assert result.exit_code == 0, result.output  # without --fail-on-change the job goes on
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("8", "2")
    failed = [case.get("name") for case in suite.iter("testcase") if case.find("failure") is not None]
    assert sorted(name.split(" (")[0] for name in failed) == [
        "mlp/tiny mirrored 1 node × 2 · efficiency",
        "mlp/tiny mirrored 1 node × 2 · throughput",
    ]
    message = next(case.find("failure").get("message") for case in suite.iter("testcase") if case.get("name") in failed)
    assert "worse) from run r4" in message


@pytest.mark.parametrize("name", ["records.jsonl", "env.json", "plan.json"])
def test_an_output_never_replaces_a_run_s_own_file(runner, tmp_path, suite_with_runs, name):
    folder = suite_with_runs(slow_from=4)
    target = folder / "r1" / name
    before = target.read_bytes() if target.exists() else None
    result = runner.invoke(cli, ["history", str(folder), "--markdown", str(target)])
    assert result.exit_code == 2 and "a run's own file" in result.output, result.output
    assert (target.read_bytes() if target.exists() else None) == before


def test_two_outputs_naming_one_file_are_refused(runner, tmp_path, suite_with_runs):
    folder = suite_with_runs(slow_from=4)
    same = str(tmp_path / "out.txt")
    result = runner.invoke(cli, ["history", str(folder), "--markdown", same, "--junit", same])
    assert result.exit_code == 2 and "must name different files" in result.output
