"""A new run's drift from the suite's earlier runs on the same machine (tfscale.runner.drift): real run folders."""

import json
import math

import pytest

from tfscale import metrics as m
from tfscale.runner.drift import drift_columns, drift_text, earlier_runs, history_drift
from tfscale.store.records import ENV_FILE, RECORDS_FILE, append_record, write_json_atomic

MACHINE = {"cpu_model": "Test CPU", "cpu_logical_cores": 2, "cpu_physical_cores": 1, "memory_total_bytes": 1 << 34}


def a_run(suite_dir, run_id: str, medians: dict[str, float], started: str, env: dict = MACHINE, **extra) -> None:
    """A run folder with env.json and one ok one-process record per config (no CI: all its spread is drift)."""
    folder = suite_dir / run_id
    folder.mkdir(parents=True)
    write_json_atomic(folder / ENV_FILE, env | {"captured_at": started})  # when it began: the runs' order
    for config, median_s in medians.items():
        record = dict.fromkeys(m.RECORD_COLUMNS) | {
            m.CONFIG_ID: config,
            m.RUN_ID: run_id,
            m.STATUS: m.STATUS_OK,
            m.STEP_TIME_MEDIAN_S: median_s,
            m.STARTED_AT: started,
        }
        record.pop(m.SCHEMA_VERSION)
        append_record(folder / RECORDS_FILE, record | extra)


def test_the_drift_comes_from_the_latest_earlier_runs_on_this_machine(tmp_path):
    suite = tmp_path / "results" / "s"
    a_run(suite, "one", {"a": 1.0, "b": 2.0}, "2026-12-07T10:00:00+00:00")
    a_run(suite, "two", {"a": math.exp(0.1), "b": 2.0 * math.exp(-0.1)}, "2026-12-07T11:00:00+00:00")
    other = MACHINE | {"cpu_model": "Other CPU"}
    a_run(suite, "elsewhere", {"a": 5.0, "b": 9.0}, "2026-12-07T12:00:00+00:00", env=other)  # another machine
    a_run(suite, "now", {"a": 7.0}, "2026-12-07T13:00:00+00:00")  # the run itself (a resume): not its own history
    found = history_drift(earlier_runs(suite, "now", MACHINE))
    # a and b: log medians 0.1 apart each: variance 0.005 each, 1 degree of freedom each
    assert found == {"sd_log": pytest.approx(math.sqrt(0.005)), "df": 2, "runs": 2}
    assert drift_columns(found) == {m.RUN_DRIFT_SD_REL: found["sd_log"], m.RUN_DRIFT_DF: 2, m.RUN_DRIFT_RUNS: 2}
    assert drift_text(found) == (
        "note: every CI of this run also covers the drift between runs of this suite on this machine: sd 7.1% "
        "(2 degrees of freedom, from its 2 latest earlier runs)"
    )
    # an earlier run's own stored drift is left out: it stated its CI without it
    a_run(suite, "three", {"a": 1.0}, "2026-12-07T12:30:00+00:00", **{m.RUN_DRIFT_SD_REL: 0.5, m.RUN_DRIFT_DF: 9})
    assert history_drift(earlier_runs(suite, "now", MACHINE))["df"] == 3


def test_no_history_no_drift(tmp_path):
    assert history_drift(earlier_runs(tmp_path / "absent", "now", MACHINE)) is None
    a_run(tmp_path / "s", "one", {"a": 1.0}, "2026-12-07T10:00:00+00:00")
    assert history_drift(earlier_runs(tmp_path / "s", "now", MACHINE)) is None  # one run: no spread between runs yet
    assert drift_columns(None) == dict.fromkeys((m.RUN_DRIFT_SD_REL, m.RUN_DRIFT_DF, m.RUN_DRIFT_RUNS))
    assert drift_text(None) is None


