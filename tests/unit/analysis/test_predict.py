import pandas as pd
import pytest

from tfscale.analysis.predict import fit_line, holdout, predict


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
    # fitted through (1e6, 3 ms) and (1.5e6, 4 ms) alone (no point at N = 1): the line above, recovered exactly
    assert (row["alpha_s"], row["beta_s_per_byte"]) == pytest.approx((0.001, 2e-9))
    assert row["predicted_step_s"] == pytest.approx(0.010 + 0.001 + 2e-9 * 1_000_000 * 2 * 7 / 8)
    assert row["predicted_throughput_examples_per_s"] == pytest.approx(32 * 8 / row["predicted_step_s"])
    assert row["predicted_efficiency"] == pytest.approx(0.010 / row["predicted_step_s"])
    assert row["fitted_on"] == [2, 4]


def three_counts():
    # exposed comm = 2 ns/B * S * 2(N-1)/N exactly (alpha 0): 2, 3 and 3.5 ms at N = 2, 4, 8
    return pd.DataFrame(
        [rec("b", 1, 0.010, None), rec("w2", 2, 0.012, 0.002), rec("w4", 4, 0.013, 0.003), rec("w8", 8, 0.014, 0.0036)]
    )


def test_holdout_predicts_the_largest_from_the_others():
    [row] = holdout(three_counts()).to_dict("records")
    assert (row["devices"], row["fitted_on"]) == (8, [2, 4])
    # through (1e6, 2 ms), (1.5e6, 3 ms): exactly 2 ns/B; comm(8) = 2e-9 * 1.75e6 = 3.5 ms
    assert row["predicted_step_s"] == pytest.approx(0.0135)
    assert row["prediction_error"] == pytest.approx(0.0135 / 0.014 - 1)
    assert row["inside_interval"] is None  # no samples in these records: no interval


def test_no_holdout_from_a_fit_with_as_many_points_as_parameters():
    assert holdout(sweep()).empty  # N = 4 held out, N = 2 alone left: no line


def test_compute_growth_with_devices_is_fitted_when_measured():
    frame = three_counts()
    frame["compute_time_s"] = [None, 0.012, 0.014, 0.020]  # +1 ms per extra replica sharing the cores
    [row] = holdout(frame).to_dict("records")
    # compute fitted through (1, 10 ms), (2, 12 ms), (4, 14 ms): slope 6/4.667 = 1.2857 ms, intercept 9 ms; at
    # N=8 19.286 ms, plus 3.5 ms of communication
    assert row["predicted_step_s"] == pytest.approx(0.009 + 8 * 0.006 / (14 / 3) + 0.0035)


def test_each_link_is_its_own_topology():
    fast = three_counts()
    slow = pd.DataFrame([rec("s2", 2, 0.110, 0.100), rec("s4", 4, 0.160, 0.150), rec("s8", 8, 0.190, 0.175)])
    slow["network_link"] = "100mbit"
    fast["network_link"] = None
    rows = holdout(pd.concat([fast, slow], ignore_index=True)).to_dict("records")
    assert [(r["network_link"], r["fitted_on"]) for r in rows][1] == ("100mbit", [2, 4])
    assert pd.isna(rows[0]["network_link"]) and rows[0]["fitted_on"] == [2, 4]
    # the slow link's fit: through (1e6, 100 ms), (1.5e6, 150 ms): comm(8) = 175 ms, + 10 ms compute
    assert rows[1]["predicted_step_s"] == pytest.approx(0.185)
    assert rows[0]["predicted_step_s"] == pytest.approx(0.0135)  # unchanged by the other link's points


def test_the_model_error_is_the_leave_one_out_error_at_the_measured_counts():
    from tfscale.analysis import add_scaling
    from tfscale.analysis.predict import model_error

    frame = add_scaling(three_counts())
    multi = frame[frame["devices"] > 1]
    # leave out N = 2: line through (1.5e6, 3), (1.75e6, 3.6 ms) gives 1.8 ms at 1e6: step 11.8 vs 12 (-1/60);
    # N = 4: 3.0667 ms: 13.0667 vs 13 (+0.00513); N = 8: 3.5 ms: 13.5 vs 14 (-0.0357); root mean square 0.022946
    assert model_error(frame.iloc[0], 0.010, multi) == pytest.approx(0.022946, abs=1e-6)
    assert model_error(frame.iloc[0], 0.010, multi.iloc[:2]) is None  # two counts: a line through them
    exact = multi.assign(comm_time_exposed_s=[0.002, 0.003, 0.0035], step_time_median_s=[0.012, 0.013, 0.0135])
    assert model_error(frame.iloc[0], 0.010, exact) == pytest.approx(0.0, abs=1e-12)


