"""tfscale.history on a suite folder of runs written for the test: a planted 20 % slowdown from run 4 of 5 is found
there and only there, and runs of another machine form their own series."""

import pytest

import tfscale
from tfscale.runhistory import CHANGE, CONFIG, FIGURE, FIRST_RUN, LATEST, MACHINE, WORSE

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
    series = tfscale.history(suite).series
    other = series[series[MACHINE].str.contains("Other CPU")]
    assert set(other["run_id"]) == {"other1", "other2"}
    assert set(series[~series[MACHINE].str.contains("Other CPU")]["run_id"]) == {f"r{d}" for d in range(1, 6)}
