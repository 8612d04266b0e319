"""Peak FLOP/s per device (the denominator of MFU) and MFU itself: exact values."""

import math

import pandas as pd
import pytest

from tfscale import metrics as m
from tfscale.analysis import add_scaling
from tfscale.measures.peaks import (
    NOT_HERE,
    SUITE_METHOD,
    TERA,
    cpu_request,
    devices_on_host,
    gpu_model,
    gpu_peak,
    peak_columns,
)
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

ENV = {
    "peak_flops_per_s": {
        "total": {"float32": {"1": 190e9, "2": 200e9}, "bfloat16": {"1": 360e9}},  # host: the best total
        "method": "matmul microbenchmark",
    },
    "nvml": {"available": True, "gpus": [{"name": "NVIDIA H100 80GB HBM3"}]},
}


@pytest.mark.parametrize(
    ("name", "precision", "flops", "compute"),
    [
        ("NVIDIA H100 80GB HBM3", "float32", 494.5 * TERA, "TF32"),  # TF enables TF32 for float32 matmuls
        ("NVIDIA H100 80GB HBM3", "mixed_bfloat16", 989.5 * TERA, "BF16"),
        ("NVIDIA H100 PCIe", "mixed_float16", 756 * TERA, "FP16"),
        ("NVIDIA H200", "mixed_bfloat16", 989.5 * TERA, "BF16"),
        ("NVIDIA A100-SXM4-80GB", "float32", 156 * TERA, "TF32"),
        ("NVIDIA A10", "float32", 62.5 * TERA, "TF32"),  # not the A100's row
        ("Tesla V100-SXM2-16GB", "mixed_bfloat16", 15.7 * TERA, "FP32"),  # no BF16 tensor cores
        ("Tesla T4", "mixed_float16", 65 * TERA, "FP16"),
        ("NVIDIA L4", "float32", 60 * TERA, "TF32"),
        ("NVIDIA A100 80GB PCIe", "mixed_bfloat16", 312 * TERA, "BF16"),
        ("Tesla V100-PCIE-32GB", "mixed_float16", 112 * TERA, "FP16"),  # not the SXM2 row
    ],
)
def test_gpu_peaks_from_the_datasheet_table(name, precision, flops, compute):
    value, method = gpu_peak(name, precision)
    assert value == flops and f"in {compute} (dense)" in method


@pytest.mark.parametrize(
    "name",
    # a substring match took the L4's peak for an L40/L40S (MFU ~3x too high), the A100's for an RTX A1000 and the
    # SXM part's for the H100/H200 NVL (lower clocks and power)
    [
        "NVIDIA L40S",
        "NVIDIA L40",
        "NVIDIA RTX A1000",
        "NVIDIA H100 NVL",
        "NVIDIA H200 NVL",
        "NVIDIA A10G",
        "",
        "NVIDIA",
    ],
)
def test_gpus_not_in_the_table_by_model_and_variant_have_no_peak(name):
    assert gpu_peak(name, "float32") is None


def test_gpu_model_reads_the_model_word_and_variant():
    assert gpu_model("NVIDIA H100 80GB HBM3") == ("H100", "")
    assert gpu_model("NVIDIA H100 PCIe") == ("H100", "pcie")
    assert gpu_model("Tesla V100-SXM2-16GB") == ("V100", "")
    assert gpu_model("NVIDIA Tesla T4") == ("T4", "")
    assert gpu_peak("NVIDIA H100 PCIe", "float32")[1] == (
        "datasheet peak of H100 PCIe in TF32 (dense), tfscale.measures.peaks"
    )


