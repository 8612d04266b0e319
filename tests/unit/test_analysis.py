import math

import pandas as pd
import pytest

from tfscale.analysis import (
    add_scaling,
    comm_crosscheck,
    disagreements,
    exposed_comm,
    layout_comparison,
    loss_breakdown,
    summary_rows,
    warnings_for,
)


def record(cid, strategy, devices, median_s, policy="weak", batch=32, status="ok", model="mlp", kind="gpu"):
    replicas = 1 if strategy == "one_device" else devices
    global_batch = batch * replicas if policy == "weak" else batch
    ok = status == "ok"
    return {
        "config_id": cid,
        "run_id": "r",
        "status": status,
        "reason": None if ok else "boom",
        "device": "gpu",
        "device_kind": kind,
        "model": model,
        "model_size": "small",
        "strategy": strategy,
        "nodes": 1,
        "devices_per_node": devices,
        "devices": devices,
        "replicas": replicas,
        "batch_size": batch,
        "batch_policy": policy,
        "global_batch_size": global_batch,
        "precision": "float32",
        "jit": False,
        "optimizer": "sgd",
        "step_time_median_s": median_s if ok else None,
        "step_time_mad_s": median_s / 100 if ok else None,
        "throughput_examples_per_s": global_batch / median_s if ok else None,
    }


def test_weak_scaling_against_one_device():
    frame = pd.DataFrame(
        [record("a", "mirrored", 1, 0.11), record("b", "one_device", 1, 0.10), record("c", "mirrored", 4, 0.125)]
    )
    out = add_scaling(frame).set_index("config_id")
    assert list(out["baseline_config_id"]) == ["b", "b", "b"]  # one_device preferred over mirrored x1
    assert out.loc["c", "scaling"] == "weak"
    # throughput: 128/0.125 = 1024 vs 32/0.10 = 320 -> speedup 3.2, efficiency 0.8
    assert out.loc["c", "speedup"] == pytest.approx(3.2)
    assert out.loc["c", "scaling_efficiency"] == pytest.approx(0.8)
    assert out.loc["a", "scaling_efficiency"] == pytest.approx(0.10 / 0.11)
    assert out.loc["c", "step_time_cv"] == pytest.approx(0.01)


def test_strong_scaling_uses_step_time():
    frame = pd.DataFrame(
        [
            record("a", "mirrored", 1, 0.40, policy="strong", batch=64),
            record("b", "mirrored", 2, 0.25, policy="strong", batch=64),
        ]
    )
    out = add_scaling(frame).set_index("config_id")
    assert out.loc["b", "scaling"] == "strong"
    assert out.loc["b", "speedup"] == pytest.approx(1.6)
    assert out.loc["b", "scaling_efficiency"] == pytest.approx(0.8)


def test_missing_baseline_and_failed_configs_are_empty_not_zero():
    frame = pd.DataFrame(
        [
            record("a", "mirrored", 2, 0.2),
            record("b", "mirrored", 1, 0.1, batch=16),
            record("c", "mirrored", 4, 0.3, status="failed"),
            record("d", "mirrored", 1, 0.1, batch=16, model="cnn", status="failed"),
        ]
    )
    out = add_scaling(frame).set_index("config_id")
    assert math.isnan(out.loc["a", "scaling_efficiency"])
    assert out.loc["a", "baseline_note"].startswith("no baseline: no ok 1-node 1-device config of mlp")
    assert math.isnan(out.loc["c", "speedup"])
    assert out.loc["c", "baseline_note"] == "config failed"
    assert out.loc["b", "scaling_efficiency"] == 1.0


def test_warnings_name_logical_devices_failures_noise_and_missing_baselines():
    rows = [
        record("a", "mirrored", 1, 0.1, kind="cpu-logical"),
        record("b", "mirrored", 2, 0.1, batch=8),
        record("c", "mirrored", 4, 0.1, status="timeout"),
    ]
    rows[0]["step_time_mad_s"] = 0.02
    notes = warnings_for(add_scaling(pd.DataFrame(rows)))
    assert notes[0].startswith("Logical CPU devices share the same cores")
    assert notes[1] == "Config c (mlp, mirrored, x4) timeout: boom"
    assert notes[2].startswith("Config a (mlp, mirrored, x1): high step-time variation, MAD/median = 20.0% (> 10%)")
    assert notes[3].startswith("Config b (mlp, mirrored, x2): no baseline")
    assert len(notes) == 4


