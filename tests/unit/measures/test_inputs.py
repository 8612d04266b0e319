"""The input wait, the input-bound rule and the record's input columns (tfscale.measures.inputs), with exact values;
how a pipeline is labelled; the input section's comparison and hints (tfscale.analysis); the merge of a cluster's input
figures; the loss breakdown's input term."""

import math

import pandas as pd
import pytest

from tfscale import metrics as m
from tfscale.analysis import add_scaling, input_comparison, input_hints, input_wait, loss_breakdown
from tfscale.labels import data_label
from tfscale.measures.inputs import INPUT_BOUND_SHARE, InputWait, input_columns
from tfscale.measures.merge import merge_rank_parts

# 11 windows each: medians 10 ms (step) and 7 ms (in memory)
STEP = [0.010 + 0.0001 * k for k in range(-5, 6)]
MEMORY = [0.007 + 0.0001 * k for k in range(-5, 6)]


def test_the_wait_is_the_difference_of_the_medians_with_its_bootstrap_ci():
    wait = InputWait.of(STEP, MEMORY)
    assert wait.wait_s == pytest.approx(0.003)
    assert wait.step_s == pytest.approx(0.010)
    assert wait.fraction == pytest.approx(0.3)
    assert wait.low_s < 0.003 < wait.high_s
    assert wait.low_s > 0.002 and wait.high_s < 0.004  # the windows spread +-0.5 ms: so does the difference
    assert wait.bound
    assert wait.note().startswith("input-bound: waits 3.0")
    assert "(30 %; threshold 10 %)" in wait.note()


def test_the_rule_needs_more_than_the_share_and_a_ci_above_zero():
    assert INPUT_BOUND_SHARE == 0.10
    small = InputWait(0.001, 0.0005, 0.0015, 0.010)  # exactly 10 %: not more than the share
    assert not small.bound and ": at most 10 % of the step" in small.note()
    noisy = InputWait(0.004, -0.0001, 0.008, 0.010)  # 40 %, but its CI reaches below 0
    assert not noisy.bound and ": the wait is within noise" in noisy.note()
    slower = InputWait(-0.002, -0.003, -0.001, 0.010)
    assert not slower.bound and "not measurable" in slower.note()
    no_ci = InputWait(0.005, None, None, 0.010)
    assert not no_ci.bound
    assert InputWait(0.0011, 0.0001, 0.002, 0.010).bound


def test_input_columns():
    columns = input_columns(STEP, MEMORY, 3000.0, 1500.0, window=4)
    assert columns[m.INPUT_HEADROOM] == 2.0
    assert columns[m.INPUT_THROUGHPUT_EXAMPLES_PER_S] == 3000.0
    assert columns[m.INPUT_MEMORY_TIMES_S] == MEMORY
    assert columns[m.INPUT_WAIT_TIME_S] == pytest.approx(0.003)
    assert columns[m.INPUT_BOUND] is True
    assert "11 windows of 4 step(s)" in columns[m.INPUT_WAIT_METHOD]
    assert input_columns(STEP, MEMORY, None, 1500.0, 4)[m.INPUT_HEADROOM] is None


def test_data_label_names_the_pipeline_settings_that_differ_from_their_defaults():
    assert data_label({"data": "synthetic"}) == ""
    assert data_label({}) == ""
    defaults = {"data": "files", "data_examples": 4096, "data_parallel_calls": "auto", "cache": False}
    assert data_label(defaults) == "files"
    changed = defaults | {"cache": True, "data_parallel_calls": 4, "shuffle_buffer": float("nan")}
    assert data_label(changed) == "files (data_parallel_calls=4, cache)"


def row(cid, data, devices, step, run="r", **axes):
    strategy = "one_device" if devices == 1 else "mirrored"
    return {
        m.CONFIG_ID: cid,
        m.RUN_ID: run,
        m.STATUS: m.STATUS_OK,
        m.DEVICE: "cpu",
        m.MODEL: "mlp",
        m.MODEL_SIZE: "tiny",
        m.STRATEGY: strategy,
        m.NODES: 1,
        m.DEVICES_PER_NODE: devices,
        m.DEVICES: devices,
        m.REPLICAS: devices,
        m.BATCH_SIZE: 10,
        m.BATCH_POLICY: "weak",
        m.GLOBAL_BATCH_SIZE: 10 * devices,
        m.PRECISION: "float32",
        m.JIT: False,
        m.OPTIMIZER: "sgd",
        m.PARALLELISM: "data",
        m.DATA: data,
        m.STEP_TIME_MEDIAN_S: step,
        m.STEP_TIME_MAD_S: step / 100,
        m.STEP_TIME_CI95_LOW_S: step * 0.98,
        m.STEP_TIME_CI95_HIGH_S: step * 1.02,
        m.THROUGHPUT_EXAMPLES_PER_S: 10 * devices / step,
        **axes,
    }


