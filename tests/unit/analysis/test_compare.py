import pandas as pd
import pytest

from tfscale import metrics as m
from tfscale.analysis.compare import (
    ON_PROCESSES,
    ON_WINDOWS,
    VERDICT_NONE,
    VERDICT_REGRESSION,
    VERDICT_SAME,
    VERDICT_SLOWER,
    compare,
    compared_values,
    env_differences,
)
from tfscale.stats.ranktests import _ranks, mann_whitney


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


FACTORS = (0.98, 0.99, 1.0, 1.01, 1.02)  # five processes, 2 % apart


def in_processes(cid, strategy, devices, step, factors=FACTORS):
    """A combined record of len(factors) processes whose medians are step x each factor (10 windows each)."""
    medians = [step * f for f in factors]
    windows = [m_ * (1 + 0.001 * (i - 5)) for m_ in medians for i in range(10)]
    return record(cid, strategy, devices, windows, repeat_medians_s=medians, step_time_median_s=step)


def test_a_planted_20_percent_slowdown_in_five_processes_is_a_regression():
    base = pd.DataFrame([in_processes("a", "one_device", 1, 0.010), in_processes("b", "mirrored", 2, 0.010)])
    new = pd.DataFrame([in_processes("a", "one_device", 1, 0.010), in_processes("b2", "mirrored", 2, 0.012)])
    rows = compare(base, new).set_index("config_id")
    assert rows.loc["a", "matched_by"] == "config_id" and rows.loc["b2", "matched_by"] == "axes"
    # the same processes: CI of the throughput change 0.99 / 1.02 - 1 to 1.02 / 0.99 - 1 (C = 3 of 25 ratios)
    assert (rows.loc["a", "throughput_change_ci95_low"], rows.loc["a", "throughput_change_ci95_high"]) == (
        pytest.approx(0.99 / 1.02 - 1),
        pytest.approx(1.02 / 0.99 - 1),
    )
    assert rows.loc["a", "verdict"] == VERDICT_SAME and not rows.loc["a", "regression"]
    assert rows.loc["b2", "throughput_change"] == pytest.approx(1 / 1.2 - 1)
    assert (rows.loc["b2", "throughput_change_ci95_low"], rows.loc["b2", "throughput_change_ci95_high"]) == (
        pytest.approx(0.99 / 1.02 / 1.2 - 1),  # -19.1 %
        pytest.approx(1.02 / 0.99 / 1.2 - 1),  # -14.1 %: wholly beyond -5 %
    )
    assert rows.loc["b2", "verdict"] == VERDICT_REGRESSION and rows.loc["b2", "significant"]
    # the Mann-Whitney q of 5 against 5 process medians is 0.012 x 2 configs: no use for a verdict, kept for reading
    assert rows.loc["b2", "p_value"] == pytest.approx(0.0122, abs=1e-4)


def test_a_slowdown_inside_the_threshold_is_slower_and_one_of_windows_has_no_verdict():
    base = pd.DataFrame([in_processes("a", "one_device", 1, 0.010)])
    rows = compare(base, pd.DataFrame([in_processes("a", "one_device", 1, 0.0106)]))
    assert list(rows["verdict"]) == [VERDICT_SLOWER]  # CI -8.6 to -3.0 %: below 0, not wholly beyond -5 %
    fast = [0.010 + 0.0001 * i for i in range(10)]
    windows = compare(
        pd.DataFrame([record("a", "one_device", 1, fast)]),
        pd.DataFrame([record("a", "one_device", 1, [t * 1.2 for t in fast])]),
    )
    assert list(windows["verdict"]) == [VERDICT_NONE] and not windows["regression"].any()
    assert windows["no_verdict"][0] == (
        "1 and 1 process(es): a verdict needs 5 or more on each side (repeats: 5 in both runs)"
    )
    three = compare(
        pd.DataFrame([in_processes("a", "one_device", 1, 0.010, FACTORS[:3])]),
        pd.DataFrame([in_processes("a", "one_device", 1, 0.020, FACTORS[:3])]),
    )
    assert list(three["verdict"]) == [VERDICT_NONE]  # twice as slow, but 3 against 3 processes decide nothing


def test_env_differences():
    assert env_differences(
        {"host": "a", "packages": {"tensorflow": "2.21.0", "x": "1"}, "captured_at": "t1", "run_drift": None},
        {"host": "b", "packages": {"tensorflow": "2.21.0"}, "captured_at": "t2", "run_drift": {"df": 4}},
    ) == [("host", "a", "b"), ("packages.x", "1", "")]


def test_hodges_lehmann_shift_and_its_ci_exactly():
    from tfscale.stats.ranktests import Shift, hodges_lehmann

    # differences new_j - base_i = 5 + (j - i): median 5; C = floor(50 - 1.96 x sqrt(175)) = 24; the 24th smallest
    # difference is 5 - 3 and the 24th largest 5 + 3
    assert hodges_lehmann(list(range(10)), [i + 5 for i in range(10)]) == Shift(5.0, 2.0, 8.0)
    # 3 against 3 samples: C < 1, no CI
    assert hodges_lehmann([1, 2, 3], [2, 3, 4]) == Shift(1.0, None, None)


