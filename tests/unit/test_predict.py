import pandas as pd
import pytest

from tfscale.predict import fit_line, holdout, predict


def test_fit_line_recovers_a_line_exactly():
    assert fit_line([0.0, 1.0, 2.0], [1.0, 3.0, 5.0]) == pytest.approx((1.0, 2.0))


def rec(cid, devices, step, comm, strategy="multi_worker_mirrored"):
    return {
        "config_id": cid,
        "run_id": "r",
        "status": "ok",
        "device": "cpu",
        "device_kind": "cpu-logical",
        "model": "mlp",
        "model_size": "small",
        "strategy": "one_device" if devices == 1 else strategy,
        "nodes": devices,
        "devices_per_node": 1,
        "devices": devices,
        "replicas": devices,
        "batch_size": 32,
        "batch_policy": "weak",
        "global_batch_size": 32 * devices,
        "precision": "float32",
        "jit": False,
        "optimizer": "sgd",
        "step_time_median_s": step,
        "step_time_mad_s": 0.0,
        "throughput_examples_per_s": 32 * devices / step,
        "grad_bytes": 1_000_000,
        "comm_time_exposed_s": comm,
    }


def sweep():
    # T1 = 10 ms; exposed comm = 1 ms + 2 ns/B * S * 2(N-1)/N: 3 ms at N=2, 4 ms at N=4
    return pd.DataFrame([rec("b", 1, 0.010, None), rec("w2", 2, 0.013, 0.003), rec("w4", 4, 0.014, 0.004)])


def test_prediction_uses_compute_plus_fitted_communication():
    rows = predict(sweep(), [8]).set_index("devices")
    row = rows.loc[8]
    # fitted through (0, 0), (1e6, 3 ms), (1.5e6, 4 ms): least squares, not the exact line above
    expected_comm = row["alpha_s"] + row["beta_s_per_byte"] * 1_000_000 * 2 * 7 / 8
    assert row["predicted_step_s"] == pytest.approx(0.010 + expected_comm)
    assert row["predicted_throughput"] == pytest.approx(32 * 8 / row["predicted_step_s"])
    assert row["predicted_efficiency"] == pytest.approx(0.010 / row["predicted_step_s"])
    assert row["fitted_on"] == [2, 4]


def test_holdout_predicts_the_largest_from_the_others():
    [row] = holdout(sweep()).to_dict("records")
    assert (row["devices"], row["fitted_on"]) == (4, [2])
    # through (0, 0) and (1e6, 3 ms): comm(4) = 3e-9 * 1.5e6 = 4.5 ms -> step 14.5 ms vs 14 ms measured
    assert row["predicted_step_s"] == pytest.approx(0.0145)
    assert row["error"] == pytest.approx(0.0145 / 0.014 - 1)


def test_compute_growth_with_devices_is_fitted_when_measured():
    frame = sweep()
    frame["compute_time_s"] = [None, 0.012, 0.016]  # +2 ms per extra replica sharing the cores
    [row] = holdout(frame).to_dict("records")
    # compute fitted through (1, 10 ms), (2, 12 ms): 16 ms at N=4, plus 4.5 ms of communication
    assert row["predicted_step_s"] == pytest.approx(0.016 + 0.0045)


def test_each_link_is_its_own_topology():
    fast = sweep()
    slow = pd.DataFrame([rec("s2", 2, 0.110, 0.100), rec("s4", 4, 0.160, 0.150)])
    slow["network_link"] = "100mbit"
    fast["network_link"] = None
    rows = holdout(pd.concat([fast, slow], ignore_index=True)).to_dict("records")
    assert [(r["network_link"], r["fitted_on"]) for r in rows][1] == ("100mbit", [2])
    assert pd.isna(rows[0]["network_link"]) and rows[0]["fitted_on"] == [2]
    # the slow link's fit: through (0, 0) and (1e6, 100 ms): comm(4) = 150 ms, + 10 ms compute = 160 ms
    assert rows[1]["predicted_step_s"] == pytest.approx(0.160)
    assert rows[0]["predicted_step_s"] == pytest.approx(0.0145)  # unchanged by the other link's points
