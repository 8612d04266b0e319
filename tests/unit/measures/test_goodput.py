"""The noise-scale estimator, its CI, statistical efficiency and goodput (tfscale.measures.goodput), with exact values;
the analysis' goodput columns; the planner's grad_noise and task rules."""

import math

import numpy as np
import pandas as pd
import pytest

from tfscale import metrics as m
from tfscale.analysis import add_scaling, critical_batches
from tfscale.axes import GRAD_NOISE_EVERY
from tfscale.errors import SuiteError
from tfscale.measures.goodput import (
    MIN_CI_WINDOWS,
    Goodput,
    NoiseScale,
    ProbeSchedule,
    fieller,
    statistical_efficiency,
    step_estimates,
)
from tfscale.stats.core import t_975
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite


def test_step_estimates_are_mccandlish_s_two_batch_formulas():
    # |G|^2 = 4, tr(Sigma) = 64: E|G_b|^2 = 4 + 64/8 = 12 at b = 8, E|G_B|^2 = 4 + 64/32 = 6 at B = 32
    grad_sq, trace = step_estimates(12.0, 6.0, 8, 32)
    assert grad_sq == pytest.approx(4.0)
    assert trace == pytest.approx(64.0)
    with pytest.raises(ValueError):
        step_estimates(1.0, 1.0, 8, 8)


def test_the_noise_scale_is_the_ratio_of_sums_with_fieller_s_ci():
    scale = NoiseScale.of([4.0] * 8, [60.0, 68.0, 64.0, 64.0] * 2)
    assert scale.value == 16.0  # 512 / 32
    assert scale.windows == 8 and scale.note == ""
    # |G|^2 does not vary: Fieller's set is 16 +- t_975(7) x sd(tr) / sqrt(8) / 4, sd^2 = 64 / 7
    half = t_975(7) * math.sqrt(64 / 7 / 8) / 4
    assert (scale.low, scale.high) == (pytest.approx(16 - half, rel=1e-12), pytest.approx(16 + half, rel=1e-12))
    assert type(scale.low) is float and type(scale.high) is float  # what a record stores as JSON


def test_fieller_s_interval_by_its_quadratic():
    g, t = np.array([3.0, 2.5, 0.4, 1.2, 1.1, 0.3, 0.5, 0.6]), np.array([100.0, 50, 80, 20, 10, 30, 40, 60])
    low, high = fieller(t, g)
    q = t_975(7) ** 2
    for r in (low, high):  # each end solves (mean t - r mean g)^2 = q Var(mean t - r mean g)
        var = (np.var(t, ddof=1) - 2 * r * np.cov(t, g, ddof=1)[0, 1] + r * r * np.var(g, ddof=1)) / 8
        assert (t.mean() - r * g.mean()) ** 2 == pytest.approx(q * var, rel=1e-9)
    assert low < t.sum() / g.sum() < high


def test_every_noise_scale_fits_where_grad_sq_and_trace_are_both_noise():
    scale = NoiseScale.of([1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -0.9], [5.0, -5.0, 4.0, -4.0, 3.0, -3.0, 2.0, -1.0])
    assert (scale.low, scale.high) == (None, None)
    assert scale.note == "no CI: |G|^2 is not resolved from 0 (every noise scale fits)"


def test_the_noise_scale_has_no_ci_below_8_windows():
    assert MIN_CI_WINDOWS == 8
    assert NoiseScale.of([4.0] * 7, [64.0] * 7) == NoiseScale(
        16.0, None, None, 7, "no CI: 7 window(s) held a probed step, a CI needs 8"
    )


def test_a_noise_scale_whose_summed_grad_sq_is_not_positive_is_not_measured():
    # the case seen in an e2e run: |G|^2 summed < 0 gave a "noise scale" of -30,126 below its own CI (-15,111)
    for grad_sq in ([-1.0, 0.5], [1.0, -1.0], []):
        scale = NoiseScale.of(grad_sq, [30.0, 40.0][: len(grad_sq)])
        assert (scale.value, scale.low, scale.high) == (None, None, None)
        assert scale.note.startswith("not measured: the |G|^2 estimate summed over the probed steps is <= 0")


