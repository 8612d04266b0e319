"""tfscale.run from Python: a real sweep (TensorFlow worker processes on logical CPU devices) returns the records
with the scaling columns and writes the report; run again on the same run id it resumes, as the CLI does."""

import pytest

import tfscale

from .support import workers_left

pytestmark = [pytest.mark.e2e, pytest.mark.workers]

SUITE = {
    "name": "api",
    "defaults": {"repeats": 1, "model_size": "tiny", "batch_size": 16, "steps": 6, "warmup_steps": 2, "timeout_s": 120},
    "matrix": {"model": ["mlp"], "strategy": ["one_device", "mirrored"], "devices_per_node": [1, 2]},
    "exclude": [{"strategy": "one_device", "devices_per_node": 2}],
}


def test_run_from_python_returns_the_records_and_resumes(tmp_path, capsys):
    results, reports = tmp_path / "results", tmp_path / "reports"
    frame = tfscale.run(SUITE, run_id="one", results_dir=results, reports_dir=reports)
    run = results / "api" / "one"
    assert frame.attrs["run_dir"] == str(run) and frame.attrs["report"] == str(reports / "api.html")
    assert sorted(frame["devices"]) == [1, 1, 2] and set(frame["status"]) == {"ok"}
    assert frame["scaling_efficiency"].notna().all() and (frame["step_time_median_s"] > 0).all()
    assert (reports / "api.html").stat().st_size > 100_000
    out = capsys.readouterr().out
    assert "suite 'api': 3 configs, run one; 3 to run; capturing environment" in out
    assert f"records: {run / 'records.jsonl'}" in out
    assert f"report: {reports / 'api.html'} (this run's own: {reports / 'api' / 'one.html'})" in out
    again = tfscale.run(SUITE, run_id="one", results_dir=results, reports_dir=reports, quiet=True)
    assert capsys.readouterr().out == ""
    assert list(again["config_id"]) == list(frame["config_id"])  # nothing run twice: the same three records
    assert len((run / "records.jsonl").read_text().splitlines()) == 3
    assert workers_left(tmp_path) == []


def test_a_run_folder_says_how_it_was_run_and_runs_again(tmp_path):
    # Issue 32: the suite as given and every config's settings (steps and timeout_s, which records leave out)
    # are stored with the records; the run folder given as the suite runs the same configs again, in a new run.
    import json

    from tfscale.store.runfolder import read_plan

    results = tmp_path / "results"
    suite = {**SUITE, "matrix": {"model": ["mlp"], "strategy": ["one_device"]}}
    first = tfscale.run(suite, run_id="first", results_dir=results, no_report=True, quiet=True)
    run = results / "api" / "first"
    plan = read_plan(run)
    assert [s["config_id"] for s in plan["specs"]] == list(first["config_id"])
    assert (plan["specs"][0]["steps"], plan["specs"][0]["timeout_s"]) == (6, 120.0)
    assert json.loads(json.dumps(tfscale.plan(run).suite.defaults)) == SUITE["defaults"]
    again = tfscale.run(run, run_id="again", results_dir=results, no_report=True, quiet=True)
    assert list(again["config_id"]) == list(first["config_id"]) and set(again["status"]) == {"ok"}
    assert read_plan(results / "api" / "again")["specs"] == plan["specs"]
    assert workers_left(tmp_path) == []
