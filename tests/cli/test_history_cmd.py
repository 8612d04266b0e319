"""`tfscale history`: the steps in the terminal, the gate's exit code, the page, Markdown and JSON."""

import json

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