def test_summary_rows():
    out = add_scaling(
        pd.DataFrame([record("a", "one_device", 1, 0.1), record("c", "mirrored", 2, 0.1, status="failed")])
    )
    assert summary_rows(out) == [
        {
            "config_id": "a",
            "model": "mlp/small",
            "strategy": "one_device",
            "layout": "1 node × 1",
            "global_batch": "32",
            "status": "ok",
            "step": "100 ms",
            "examples/s": "320",
            "efficiency": "100 % weak",
        },
        {
            "config_id": "c",
            "model": "mlp/small",
            "strategy": "mirrored",
            "layout": "1 node × 2",
            "global_batch": "64",
            "status": "failed",
            "step": "",
            "examples/s": "",
            "efficiency": "",
        },
    ]


def cluster_record(cid, strategy, nodes, per_node, median_s, ranks=None, num_ps=None):
    r = record(cid, strategy, nodes * per_node, median_s)
    r.update({"nodes": nodes, "devices_per_node": per_node, "num_ps": num_ps, "rank_throughput_examples_per_s": ranks})
    return r


def test_layout_comparison_at_equal_device_counts():
    frame = add_scaling(
        pd.DataFrame(
            [
                cluster_record("base", "one_device", 1, 1, 0.10),
                cluster_record("m2", "mirrored", 1, 2, 0.125),
                cluster_record("w2", "multi_worker_mirrored", 2, 1, 0.16, ranks=[190.0, 210.0]),
                cluster_record("p2", "parameter_server", 2, 1, 0.2, num_ps=1),
                cluster_record("m4", "mirrored", 1, 4, 0.2),  # alone at 4 devices: not compared
            ]
        )
    )
    rows = layout_comparison(frame)
    assert list(rows["config_id"]) == ["m2", "w2", "p2"]
    assert list(rows["layout"]) == [
        "1 node × 2",
        "2 nodes × 1",
        "2 workers + 1 PS",
    ]
    assert rows.set_index("config_id").loc["w2", "scaling_efficiency"] == pytest.approx(64 / 0.16 / 320 / 2)
    assert list(rows["rank_throughput_min_examples_per_s"].fillna(-1)) == [-1, 190.0, -1]
    assert list(rows["rank_throughput_max_examples_per_s"].fillna(-1)) == [-1, 210.0, -1]


def test_disagreements_name_pairs_beyond_25_percent():
    assert disagreements({"exposed": 0.010, "split": 0.012, "isolated": 0.004, "model": None}) == [
        "exposed vs isolated: 2.50x",
        "split vs isolated: 3.00x",
    ]
    assert disagreements({"a": 1.0, "b": 1.25}) == []


def test_comm_crosscheck_rows():
    measured = record("m2", "mirrored", 2, 0.020)
    measured.update(
        {
            "compute_time_s": 0.012,
            "comm_time_exposed_s": 0.008,
            "comm_time_split_s": 0.009,
            "comm_time_isolated_s": 0.004,
            "comm_time_model_s": 0.0045,
            "overlap_fraction": 0.11,
        }
    )
    jit = record("j2", "mirrored", 2, 0.02)
    jit.update({"comm_method": "not measured: with jit (XLA) ..."})
    rows = comm_crosscheck(
        pd.DataFrame([measured, record("o1", "one_device", 1, 0.01), record("p2", "parameter_server", 2, 0.03), jit])
    )
    first = rows.iloc[0]
    assert first["comm_fraction"] == pytest.approx(0.4)
    assert first["notes"] == (
        "exposed vs isolated: 2.00x; exposed vs model: 1.78x; split vs isolated: 2.25x; split vs model: 2.00x"
    )
    assert list(rows["notes"][1:]) == [
        "one replica: no gradient communication",
        "parameter_server: no all-reduce (variables live on the servers)",
        "not measured: with jit (XLA) ...",
    ]
    assert rows["comm_time_split_s"][1:].isna().all()