def test_benjamini_hochberg_q_values_exactly():
    from tfscale.stats.ranktests import benjamini_hochberg

    q = benjamini_hochberg([0.01, 0.04, 0.03, 0.5])
    assert q == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5])
    assert benjamini_hochberg([]) == []


def test_identical_samples_have_q_one_and_no_significance():
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


def test_a_side_with_several_runs_gives_each_config_its_latest():
    from tfscale.analysis.compare import latest_runs, lost_configs

    base = pd.DataFrame(
        [
            record("a", "one_device", 1, [1.0]) | {"run_id": f"r{i}", "suite": "s", "finished_at": f"2026-12-0{i}"}
            for i in (3, 1, 2)
        ]
        + [record("b", "mirrored", 2, [1.0]) | {"run_id": "r1", "suite": "s", "finished_at": "2026-12-01"}]
    )
    latest, runs = latest_runs(base)
    assert runs == 3 and sorted(zip(latest["config_id"], latest["run_id"], strict=True)) == [("a", "r3"), ("b", "r1")]
    new = pd.DataFrame([record("a", "one_device", 1, [1.0]) | {"status": "failed", "reason": "boom"}])
    assert [c.line() for c in lost_configs(latest, new)] == [
        "NEWLY FAILED: a mlp/small one_device 1 node × 1: boom",
        "MISSING in NEW: b mlp/small mirrored 1 node × 2",
    ]  # once each, not once per run of BASE
    single, runs = latest_runs(new)
    assert runs == 1 and single is new


def test_settings_that_differ_between_matched_configs_are_named():
    from tfscale.analysis.compare import setting_differences

    base = pd.DataFrame([record(c, "mirrored", 2, [1.0]) | {"suite": "s", "warmup_steps": 5} for c in "ab"])
    new = pd.DataFrame([record(c, "mirrored", 2, [1.0]) | {"suite": "s", "warmup_steps": 5} for c in "ab"])
    new["run_id"] = "n"
    plans = {("s", "r", c): {"steps": 30, "timeout_s": 600.0} for c in "ab"}
    plans |= {("s", "n", "a"): {"steps": "auto", "timeout_s": 60.0}, ("s", "n", "b"): {"steps": 30, "timeout_s": 60.0}}
    found = {d.setting: d for d in setting_differences(base, new, plans)}
    assert set(found) == {"steps", "timeout_s"}
    assert found["steps"].line() == "steps: 30 -> auto (1 config(s))" and found["steps"].timing
    assert found["timeout_s"].line() == "timeout_s: 600.0 -> 60.0 (2 config(s))" and not found["timeout_s"].timing
    new = pd.DataFrame([record("a", "mirrored", 2, [1.0]) | {"suite": "s", "warmup_steps": "auto"}])
    assert [d.line() for d in setting_differences(base, new, {})] == ["warmup_steps: 5 -> auto (1 config(s))"]


def test_machines_differ_by_hardware_not_by_name_or_version():
    from tfscale.analysis.compare import machine_differences

    gpus = {"gpus": [{"name": "NVIDIA H100", "uuid": "GPU-1"}]}
    env = {"host": "ci-1", "cpu_model": "AMD EPYC", "cpu_logical_cores": 2, "memory_total_bytes": 8, "nvml": gpus}
    env |= {"packages": {"tensorflow": "2.21.0"}}
    other = env | {"host": "ci-2", "packages": {"tensorflow": "2.22.0"}, "nvml": {"gpus": [{"name": "NVIDIA H100"}]}}
    assert machine_differences(env, other) == []
    assert machine_differences(env, other | {"cpu_logical_cores": 4, "nvml": {}}) == [
        ("cpu_logical_cores", "2", "4"),
        ("gpus", "NVIDIA H100", "none"),
    ]
    assert machine_differences(env, {}) == []  # a run that kept no environment: nothing to say


def test_configs_match_by_axes_only_where_every_axis_agrees():
    from tfscale.analysis.compare import MATCH_AXES, lost_configs, pairs

    assert {"data", "task", "network_link", "stages", "tensor_parallel", "device"} <= set(MATCH_AXES)
    synthetic = record("a1", "mirrored", 2, [1.0] * 10)  # an older record: no data or task column
    files = record("b1", "mirrored", 2, [1.0] * 10, data="files", task="random")
    twin = record("b2", "mirrored", 2, [1.0] * 10, data="synthetic", task="random")
    base, new = pd.DataFrame([synthetic]), pd.DataFrame([files])
    assert list(pairs(base, new)) == []  # a files config is not its synthetic twin
    [(_, after, how)] = pairs(base, pd.DataFrame([files, twin]))
    assert (after["config_id"], how) == ("b2", "axes")  # the twin with the default values written out is
    teacher = record("t1", "mirrored", 2, [1.0] * 10, task="teacher")
    lost = lost_configs(pd.DataFrame([teacher]), pd.DataFrame([twin]))
    assert [(x.config_id, x.status) for x in lost] == [("t1", "missing")]  # not "found" as its random twin
