"""tfscale.history on a suite folder of runs written for the test: a planted 20 % slowdown from run 4 of 5 is found
there and only there, with what changed since run 3; runs of another machine form their own series; each run's
figures are kept and remade when its records change."""

import json
import shutil

import pandas as pd
import pytest

import tfscale
from tfscale.analysis.history import (
    CHANGE,
    CHANGES,
    COMMIT,
    CONFIG,
    FIGURE,
    FIRST_RUN,
    LABEL,
    LATEST,
    MACHINE,
    PREVIOUS_RUN,
    VALUE,
    WORSE,
    step_line,
)
from tfscale.errors import RecordWarning

PLANTED = "267aa81860f8"  # mlp mirrored 1 node x 2: write_history_run's slowed config


@pytest.fixture
def suite(tmp_path, write_history_run):
    folder = tmp_path / "results" / "quickstart"
    for day in range(1, 6):
        write_history_run(folder, f"r{day}", day, 1.25 if day >= 4 else 1.0)
    write_history_run(folder, "other1", 6, 1.0, cpu_model="Other CPU")
    write_history_run(folder, "other2", 7, 1.0, cpu_model="Other CPU")
    return folder


def test_a_planted_slowdown_is_found_at_its_first_run_and_only_there(suite):
    found = tfscale.history(suite)
    assert len(found.runs) == 7 and found.runs[MACHINE].nunique() == 2
    steps = found.steps
    assert set(steps[FIRST_RUN]) == {"r4"}
    throughput = steps[steps[FIGURE] == "throughput"].iloc[0]
    assert throughput[CONFIG] == "mlp/tiny mirrored 1 node × 2"
    assert throughput[CHANGE] == pytest.approx(1 / 1.25 - 1, abs=0.005)
    assert bool(throughput[WORSE]) and bool(throughput[LATEST])  # r4 and r5 are the newest runs of their machine
    assert set(steps[FIGURE]) == {"throughput", "efficiency"}  # the baseline did not move
    assert len(found.failing()) == 2


def test_another_machine_s_runs_are_their_own_series(suite):
    shutil.copytree(suite / "other2", suite / "elsewhere" / "r1")  # its records say run_id other2: a run is a folder
    series = tfscale.history(suite).series
    other = series[series[MACHINE].str.contains("Other CPU")]
    assert set(other["run_id"]) == {"other1", "other2", "elsewhere/r1"}
    assert set(series[~series[MACHINE].str.contains("Other CPU")]["run_id"]) == {f"r{d}" for d in range(1, 6)}


def test_a_step_says_its_commit_and_what_changed_since_the_run_before(tmp_path, write_history_run):
    folder = tmp_path / "results" / "quickstart"
    settings = {"config_id": PLANTED, "steps": "auto", "timeout_s": 600.0}
    for day in range(1, 6):
        plan = {"label": f"nightly {day}", "commit": f"v1.{day // 4}-{day}-gabc{day}", "specs": [settings]}
        if day >= 4:
            plan["specs"] = [settings | {"timeout_s": 900.0}]
        write_history_run(folder, f"r{day}", day, 1.25 if day >= 4 else 1.0, plan=plan)
    env = json.loads((folder / "r4" / "env.json").read_text())
    env["packages"]["tensorflow"], env["host"] = "2.22.0", "another-runner"  # the host alone is no change
    (folder / "r4" / "env.json").write_text(json.dumps(env))
    found = tfscale.history(folder)
    assert list(found.runs[COMMIT]) == [f"v1.{d // 4}-{d}-gabc{d}" for d in range(1, 6)]
    step = found.steps[found.steps[FIGURE] == "throughput"].iloc[0]
    assert (step[PREVIOUS_RUN], step[COMMIT], step[LABEL]) == ("r3", "v1.1-4-gabc4", "nightly 4")
    assert step[CHANGES] == (
        "commit: v1.0-3-gabc3 -> v1.1-4-gabc4; label: nightly 3 -> nightly 4; "
        "packages.tensorflow: 2.21.0 -> 2.22.0; timeout_s: 600.0 -> 900.0"
    )
    assert step_line(step).endswith(
        "from run r4 (2026-12-04T10:00:00+00:00, commit v1.1-4-gabc4, label nightly 4), with efficiency -20.0%"
    )


def test_each_run_s_figures_are_kept_and_remade_when_its_records_change(suite):
    first = tfscale.history(suite)
    kept = suite / "r2" / "figures.json"
    cache = json.loads(kept.read_text())
    assert cache["started_at"] == "2026-12-02T10:00:00+00:00" and len(cache["records_sha256"]) == 64
    assert {(row["config_id"], row["figure"]) for row in cache["rows"]} >= {(PLANTED, "throughput")}
    cache["rows"][0]["value"] = 1e9  # a kept figure is what the next history reads, untouched
    kept.write_text(json.dumps(cache))
    assert (tfscale.history(suite).series[VALUE] == 1e9).sum() == 1
    records = suite / "r2" / "records.jsonl"
    records.write_text(records.read_text() + "\n")  # other bytes: the kept figures are not these records'
    again = tfscale.history(suite)
    pd.testing.assert_frame_equal(again.series, first.series)
    assert json.loads(kept.read_text())["rows"][0]["value"] != 1e9


def test_a_run_folder_without_a_readable_record_is_named_and_left_out(suite):
    (suite / "broken").mkdir()
    (suite / "broken" / "records.jsonl").write_text("not json\n")
    with pytest.warns(RecordWarning, match="broken/records.jsonl:1: unreadable record line skipped"):
        found = tfscale.history(suite)
    assert len(found.runs) == 7 and len(found.notes) == 1
    assert found.notes[0].startswith(f"left out: {suite / 'broken' / 'records.jsonl'}")


def test_a_damaged_figures_file_is_analysed_again(suite):
    first = tfscale.history(suite)
    kept = suite / "r3" / "figures.json"
    cache = json.loads(kept.read_text())
    cache["rows"] = [{"config_id": "x", "figure": "<script>", "value": "not a number"}]
    kept.write_text(json.dumps(cache))
    pd.testing.assert_frame_equal(tfscale.history(suite).series, first.series)
    assert json.loads(kept.read_text())["rows"] != cache["rows"]  # remade