def test_loss_breakdown_terms_add_up_to_the_gap():
    base = record("b", "one_device", 1, 0.010)
    weak = record("w", "multi_worker_mirrored", 2, 0.016)
    weak.update({"comm_time_exposed_s": 0.004, "rank_step_time_median_s": [0.014, 0.016]})
    strong = record("s", "mirrored", 4, 0.004, policy="strong", batch=32)
    strong_base = record("sb", "one_device", 1, 0.010, policy="strong", batch=32)
    rows = loss_breakdown(add_scaling(pd.DataFrame([base, weak, strong, strong_base]))).set_index("config_id")
    w = rows.loc["w"]
    assert (w["ideal_step_s"], w["gap_s"]) == pytest.approx((0.010, 0.006))
    assert (w["comm_exposed_s"], w["straggler_wait_s"], w["input_wait_s"]) == pytest.approx((0.004, 0.001, 0.0))
    assert w["rest_s"] == pytest.approx(0.001)
    parts = w["comm_exposed_fraction"] + w["straggler_wait_fraction"] + w["input_wait_fraction"] + w["rest_fraction"]
    assert parts == pytest.approx(w["gap_fraction"]) and w["gap_fraction"] == pytest.approx(0.006 / 0.016)
    s = rows.loc["s"]  # strong: ideal = T1 / N = 2.5 ms; no communication measured: all of the gap is "rest"
    assert (s["ideal_step_s"], s["gap_s"], s["rest_s"]) == pytest.approx((0.0025, 0.0015, 0.0015))
    assert list(rows.index) == ["w", "s"]  # one-device configs have no gap to explain


def test_condense_gives_one_row_per_config_with_the_median_and_spread_over_runs():
    import pandas as pd

    from tfscale.analysis import condense

    def record(run, cid, step):
        return {
            "config_id": cid,
            "run_id": run,
            "status": "ok",
            "device": "cpu",
            "model": "mlp",
            "model_size": "tiny",
            "strategy": "mirrored",
            "nodes": 1,
            "devices_per_node": 2,
            "devices": 2,
            "batch_size": 8,
            "batch_policy": "weak",
            "precision": "float32",
            "jit": False,
            "optimizer": "sgd",
            "parallelism": "data",
            "network_link": None,
            "step_time_median_s": step,
            "step_time_ci95_low_s": step * 0.9,
            "step_time_ci95_high_s": step * 1.1,
            "step_times_s": [step],
        }

    frame = pd.DataFrame(
        [
            record("r1", "a", 0.010),
            record("r2", "a", 0.030),
            record("r3", "a", 0.020),
            record("r1", "b", 1.0) | {"strategy": "central_storage"},
            record("r1", "c", 5.0) | {"status": "failed"},
        ]
    )
    rows = condense(frame)
    assert list(rows["strategy"]) == ["mirrored", "central_storage"]
    first = rows.iloc[0]
    assert (first["config_id"], first["run_id"], first["step_time_median_s"]) == ("a", "3 runs", 0.020)
    assert (first["step_time_ci95_low_s"], first["step_time_ci95_high_s"]) == (0.010, 0.030)
    assert first["step_times_s"] == [0.010, 0.030, 0.020]
    assert rows.iloc[1]["run_id"] == "1 runs"
    assert list(rows.columns) == list(frame.columns)


def with_samples(row, samples):
    return {**row, "step_times_s": samples}


def test_efficiency_ci_from_the_samples_of_the_config_and_its_baseline():
    base = with_samples(record("b", "one_device", 1, 0.10), [0.10] * 10)
    four = with_samples(record("c", "mirrored", 4, 0.125), [0.125] * 10)
    out = add_scaling(pd.DataFrame([base, four])).set_index("config_id")
    # constant samples: the CI is the point, exactly
    assert (out.loc["c", "scaling_efficiency_ci95_low"], out.loc["c", "scaling_efficiency_ci95_high"]) == (
        pytest.approx(0.8),
        pytest.approx(0.8),
    )
    assert (out.loc["c", "speedup_ci95_low"], out.loc["c", "speedup_ci95_high"]) == (
        pytest.approx(3.2),
        pytest.approx(3.2),
    )


