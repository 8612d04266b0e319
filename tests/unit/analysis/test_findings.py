"""The report's headline (tfscale.analysis.findings) from the committed quickstart records: exact rows."""

from pathlib import Path

import pandas as pd
import pytest

from tfscale.analysis import add_scaling, findings
from tfscale.store.records import load_results

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def frame():
    return add_scaling(load_results(DATA / "quickstart-run"))


def test_the_best_layout_per_workload_and_device_count(frame):
    best = findings.best_rows(frame)
    assert len(best) == 9  # 3 workloads x 1, 2, 4 devices
    top = best[(best["workload"] == "mlp/tiny, batch 16 weak") & (best["devices"] == 2)].iloc[0]
    ok = frame[(frame["status"] == "ok") & (frame["model"] == "mlp") & (frame["devices"] == 2)]
    assert top["throughput_examples_per_s"] == ok["throughput_examples_per_s"].max()
    assert top["layouts_run"] == len(ok) == 4  # mirrored, central_storage, MWMS 2 nodes, PS 2 workers
    # the CI of throughput is the median step's, inverted
    row = ok.loc[ok["throughput_examples_per_s"].idxmax()]
    per_step = row["throughput_examples_per_s"] * row["step_time_median_s"]
    assert (top["throughput_ci95_low"], top["throughput_ci95_high"]) == pytest.approx(
        (per_step / row["step_time_ci95_high_s"], per_step / row["step_time_ci95_low_s"])
    )


def test_a_runner_up_inside_the_best_s_ci_is_tied(frame):
    row = {
        "status": "ok",
        "model": "m",
        "model_size": None,
        "batch_size": 8,
        "batch_policy": "weak",
        "precision": "float32",
        "jit": False,
        "devices": 2,
        "nodes": 1,
        "devices_per_node": 2,
        "num_ps": None,
        "network_link": None,
        "parallelism": "data",
    }
    rows = [
        row
        | {
            "config_id": "a",
            "strategy": "mirrored",
            "throughput_examples_per_s": 100.0,
            "step_time_median_s": 1.0,
            "step_time_ci95_low_s": 0.9,
            "step_time_ci95_high_s": 1.1,
        },
        row
        | {
            "config_id": "b",
            "strategy": "central_storage",
            "throughput_examples_per_s": 95.0,
            "step_time_median_s": 1.0,
            "step_time_ci95_low_s": 0.9,
            "step_time_ci95_high_s": 1.1,
        },
        row
        | {
            "config_id": "c",
            "strategy": "multi_worker_mirrored",
            "nodes": 2,
            "devices_per_node": 1,
            "throughput_examples_per_s": 50.0,
            "step_time_median_s": 1.0,
            "step_time_ci95_low_s": 0.99,
            "step_time_ci95_high_s": 1.01,
        },
    ]
    best = findings.best_rows(pd.DataFrame(rows))
    assert best.iloc[0]["best"].startswith("mirrored, 1 node")
    assert best.iloc[0]["runner_up"].endswith(": tied within noise")  # 95 x 1/0.9 = 105.6 reaches 100/1.1 = 90.9
    apart = findings.best_rows(pd.DataFrame([rows[0], rows[2]]))
    assert apart.iloc[0]["runner_up"].endswith(": -50.0 % throughput")


def test_losses_name_the_largest_cause_at_the_largest_count(frame):
    best = findings.best_rows(frame)
    found = {loss.workload: loss for loss in findings.losses(frame, best)}
    assert sorted(found) == ["cnn/tiny, batch 16 weak", "mlp/tiny, batch 16 weak", "transformer/tiny, batch 16 weak"]
    mlp = found["mlp/tiny, batch 16 weak"]
    assert mlp.devices == 4 and mlp.cause in findings.CAUSES.values()
    assert mlp.cause_s <= mlp.gap_s and mlp.sentence().startswith("mlp/tiny, batch 16 weak: at 4 devices the best (")


def test_failed_configs_are_listed_with_their_reason(frame):
    bad = frame.copy()
    bad.loc[bad.index[0], ["status", "reason"]] = ["failed", "out of memory: X"]
    [line] = findings.failed_lines(bad)
    assert line.startswith(f"{bad.iloc[0]['config_id']} ") and line.endswith(": failed: out of memory: X")


def test_at_one_device_the_baseline_wins_a_tie_and_loses_a_measured_difference(frame):
    # Ranking noise made central_storage x1 (102 %) and mirrored x1 (110 %) the "best" one device; tied within
    # noise, the baseline every efficiency is measured against is the best. The transformer's mirrored x1 was 11 %
    # faster outside the noise within its processes, but within the run's spread between processes (these records:
    # 15.7 % sd, from cnn pairs 30-44 % apart): tied, so the baseline stays first. The baseline's own efficiency is
    # 1 by definition, without a CI.
    rows = findings.findings_table(findings.best_rows(frame))
    one = {r["workload"].split(",")[0]: r for r in rows if r["devices"] == "1"}
    assert (one["mlp/tiny"]["best layout"], one["mlp/tiny"]["efficiency"]) == ("one_device, 1 node × 1", "100 %")
    assert one["mlp/tiny"]["runner-up"] == "central_storage, 1 node × 1: tied within noise"
    assert one["cnn/tiny"]["best layout"] == "one_device, 1 node × 1"
    assert one["cnn/tiny"]["runner-up"] == "mirrored, 1 node × 1: tied within noise"
    assert (one["transformer/tiny"]["best layout"], one["transformer/tiny"]["runner-up"]) == (
        "one_device, 1 node × 1",
        "mirrored, 1 node × 1: tied within noise",
    )
    mirrored = frame[(frame["model"] == "transformer") & (frame["strategy"] == "mirrored") & (frame["devices"] == 1)]
    low, high = mirrored.iloc[0][["scaling_efficiency_ci95_low", "scaling_efficiency_ci95_high"]]
    assert low < 1.0 < high  # 1.06-1.19 within its processes alone


def test_the_rest_holds_the_communication_where_it_was_not_measured(frame):
    # mlp's best at 4 devices is central_storage, whose exposed communication is not measured: without the
    # compute-only step the rest is the largest part, and it is not called "not communication"
    no_compute = frame.assign(compute_time_s=float("nan"))
    found = {loss.workload: loss for loss in findings.losses(no_compute, findings.best_rows(no_compute))}
    mlp = found["mlp/tiny, batch 16 weak"]
    assert mlp.best.startswith("central_storage") and mlp.cause == findings.REST_WITH_COMMUNICATION
    assert mlp.cause_s == pytest.approx(mlp.gap_s)  # nothing else measured: the whole gap
