"""`tfscale run` of one tiny config whose suite lives in a folder named with shell syntax and passes hostile
strings to its model (issue 37): the values stay data all the way to the worker and back, nothing executes, and
nothing is written outside the results and reports folders."""

import json
from pathlib import Path

import pytest
from unit.hostile_strings import MARKUP, hostile

from tfscale.cli import cli
from tfscale.untrusted import unsafe_character

pytestmark = [pytest.mark.e2e, pytest.mark.workers]
SUPPORT = Path(__file__).resolve().parent / "support"


def test_a_run_with_hostile_paths_and_model_arguments_executes_nothing(runner, tmp_path, monkeypatch):
    canary = tmp_path / "PWNED"
    monkeypatch.setenv("TFSCALE_CANARY", str(canary))  # a folder name holds no "/": a shell would expand this
    touch = "touch $TFSCALE_CANARY"
    folder = tmp_path / f"suites $({touch}) `{touch}` 'q\"; {touch} #\nsecond line"
    folder.mkdir()
    (folder / "user_models.py").write_text((SUPPORT / "user_models.py").read_text())
    labels = [text for text in hostile(canary) if unsafe_character(text) is None]  # a suite refuses the others
    suite = folder / "hostile.yaml"
    suite.write_text(
        "name: hostile\n"
        f"description: {json.dumps(labels[6])}\n"  # </script><script>alert(1)</script>
        "defaults: {repeats: 1, model_size: tiny, batch_size: 8, steps: 4, warmup_steps: 1, timeout_s: 120,\n"
        "           telemetry_hz: 0}\n"
        "matrix: {model: [m], strategy: [one_device]}\n"
        f"models: {{m: {{entry: 'user_models:labelled_regressor', args: {{labels: {json.dumps(labels)}}}}}}}\n"
    )
    before = {p for p in tmp_path.rglob("*")}
    results, reports = tmp_path / "results", tmp_path / "reports"
    result = runner.invoke(
        cli, ["run", str(suite), "--results-dir", str(results), "--reports-dir", str(reports), "--run-id", "r1"]
    )
    assert result.exit_code == 0, result.output
    assert not canary.exists()
    [record] = [json.loads(line) for line in (results / "hostile" / "r1" / "records.jsonl").read_text().splitlines()]
    assert record["status"] == "ok", record.get("reason")
    created = {p for p in tmp_path.rglob("*")} - before
    assert {p for p in created if results not in p.parents and reports not in p.parents} == {results, reports}
    page = (reports / "hostile.html").read_text()
    assert labels[6] not in page and not any(markup in page for markup in MARKUP)