def test_one_device_efficiency_ci_of_the_same_distribution_contains_one():
    samples = [0.100, 0.104, 0.098, 0.101, 0.097, 0.103, 0.099, 0.102, 0.100, 0.105, 0.096, 0.101]
    base = with_samples(record("b", "one_device", 1, 0.1005), samples)
    other = with_samples(record("m", "mirrored", 1, 0.1005), list(reversed(samples)))
    out = add_scaling(pd.DataFrame([base, other])).set_index("config_id")
    assert out.loc["m", "scaling_efficiency_ci95_low"] < 1.0 < out.loc["m", "scaling_efficiency_ci95_high"]
    assert out.loc["m", "scaling_efficiency"] == pytest.approx(1.0)


def test_no_samples_no_ci():
    out = add_scaling(pd.DataFrame([record("b", "one_device", 1, 0.1), record("c", "mirrored", 2, 0.1)]))
    assert out["scaling_efficiency_ci95_low"].isna().all()


def test_a_negative_or_noisy_exposed_communication_is_drawn_as_zero_with_a_note():
    base = with_samples(record("b", "one_device", 1, 0.010), [0.010] * 10)
    noisy = with_samples(record("n", "mirrored", 2, 0.012), [0.012] * 10)
    noisy.update(
        {"comm_time_exposed_s": -0.0005, "comm_time_exposed_ci95_low_s": -0.001, "comm_time_exposed_ci95_high_s": 0.0}
    )
    clear = with_samples(record("c", "mirrored", 4, 0.014), [0.014] * 10)
    clear.update(
        {"comm_time_exposed_s": 0.003, "comm_time_exposed_ci95_low_s": 0.002, "comm_time_exposed_ci95_high_s": 0.004}
    )
    rows = loss_breakdown(add_scaling(pd.DataFrame([base, noisy, clear]))).set_index("config_id")
    assert rows.loc["n", "comm_exposed_s"] == 0.0
    assert rows.loc["n", "comm_exposed_note"] == "within noise (95 % CI -1.000 to 0.000 ms)"
    assert rows.loc["n", "rest_s"] == pytest.approx(0.002)  # the whole gap
    assert rows.loc["c", "comm_exposed_s"] == 0.003 and pd.isna(rows.loc["c", "comm_exposed_note"])
    assert (rows.loc["c", "gap_ci95_low_s"], rows.loc["c", "gap_ci95_high_s"]) == pytest.approx((0.004, 0.004))


def test_a_compute_only_step_clearly_slower_than_the_full_one_is_not_called_noise():
    row = pd.Series(
        {
            "comm_time_exposed_s": -0.0007,
            "comm_time_exposed_ci95_low_s": -0.00095,
            "comm_time_exposed_ci95_high_s": -0.0004,
        }
    )
    shown, note = exposed_comm(row)
    assert math.isnan(shown)  # empty, never 0: the method does not apply
    assert note == "not measurable: the compute-only step ran slower than the full step (95 % CI -0.950 to -0.400 ms)"


def test_exposed_communication_of_central_storage_is_not_measured_even_in_old_records():
    from tfscale.measures.comm import EXPOSED_COLUMNS, applicable

    row = pd.Series({"strategy": "central_storage", "comm_time_exposed_s": -0.0009, "status": "ok", "replicas": 4})
    shown, note = exposed_comm(row)
    assert math.isnan(shown) and note.startswith("not measured: under central_storage the variables live on one")
    columns = {"comm_time_exposed_s": -0.0009, "compute_time_s": 0.03, "comm_method": "fused - compute-only"}
    emptied = applicable(columns, "central_storage")
    assert all(emptied[c] is None for c in EXPOSED_COLUMNS) and emptied["compute_time_s"] == 0.03
    assert emptied["comm_method"].startswith("fused - compute-only; exposed communication not measured: under")
    assert applicable(columns, "mirrored") == columns


def test_a_one_device_efficiency_surely_above_one_is_called_out():
    base = with_samples(record("b", "one_device", 1, 0.010), [0.010, 0.0101, 0.0099] * 4)
    fast = with_samples(record("f", "mirrored", 1, 0.008), [0.008, 0.0081, 0.0079] * 4)
    notes = warnings_for(add_scaling(pd.DataFrame([base, fast])))
    assert notes[-1].startswith(
        "Config f (mlp, mirrored, x1): 1-device efficiency 1.25 (95 % CI 1.24 to 1.26) is above 1"
    )
    assert notes[-1].endswith("a spread the CI covers only where both ran in several processes (repeats: 2 or more)")


