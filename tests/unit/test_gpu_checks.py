"""tests/gpu/checks.py, the GPU validation's verdicts, on records as a GPU run writes them; and its suite covers
every strategy and parallelism mode."""

import importlib.util
import sys
from pathlib import Path

from tfscale import metrics as m
from tfscale.api import plan
from tfscale.axes import STRATEGIES
from tfscale.worker.energy import NVML_METHOD

GPU = Path(__file__).parents[1] / "gpu"
_spec = importlib.util.spec_from_file_location("gpu_checks", GPU / "checks.py")
checks = sys.modules["gpu_checks"] = importlib.util.module_from_spec(_spec)  # dataclasses look their module up
_spec.loader.exec_module(checks)


def record(strategy, devices=2, parallelism="data", nodes=1, **extra):
    return {
        m.CONFIG_ID: "c1",
        m.STATUS: m.STATUS_OK,
        m.STRATEGY: strategy,
        m.PARALLELISM: parallelism,
        m.NODES: nodes,
        m.DEVICES_PER_NODE: devices // nodes,
        m.DEVICES: devices,
        m.MEMORY_KIND: m.MEMORY_KIND_ALLOCATOR_PEAK,
        m.PEAK_MEMORY_DEVICE: "GPU:0",
        m.PEAK_MEMORY_BYTES: 3 * 2**20,
        m.ENERGY_J: 120.0,
        m.ENERGY_WINDOW_S: 0.5,
        m.ENERGY_METHOD: NVML_METHOD,
    } | extra


NCCL_LOG = "vm:1:2 [0] NCCL INFO Bootstrap : Using eth0\nvm:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2\n"


def lines(record, log=""):
    return [c.line() for c in checks.check_record(record, log)]


def test_a_mirrored_config_on_nccl_with_allocator_peak_and_energy_passes():
    assert lines(record("mirrored"), NCCL_LOG) == [
        "PASS  nccl            mirrored data 1x2: Mirrored's NcclAllReduce: 2 'NCCL INFO' lines in its logs",
        "PASS  allocator peak  mirrored data 1x2: 3.0 MiB on GPU:0",
        "PASS  energy          mirrored data 1x2: 120.0 J over 0.50 s (240 W)",
    ]


def test_dtensor_without_nccl_lines_and_mwms_on_ring_fail():
    tensor = lines(record("mirrored", parallelism="tensor"))
    assert tensor[0] == (
        "FAIL  nccl            mirrored tensor 1x2: DTensor's collectives: no 'NCCL INFO' line in its logs "
        "(NCCL never started)"
    )
    mwms = record("multi_worker_mirrored", nodes=2, **{m.COLLECTIVE_IMPLEMENTATION: "RING"})
    assert lines(mwms, NCCL_LOG)[0] == (
        "FAIL  nccl            multi_worker_mirrored data 2x1: collective_implementation 'RING', not 'NCCL'"
    )


def test_a_process_peak_missing_energy_and_a_failed_config_fail():
    rss = record("one_device", devices=1, **{m.MEMORY_KIND: m.MEMORY_KIND_PROCESS_RSS, m.PEAK_MEMORY_DEVICE: "process"})
    rss[m.ENERGY_J], rss[m.ENERGY_METHOD] = None, "not measured: this rank has no GPU"
    assert lines(rss) == [
        "SKIP  nccl            one_device data 1x1: no collective that runs on NCCL",
        "FAIL  allocator peak  one_device data 1x1: memory_kind 'process_peak_rss', device 'process', 3145728 bytes",
        "FAIL  energy          one_device data 1x1: energy_j None: not measured: this rank has no GPU",
    ]
    failed = record("central_storage", **{m.STATUS: m.STATUS_FAILED, m.REASON: "worker-0: OOM"})
    assert lines(failed) == ["FAIL  ok              central_storage data 1x2: failed: worker-0: OOM"]


def test_the_ps_chief_s_process_peak_is_not_a_failure():
    ps = record("parameter_server", nodes=2, **{m.MEMORY_KIND: m.MEMORY_KIND_PROCESS_RSS})
    assert lines(ps)[1] == (
        "SKIP  allocator peak  parameter_server data 2x1: the chief computes on no GPU: its process peak is recorded"
    )


def test_the_validation_suite_runs_every_strategy_and_mode_once():
    specs = plan(str(GPU / "validate.yaml")).specs
    assert {s.strategy for s in specs} == set(STRATEGIES) | {None}  # pipelines run without a strategy
    assert {s.parallelism for s in specs} == {"data", "pipeline", "tensor", "hybrid"}
    assert all(s.device == "gpu" and s.nodes * s.devices_per_node <= 2 for s in specs)