def test_an_unresolved_grad_sq_leaves_the_upper_end_unbounded():
    # |G|^2 summed is positive (325 = 390 / 1.2) but not resolved from 0: the set is the ray above its lower end
    scale = NoiseScale.of([3, -2.5, -0.4, 0.2, 0.1, -0.3, 0.5, 0.6], [100, 50, 80, 20, 10, 30, 40, 60])
    assert scale.value == pytest.approx(325.0)
    assert scale.low is not None and scale.low < scale.value and scale.high is None
    assert scale.note == "the CI's upper end is unbounded: |G|^2 is not resolved from 0"


def test_the_probe_runs_in_one_step_of_every_n_counted_over_all_steps():
    schedule = ProbeSchedule(4)
    assert [schedule.probe_now() for _ in range(10)] == [True, False, False, False] * 2 + [True, False]
    every_step = ProbeSchedule(1)
    assert all(every_step.probe_now() for _ in range(5))
    with pytest.raises(ValueError, match="grad_noise_every must be at least 1"):
        ProbeSchedule(0)


def test_statistical_efficiency():
    assert statistical_efficiency(100.0, 32, 32) == 1.0
    assert statistical_efficiency(100.0, 64, 32) == pytest.approx(132 / 164)
    assert statistical_efficiency(0.0, 64, 32) == 0.5  # no noise: a double batch teaches half as much per example
    assert statistical_efficiency(1e12, 64, 32) == pytest.approx(1.0)
    assert statistical_efficiency(math.inf, 64, 32) == 1.0


def test_goodput_and_its_ci():
    result = Goodput.of(NoiseScale(100.0, 50.0, 200.0, 10), 64, 32, 1000.0, 900.0, 1100.0)
    assert result.efficiency == pytest.approx(132 / 164)
    assert result.efficiency_low == pytest.approx(82 / 114)
    assert result.efficiency_high == pytest.approx(232 / 264)
    assert result.goodput == pytest.approx(1000 * 132 / 164)
    assert result.goodput_low == pytest.approx(900 * 82 / 114)
    assert result.goodput_high == pytest.approx(1100 * 232 / 264)
    negative = Goodput.of(NoiseScale(-5.0, -20.0, 10.0, 10), 64, 32, 1000.0)
    assert negative.efficiency == 0.5 and negative.efficiency_low == 0.5  # a negative noise scale counts as 0
    assert negative.goodput_low is None  # no throughput CI given
    unbounded = Goodput.of(NoiseScale(100.0, 50.0, None, 10), 64, 32, 1000.0, 900.0, 1100.0)
    assert unbounded.efficiency_low == pytest.approx(82 / 114)
    assert unbounded.efficiency_high == 1.0  # an infinite noise scale: a bigger batch costs nothing
    assert unbounded.goodput_high == pytest.approx(1100.0)
    no_ci = Goodput.of(NoiseScale(100.0, None, None, 5), 64, 32, 1000.0, 900.0, 1100.0)
    assert (no_ci.efficiency_low, no_ci.goodput_low, no_ci.goodput_high) == (None, None, None)


def row(cid, strategy, devices, step, noise=None, task="teacher"):
    return {
        m.CONFIG_ID: cid,
        m.RUN_ID: "r",
        m.STATUS: m.STATUS_OK,
        m.DEVICE: "cpu",
        m.MODEL: "mlp",
        m.MODEL_SIZE: "tiny",
        m.STRATEGY: strategy,
        m.NODES: 1,
        m.DEVICES_PER_NODE: devices,
        m.DEVICES: devices,
        m.REPLICAS: devices,
        m.BATCH_SIZE: 32,
        m.BATCH_POLICY: "weak",
        m.GLOBAL_BATCH_SIZE: 32 * devices,
        m.PRECISION: "float32",
        m.JIT: False,
        m.OPTIMIZER: "sgd",
        m.TASK: task,
        m.DATA: "synthetic",
        m.STEP_TIME_MEDIAN_S: step,
        m.STEP_TIME_MAD_S: step / 100,
        m.STEP_TIME_CI95_LOW_S: step * 0.9,
        m.STEP_TIME_CI95_HIGH_S: step * 1.1,
        m.THROUGHPUT_EXAMPLES_PER_S: 32 * devices / step,
        m.GRAD_NOISE_SCALE: noise,
        m.GRAD_NOISE_SCALE_CI95_LOW: None if noise is None else noise / 2,
        m.GRAD_NOISE_SCALE_CI95_HIGH: None if noise is None else noise * 2,
    }