def test_the_same_configs_in_two_runs_are_told_apart_by_run():
    # `tfscale report results/<suite>` of a suite run twice: the same config ids in both runs (the report crashed
    # looking them up by config id alone); each run's configs scale against that run's own baseline.
    first = [record("b", "one_device", 1, 0.010), record("w", "mirrored", 2, 0.016)]
    second = [record("b", "one_device", 1, 0.020), record("w", "mirrored", 2, 0.024)]
    for row in second:
        row["run_id"] = "r2"
    frame = add_scaling(pd.DataFrame(first + second))
    rows = loss_breakdown(frame).set_index(["run_id", "config_id"])
    assert rows.loc[("r", "w"), "ideal_step_s"] == pytest.approx(0.010)
    assert rows.loc[("r2", "w"), "ideal_step_s"] == pytest.approx(0.020)
    assert (rows.loc[("r", "w"), "gap_s"], rows.loc[("r2", "w"), "gap_s"]) == pytest.approx((0.006, 0.004))
    efficiency = frame.set_index(["run_id", "config_id"])["scaling_efficiency"]
    assert (efficiency[("r", "w")], efficiency[("r2", "w")]) == pytest.approx((0.010 / 0.016, 0.020 / 0.024))


def test_a_timed_compute_only_step_names_the_compute_growth():
    # cnn mirrored x4 on logical devices: its replicas' compute grew from the ideal 8 ms to 30 ms; that growth is
    # the loss, not "the rest". Capped by what the gap leaves after communication, stragglers and input.
    base = record("b", "one_device", 1, 0.008)
    grown = record("g", "mirrored", 4, 0.032) | {"compute_time_s": 0.030, "comm_time_exposed_s": 0.002}
    capped = record("c", "mirrored", 2, 0.010) | {"compute_time_s": 0.012, "comm_time_exposed_s": 0.001}
    untimed = record("u", "mirrored", 2, 0.012)
    rows = loss_breakdown(add_scaling(pd.DataFrame([base, grown, capped, untimed]))).set_index("config_id")
    g, c, u = rows.loc["g"], rows.loc["c"], rows.loc["u"]
    assert (g["gap_s"], g["comm_exposed_s"], g["compute_growth_s"], g["rest_s"]) == pytest.approx(
        (0.024, 0.002, 0.022, 0.0)
    )
    assert g["compute_growth_fraction"] == pytest.approx(0.022 / 0.032)
    assert (c["gap_s"], c["compute_growth_s"], c["rest_s"]) == pytest.approx((0.002, 0.001, 0.0))  # capped
    assert (u["compute_growth_s"], u["rest_s"]) == pytest.approx((0.0, 0.004))  # not timed: all in the rest


def test_a_drift_of_the_timed_windows_beyond_their_noise_is_a_warning():
    rising = [0.010, 0.0101, 0.0099] * 2 + [0.0102] * 6 + [0.011, 0.0111, 0.0109] * 2
    drifted = with_samples(record("d", "one_device", 1, 0.0102), rising) | {"window_drift_rel": 0.1}
    steady = with_samples(record("s", "one_device", 1, 0.0102, model="cnn"), rising) | {"window_drift_rel": 0.01}
    notes = warnings_for(add_scaling(pd.DataFrame([drifted, steady])))
    [note] = [n for n in notes if "drifted" in n]
    assert note.startswith("Config d (mlp, one_device, x1): its timed windows drifted +10.0 % from the first third")


def test_a_workload_is_every_axis_that_is_not_layout():
    from tfscale.analysis import WORKLOAD_KEY

    expected = (
        *("suite", "run_id", "device", "model", "model_size", "batch_size", "batch_policy", "precision", "jit"),
        *("optimizer", "data", "task", "data_examples", "data_shards", "data_compression", "data_parallel_calls"),
        *("shuffle_buffer", "prefetch", "cache"),
    )
    assert tuple(WORKLOAD_KEY) == expected
