import pandas as pd
import pytest

from tfscale import metrics as m
from tfscale.compare import ON_PROCESSES, ON_WINDOWS, _ranks, compare, compared_values, env_differences, mann_whitney


def test_ranks_average_ties():
    assert _ranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]


def test_mann_whitney_exact_values():
    # fully separated samples of 5: U = 0, z = (12.5 - 0.5) / sqrt(25 * 11 / 12) = 2.5067, p = 0.01219
    result = mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert result.u == 0.0
    assert result.p_value == pytest.approx(0.012186, abs=1e-5)
    assert mann_whitney([1, 2, 3], [1, 2, 3]).p_value == 1.0
    with pytest.raises(ValueError):
        mann_whitney([], [1.0])


def record(cid, strategy, devices, samples, **extra):
    median = sorted(samples)[len(samples) // 2]
    return {
        "config_id": cid,
        "run_id": "r",
        "status": "ok",
        "device": "cpu",
        "device_kind": "cpu-logical",
        "model": "mlp",
        "model_size": "small",
        "strategy": strategy,
        "cross_device_ops": None,
        "collective": None,
        "num_ps": None,
        "nodes": 1,
        "devices_per_node": devices,
        "devices": devices,
        "replicas": devices,
        "parallelism": "data",
        "batch_size": 32,
        "batch_policy": "weak",
        "global_batch_size": 32 * devices,
        "precision": "float32",
        "jit": False,
        "optimizer": "sgd",
        "step_times_s": samples,
        "step_time_median_s": median,
        "step_time_mad_s": 0.0,
        "throughput_examples_per_s": 32 * devices / median,
        **extra,
    }


def test_a_planted_20_percent_slowdown_is_a_significant_regression():
    fast = [0.010 + 0.0001 * i for i in range(10)]
    base = pd.DataFrame([record("a", "one_device", 1, fast), record("b", "mirrored", 2, fast)])
    new = pd.DataFrame([record("a", "one_device", 1, fast), record("b2", "mirrored", 2, [t * 1.2 for t in fast])])
    rows = compare(base, new).set_index("config_id")
    assert rows.loc["a", "matched_by"] == "config_id" and rows.loc["b2", "matched_by"] == "axes"
    assert rows.loc["a", "throughput_change"] == pytest.approx(0.0)
    assert not rows.loc["a", "significant"] and not rows.loc["a", "regression"]
    assert rows.loc["b2", "throughput_change"] == pytest.approx(1 / 1.2 - 1)
    assert rows.loc["b2", "step_time_ratio"] == pytest.approx(1.2)
    assert rows.loc["b2", "significant"] and rows.loc["b2", "regression"]
    assert rows.loc["b2", "efficiency_change"] == pytest.approx(1 / 1.2 - 1)


def test_env_differences():
    assert env_differences(
        {"host": "a", "packages": {"tensorflow": "2.21.0", "x": "1"}, "captured_at": "t1"},
        {"host": "b", "packages": {"tensorflow": "2.21.0"}, "captured_at": "t2"},
    ) == [("host", "a", "b"), ("packages.x", "1", "")]


def test_hodges_lehmann_shift_and_its_ci_exactly():
    from tfscale.compare import Shift, hodges_lehmann

    # differences new_j - base_i = 5 + (j - i): median 5; C = floor(50 - 1.96 x sqrt(175)) = 24; the 24th smallest
    # difference is 5 - 3 and the 24th largest 5 + 3
    assert hodges_lehmann(list(range(10)), [i + 5 for i in range(10)]) == Shift(5.0, 2.0, 8.0)
    # 3 against 3 samples: C < 1, no CI
    assert hodges_lehmann([1, 2, 3], [2, 3, 4]) == Shift(1.0, None, None)


def test_benjamini_hochberg_q_values_exactly():
    from tfscale.compare import benjamini_hochberg

    q = benjamini_hochberg([0.01, 0.04, 0.03, 0.5])
    assert q == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5])
    assert benjamini_hochberg([]) == []


def test_identical_samples_have_q_one_and_no_verdict():
    fast = [0.010 + 0.0001 * i for i in range(10)]
    rows = compare(
        pd.DataFrame([record("a", "one_device", 1, fast)]), pd.DataFrame([record("a", "one_device", 1, fast)])
    )
    assert list(rows["q_value"]) == [1.0] and not rows["significant"].any()


def test_runs_with_repeats_are_tested_on_their_process_medians():
    before = pd.Series({m.STEP_TIMES_S: [1.0, 1.1], m.REPEAT_MEDIANS_S: [1.0, 1.1, 1.2]})
    after = pd.Series({m.STEP_TIMES_S: [2.0, 2.1], m.REPEAT_MEDIANS_S: [2.0, 2.2]})
    assert compared_values(before, after) == (([1.0, 1.1, 1.2], [2.0, 2.2]), ON_PROCESSES)
    one = pd.Series({m.STEP_TIMES_S: [3.0, 3.1], m.REPEAT_MEDIANS_S: None})
    assert compared_values(before, one) == (([1.0, 1.1], [3.0, 3.1]), ON_WINDOWS)