def test_files_configs_sit_beside_their_synthetic_twins():
    frame = add_scaling(
        pd.DataFrame(
            [
                row("s1", "synthetic", 1, 0.010),
                row("s2", "synthetic", 2, 0.0125),
                row("f1", "files", 1, 0.020, **{m.INPUT_BOUND: True, m.INPUT_HEADROOM: 0.5}),
                row("f2", "files", 2, 0.040),
            ]
        )
    )
    rows = input_comparison(frame).set_index(m.CONFIG_ID)
    assert list(rows.index) == ["f1", "f2"]
    assert rows.loc["f1", m.FILES_VS_SYNTHETIC] == pytest.approx(0.5)  # 500 vs 1000 examples/s
    assert rows.loc["f2", m.SYNTHETIC_THROUGHPUT_EXAMPLES_PER_S] == pytest.approx(1600)
    assert rows.loc["f2", m.SCALING_EFFICIENCY] == pytest.approx(0.5)  # against f1, the files baseline
    assert rows.loc["f2", m.SYNTHETIC_SCALING_EFFICIENCY] == pytest.approx(0.8)  # against s1
    assert bool(rows.loc["f1", m.INPUT_BOUND]) and rows.loc["f1", "pipeline"] == "files"
    assert input_comparison(frame.drop(columns=[m.DATA])).empty


def test_a_hint_names_the_setting_that_helped_and_says_when_it_is_within_noise():
    frame = pd.DataFrame(
        [
            row("a", "files", 1, 0.020, data_parallel_calls=1),
            row("b", "files", 1, 0.010, data_parallel_calls=4),
            row("c", "files", 2, 0.0100, cache=False),
            row("d", "files", 2, 0.0101, cache=True),
        ]
    )
    assert input_hints(frame) == [
        "mlp/tiny one_device x1: data_parallel_calls=4 helped: 1,000 examples/s, 2.00x data_parallel_calls=1 (500)",
        "mlp/tiny mirrored x2: cache=False is within noise (the median steps' 95 % CIs overlap): 2,000 examples/s, "
        "1.01x cache=True (1,980)",
    ]


def test_the_breakdown_counts_the_wait_beyond_the_baseline_s_share():
    waits = {m.INPUT_WAIT_TIME_S: 0.004, m.INPUT_WAIT_TIME_CI95_LOW_S: 0.003}
    frame = add_scaling(
        pd.DataFrame(
            [
                row("f1", "files", 1, 0.010, **{m.INPUT_WAIT_TIME_S: 0.001, m.INPUT_WAIT_TIME_CI95_LOW_S: 0.0005}),
                row("f2", "files", 2, 0.020, **waits),
            ]
        )
    )
    [breakdown] = loss_breakdown(frame).to_dict("records")
    assert breakdown[m.GAP_S] == pytest.approx(0.010)  # weak: ideal = T1
    assert breakdown[m.INPUT_WAIT_S] == pytest.approx(0.003)  # 4 ms - the baseline's 1 ms
    # communication not measured: empty, with the reason, and left in the rest
    assert math.isnan(breakdown[m.COMM_EXPOSED_S]) and breakdown[m.COMM_EXPOSED_NOTE].startswith("not measured")
    terms = (m.STRAGGLER_WAIT_S, m.INPUT_WAIT_S, m.COMPUTE_GROWTH_S, m.REST_S)
    total = sum(breakdown[t] for t in terms)
    assert total == pytest.approx(breakdown[m.GAP_S], abs=1e-15)
    within_noise = pd.Series({m.INPUT_WAIT_TIME_S: 0.004, m.INPUT_WAIT_TIME_CI95_LOW_S: -0.001})
    assert input_wait(within_noise) == 0.0
    assert input_wait(pd.Series({m.DATA: "synthetic"})) == 0.0


def part(samples, memory, rate, generated):
    return {
        m.STEP_TIMES_S: samples,
        m.STEP_TIME_MEDIAN_S: sorted(samples)[len(samples) // 2],
        m.REPLICAS: 2,
        m.PEAK_MEMORY_BYTES: 1,
        m.HOST_RSS_PEAK_BYTES: 1,
        m.FIRST_STEP_S: 1.0,
        m.TIMING: "t",
        m.CI_TARGET: 0.02,
        m.WINDOW_STEPS: 2,
        m.DATA_GENERATION_S: generated,
        m.INPUT_MEMORY_TIMES_S: memory,
        m.INPUT_THROUGHPUT_EXAMPLES_PER_S: rate,
    }


def test_a_cluster_s_input_figures_merge_window_by_window_and_sum_the_pipelines():
    merged = merge_rank_parts(
        [part([0.010, 0.012, 0.011], [0.007, 0.006, 0.008], 1000.0, 0.0),
         part([0.011, 0.010, 0.013], [0.006, 0.009, 0.007], 500.0, 2.5)],
        global_batch=20,
    )  # fmt: skip
    assert merged[m.INPUT_MEMORY_TIMES_S] == [0.007, 0.009, 0.008]
    assert merged[m.INPUT_WAIT_TIME_S] == pytest.approx(0.012 - 0.008)
    assert merged[m.INPUT_THROUGHPUT_EXAMPLES_PER_S] == 1500.0
    assert merged[m.INPUT_HEADROOM] == pytest.approx(1500.0 / merged[m.THROUGHPUT_EXAMPLES_PER_S])
    assert merged[m.DATA_GENERATION_S] == 2.5  # the rank that wrote the files
    assert "merged over 2 ranks" in merged[m.INPUT_WAIT_METHOD]