def test_gpu_peak_is_the_config_s_gpus_not_the_host_s_first():
    env = {
        "nvml": {"gpus": [{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-a"}, {"name": "NVIDIA L4", "uuid": "GPU-b"}]}
    }
    assert peak_columns("gpu", "float32", 1, env, gpu_uuids=["GPU-b"])[0] == 60 * TERA
    assert peak_columns("gpu", "float32", 1, env, gpu_uuids=["GPU-a"])[0] == 494.5 * TERA
    assert peak_columns("gpu", "float32", 2, env) == (
        None,
        "not known: the config's GPUs are of different models (NVIDIA H100 80GB HBM3, NVIDIA L4)",
    )
    assert peak_columns("gpu", "float32", 1, env, gpu_uuids=["GPU-z"]) == (
        None,
        "not known: NVML on this host listed none of the config's GPUs",
    )


def test_peak_columns_say_where_the_figure_comes_from_or_why_there_is_none():
    assert peak_columns("cpu", "float32", 2, ENV) == (100e9, "matmul microbenchmark")
    assert peak_columns("cpu", "mixed_bfloat16", 1, ENV) == (360e9, "matmul microbenchmark")
    assert peak_columns("cpu", "float32", 4, ENV) == (50e9, "matmul microbenchmark")  # 4 devices share 200e9
    assert peak_columns("cpu", "mixed_float16", 1, ENV) == (
        None,
        "not measured: the run's env.json has no CPU peak for this precision",
    )
    assert peak_columns("cpu", "float32", 1, {"peak_flops_per_s": {"error": "worker peak timed out"}}) == (
        None,
        "not measured: worker peak timed out",
    )
    assert peak_columns("gpu", "float32", 8, ENV)[0] == 494.5 * TERA
    assert peak_columns("gpu", "float32", 8, {**ENV, "nvml": {"gpus": [{"name": "Radeon"}]}}) == (
        None,
        "not known: Radeon is not in tfscale.measures.peaks' table; give peak_flops_per_s in the suite",
    )
    assert peak_columns("gpu", "float32", 8, {}) == (None, "not known: NVML listed no GPU on this host")
    assert peak_columns("gpu", "float32", 8, {}, override=1e15) == (1e15, SUITE_METHOD)


def test_cpu_sweeps_ask_for_the_counts_that_share_one_host():
    plan = expand(
        parse_suite(
            "name: p\ndefaults: {strategy: mirrored}\n"
            "matrix: {devices_per_node: [1, 2], precision: [float32, mixed_bfloat16]}\n"
            "include: [{strategy: multi_worker_mirrored, nodes: 2}, {devices_per_node: 4, peak_flops_per_s: 1.0e+9}]\n",
            "p.yaml",
        )
    )
    # local: the 2 MWMS workers share this host's cores (2 devices); the config with its own peak asks nothing
    assert cpu_request(plan.specs, "local") == ([1, 2], ["bfloat16", "float32"])
    assert cpu_request(plan.specs, "slurm") == ([], [])  # its configs run on other hosts than this one
    assert peak_columns("cpu", "float32", 2, ENV, launcher="slurm") == (None, NOT_HERE)
    assert peak_columns("gpu", "float32", 8, ENV, launcher="slurm") == (None, NOT_HERE)
    assert peak_columns("cpu", "float32", 2, ENV, override=5e9, launcher="slurm") == (5e9, SUITE_METHOD)
    assert devices_on_host(4, 2, "local") == 4 and devices_on_host(4, 2, "slurm") == 2


def test_mfu_is_achieved_over_devices_times_peak():
    frame = pd.DataFrame(
        [
            {m.CONFIG_ID: "a", m.FLOPS_PER_STEP: 6e9, m.GLOBAL_BATCH_SIZE: 64, m.THROUGHPUT_EXAMPLES_PER_S: 1000.0,
             m.PEAK_FLOPS_PER_S: 100e9, m.DEVICES: 2},
            {m.CONFIG_ID: "b", m.FLOPS_PER_STEP: None, m.GLOBAL_BATCH_SIZE: 64, m.THROUGHPUT_EXAMPLES_PER_S: 1000.0,
             m.PEAK_FLOPS_PER_S: 100e9, m.DEVICES: 2},
        ]
    )  # fmt: skip
    from tfscale.analysis import achieved_flops

    achieved = achieved_flops(frame)
    assert achieved[0] == 6e9 / 64 * 1000 and math.isnan(achieved[1])  # empty, not 0


def test_add_scaling_gives_mfu_on_real_records():
    from pathlib import Path

    from tfscale.store.records import load_results

    frame = add_scaling(load_results(Path(__file__).resolve().parents[2] / "data" / "quickstart-run"))
    # records from before the FLOPs columns: achieved and MFU are empty, never 0
    assert frame[m.ACHIEVED_FLOPS_PER_S].isna().all() and frame[m.MFU].isna().all()