def test_the_analysis_adds_goodput_to_teacher_configs_only():
    frame = add_scaling(
        pd.DataFrame(
            [
                row("a", "one_device", 1, 0.010),
                row("b", "mirrored", 2, 0.010, noise=32.0),
                row("c", "mirrored", 4, 0.010, noise=96.0),
                row("d", "mirrored", 2, 0.010, task="random"),
                {**row("e", "mirrored", 8, 0.010, noise=64.0), m.GRAD_NOISE_SCALE_CI95_HIGH: None},
            ]
        )
    ).set_index(m.CONFIG_ID)
    # a: no own estimate, the workload's median (64) is used; its batch is the baseline's: efficiency 1
    assert frame.loc["a", m.NOISE_SCALE_USED] == 64.0
    assert frame.loc["a", m.STATISTICAL_EFFICIENCY] == 1.0 and frame.loc[
        "a", m.GOODPUT_EXAMPLES_PER_S
    ] == pytest.approx(3200)
    # b: own 32, batch 64 vs 32: (32 + 32) / (32 + 64)
    assert frame.loc["b", m.STATISTICAL_EFFICIENCY] == pytest.approx(64 / 96)
    assert frame.loc["b", m.GOODPUT_EXAMPLES_PER_S] == pytest.approx(6400 * 64 / 96)
    assert frame.loc["b", m.GOODPUT_SCALING_EFFICIENCY] == pytest.approx(6400 * 64 / 96 / (2 * 3200))
    assert frame.loc["b", m.STATISTICAL_EFFICIENCY_CI95_LOW] == pytest.approx(48 / 80)  # at B_noise 16
    assert frame.loc["c", m.STATISTICAL_EFFICIENCY] == pytest.approx(128 / 224)
    assert math.isnan(frame.loc["d", m.GOODPUT_EXAMPLES_PER_S])  # random targets: no goodput
    # e: the noise scale's upper end unbounded (low 32, high empty): the efficiency's reaches 1
    assert frame.loc["e", m.STATISTICAL_EFFICIENCY] == pytest.approx(96 / 320)
    assert frame.loc["e", m.STATISTICAL_EFFICIENCY_CI95_LOW] == pytest.approx(64 / 288)
    assert frame.loc["e", m.STATISTICAL_EFFICIENCY_CI95_HIGH] == 1.0
    assert critical_batches(frame.reset_index()) == [
        "mlp/tiny, batch 32: about 64 examples (32 to 96), from 3 config(s); global batches above it buy little "
        "convergence per example"
    ]


def plan_of(text):
    return expand(parse_suite(text, "s.yaml")).specs


def test_grad_noise_is_on_for_teacher_configs_that_can_measure_it():
    specs = plan_of(
        "name: p\ndefaults: {task: teacher}\ninclude: [{strategy: one_device}, {strategy: mirrored, devices_per_node: "
        "2}, {strategy: parameter_server, nodes: 2}, {strategy: mirrored, devices_per_node: 2, task: random}]\n"
    )
    assert [s.grad_noise for s in specs] == [False, True, False, False]
    assert specs[1].grad_noise_every == GRAD_NOISE_EVERY == 8
    [every] = plan_of("name: p\ninclude: [{strategy: mirrored, devices_per_node: 2, grad_noise_every: 1}]\n")
    assert every.grad_noise_every == 1
    with pytest.raises(SuiteError) as info:
        plan_of("name: p\ninclude: [{strategy: mirrored, devices_per_node: 2, grad_noise_every: 0}]\n")
    assert "grad_noise_every" in str(info.value)
    [random] = plan_of("name: p\ninclude: [{strategy: mirrored, devices_per_node: 2}]\n")
    assert random.task == "random" and random.config_id == "e0debba25ed7"  # ids from before the task axis
    [halves] = plan_of("name: p\ninclude: [{strategy: one_device, grad_noise: true, task: teacher}]\n")
    assert halves.grad_noise  # one replica: asked for, read from its batch's two halves
    with pytest.raises(SuiteError) as info:
        plan_of("name: p\ninclude: [{strategy: one_device, grad_noise: true, batch_size: 33}]\n")
    assert "two halves: give an even batch_size" in str(info.value)
    with pytest.raises(SuiteError) as info:
        plan_of("name: p\ninclude: [{model: mlp, parallelism: pipeline, devices_per_node: 2, task: teacher}]\n")
    assert "task: teacher needs data parallelism" in str(info.value)