def test_an_unreadable_earlier_run_is_left_out(tmp_path):
    suite = tmp_path / "s"
    a_run(suite, "one", {"a": 1.0}, "2026-12-07T10:00:00+00:00")
    a_run(suite, "two", {"a": math.exp(0.2)}, "2026-12-07T11:00:00+00:00")
    bad = suite / "bad"
    bad.mkdir()
    (bad / RECORDS_FILE).write_text(json.dumps({m.CONFIG_ID: 5}) + "\n")
    write_json_atomic(bad / ENV_FILE, MACHINE)
    assert history_drift(earlier_runs(suite, "now", MACHINE))["runs"] == 2


def test_a_drift_env_json_does_not_hold_is_none():
    for kept in ({"sd_log": "x", "df": 2, "runs": 2}, {"sd_log": 0.1, "df": 0, "runs": 2}, {"sd_log": 0.1}, [], 3):
        assert drift_columns(kept) == drift_columns(None) and drift_text(kept) is None
    assert drift_columns({"sd_log": 0.1, "df": 2.0, "runs": 3}) == {
        m.RUN_DRIFT_SD_REL: 0.1,
        m.RUN_DRIFT_DF: 2,
        m.RUN_DRIFT_RUNS: 3,
    }


def test_only_the_latest_history_runs_count(tmp_path):
    from tfscale.stats.drift import HISTORY_RUNS

    suite = tmp_path / "s"
    a_run(suite, "r00", {"a": 100.0}, "2026-12-07T09:00:00+00:00")  # the oldest: far off, and left out
    for i in range(1, HISTORY_RUNS + 1):
        a_run(suite, f"r{i:02d}", {"a": 1.0}, f"2026-12-07T{9 + i:02d}:00:00+00:00")
    found = history_drift(earlier_runs(suite, "now", MACHINE))
    assert found == {"sd_log": 0.0, "df": HISTORY_RUNS - 1, "runs": HISTORY_RUNS}


def test_the_earlier_runs_spread_between_processes_pools_their_repeated_configs(tmp_path):
    from tfscale.runner.drift import history_spread, history_text, kept_history

    suite = tmp_path / "s"
    assert history_spread(earlier_runs(suite, "now", MACHINE)) is None
    # config a ran in two processes in each run, no CI (no within noise): log medians 0.2 apart (variance 0.02) in
    # run one, 0.4 apart (0.08) in run two, 1 degree of freedom each; config b ran once: not pooled
    a_run(suite, "one", {"a": 1.0, "b": 3.0}, "2026-12-07T10:00:00+00:00", **{m.REPEAT: 0})
    a_run(suite, "two", {"a": 1.0}, "2026-12-07T11:00:00+00:00", **{m.REPEAT: 0})
    for run_id, median_s in (("one", math.exp(0.2)), ("two", math.exp(0.4))):
        record = dict.fromkeys(m.RECORD_COLUMNS) | {m.CONFIG_ID: "a", m.RUN_ID: run_id, m.STATUS: m.STATUS_OK}
        record.pop(m.SCHEMA_VERSION)
        append_record(suite / run_id / RECORDS_FILE, record | {m.STEP_TIME_MEDIAN_S: median_s, m.REPEAT: 1})
    found = history_spread(earlier_runs(suite, "now", MACHINE))
    assert found == {"sd_log": pytest.approx(math.sqrt(0.05)), "df": 2, "runs": 2}
    assert kept_history(found) == {
        m.HISTORY_SPREAD_SD_REL: found["sd_log"],
        m.HISTORY_SPREAD_DF: 2,
        m.HISTORY_SPREAD_RUNS: 2,
    }
    assert history_text(found) == (
        "note: every CI of this run also covers the spread between fresh processes measured in this suite's 2 latest "
        "earlier runs on this machine: sd 22.4% (2 degrees of freedom), pooled with this run's own"
    )
    for kept in (None, {"sd_log": 0.1, "df": 0, "runs": 2}, {"sd_log": "x", "df": 2, "runs": 2}, []):
        assert kept_history(kept) == dict.fromkeys(kept_history(None)) and history_text(kept) is None