def test_prediction_interval_covers_the_noise_and_the_model_error():
    from tfscale.analysis import add_scaling
    from tfscale.analysis.predict import model_error

    frame = three_counts()
    frame.loc[3, ["step_time_median_s", "throughput_examples_per_s"]] = [0.0136, 32 * 8 / 0.0136]  # step = 10 + comm
    frame["step_times_s"] = [[0.010] * 8, [0.012] * 8, [0.013] * 8, [0.0136] * 8]
    frame["compute_times_s"] = [None, [0.010] * 8, [0.010] * 8, [0.010] * 8]
    frame["compute_time_s"] = [None, 0.010, 0.010, 0.010]
    row = predict(frame, [16]).iloc[0]
    # constant samples: no noise, so the interval is the model error alone, 1.96 x its relative size each side
    error = model_error(add_scaling(frame).iloc[1], 0.010, add_scaling(frame).iloc[1:])
    step = row["predicted_step_s"]
    assert error == pytest.approx(0.010926, abs=1e-6)  # leave-one-out: -1/60, +0.00513, -0.00735
    assert (row["predicted_step_ci95_low_s"], row["predicted_step_ci95_high_s"]) == pytest.approx(
        (step * (1 - 1.959964 * error), step * (1 + 1.959964 * error)), rel=1e-5
    )
    assert row["predicted_efficiency_ci95_low"] == pytest.approx(0.010 / row["predicted_step_ci95_high_s"])
    # through two counts there is no interval at all
    two = predict(sweep().assign(step_times_s=[[0.010] * 8, [0.013] * 8, [0.014] * 8]), [8]).iloc[0]
    assert two["predicted_step_ci95_low_s"] is None and "so no interval" in two["prediction_warnings"]


def test_an_impossible_prediction_is_refused_with_the_reason():
    frame = three_counts()
    frame["compute_time_s"] = [None, 0.008, 0.006, 0.002]  # compute shrinking with N: superlinear
    row = predict(frame, [64]).iloc[0]
    assert pd.isna(row["predicted_step_s"]) and pd.isna(row["predicted_efficiency"])
    assert row["prediction_warnings"].startswith("refused: the fit predicts ")


def test_warnings_say_why_a_prediction_deserves_less_trust():
    from tfscale.analysis.predict import LOGICAL_WARNING, warnings_of

    assert warnings_of(32, [2, 4, 8], "gpu") == []
    assert warnings_of(33, [2, 4, 8], "gpu") == ["4x beyond the largest measured count (8)"]
    assert warnings_of(64, [2, 4], "cpu-logical") == [
        "16x beyond the largest measured count (4)",
        LOGICAL_WARNING,
        "fitted on 2 points for 2 parameters: nothing checks the fit, so no interval",
    ]


def test_modes_it_cannot_model_are_named_with_the_reason():
    from tfscale.analysis.predict import NO_COMMUNICATION, NOT_MODELLED, ONE_COUNT, unmodelled

    frame = pd.DataFrame(
        [
            {
                "status": "ok",
                "devices": 2,
                "strategy": "parameter_server",
                "parallelism": "data",
                "comm_time_exposed_s": None,
            },
            {"status": "ok", "devices": 2, "strategy": None, "parallelism": "pipeline", "comm_time_exposed_s": None},
            {"status": "ok", "devices": 2, "strategy": "mirrored", "parallelism": "data", "comm_time_exposed_s": None},
            {"status": "ok", "devices": 4, "strategy": "mirrored", "parallelism": "data", "comm_time_exposed_s": 0.1},
            {"status": "ok", "devices": 8, "strategy": "mirrored", "parallelism": "data", "comm_time_exposed_s": 0.2},
            {"status": "ok", "devices": 2, "strategy": "multi_worker_mirrored", "comm_time_exposed_s": 0.1},
            {
                "status": "ok",
                "devices": 1,
                "strategy": "one_device",
                "parallelism": "data",
                "comm_time_exposed_s": None,
            },
            {
                "status": "failed",
                "devices": 2,
                "strategy": "central_storage",
                "parallelism": "data",
                "comm_time_exposed_s": None,
            },
        ]
    )
    assert unmodelled(frame) == [
        ("parameter_server", NOT_MODELLED["parameter_server"]),
        ("pipeline", NOT_MODELLED["pipeline"]),
        ("mirrored", NO_COMMUNICATION),
        ("multi_worker_mirrored", ONE_COUNT),
    ]
