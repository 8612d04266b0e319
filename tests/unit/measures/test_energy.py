"""Energy arithmetic on hand-made counter series (exact values), and the RAPL reader on a fake sysfs tree."""

import math

import pytest

from tfscale.measures.energy import cost_per_million_examples, counter_delta, energy_between, joules_per_example
from tfscale.worker.energy import EnergyMeter, read_rapl


def test_counters_count_up_and_wrap_once():
    assert counter_delta(10.0, 25.0) == 15.0
    assert counter_delta(90.0, 5.0, wrap=100.0) == 15.0  # 90 -> 100 -> 0 -> 5
    with pytest.raises(ValueError, match="wrap-around range is not known"):
        counter_delta(90.0, 5.0)
    # two GPUs read at both ends, a third only at the start (lost in between): not counted
    assert energy_between({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 4.0, "b": 2.5}) == 3.5


def test_per_example_and_cost():
    assert joules_per_example(120.0, 2.0, 600.0) == 0.1  # 120 J over 2 s at 600 examples/s
    assert math.isnan(joules_per_example(None, 2.0, 600.0))
    assert math.isnan(joules_per_example(120.0, 2.0, 0.0))
    # 4 devices at 2.5 per hour, 1,000 examples/s: a million examples take 1,000 s
    assert cost_per_million_examples(2.5, 4, 1000.0) == pytest.approx(2.5 * 4 * 1000 / 3600)
    assert math.isnan(cost_per_million_examples(None, 4, 1000.0))


def _zone(root, name, uj, wrap=None):
    zone = root / name
    zone.mkdir(parents=True, exist_ok=True)
    (zone / "energy_uj").write_text(f"{uj}\n")
    if wrap is not None:
        (zone / "max_energy_range_uj").write_text(f"{wrap}\n")


def test_rapl_packages_only_and_the_meter_over_a_wrap(tmp_path):
    _zone(tmp_path, "intel-rapl:0", 262_143_000_000 - 1_000_000, wrap=262_143_000_000)  # 1 J before its wrap
    _zone(tmp_path, "intel-rapl:1", 5_000_000, wrap=262_143_000_000)
    _zone(tmp_path, "intel-rapl:0:0", 7)  # a sub-zone (core): inside package 0 already, not counted again
    values, wraps = read_rapl(tmp_path)
    assert values == {"intel-rapl:0": 262_142.0, "intel-rapl:1": 5.0} and wraps["intel-rapl:1"] == 262_143.0
    meter = EnergyMeter("cpu", single_process=True, gpu_uuids=[], rapl_root=tmp_path)
    meter.start()
    _zone(tmp_path, "intel-rapl:0", 2_000_000, wrap=262_143_000_000)  # wrapped: 1 J + 2 J
    _zone(tmp_path, "intel-rapl:1", 9_500_000, wrap=262_143_000_000)  # 4.5 J
    columns = meter.columns()
    assert columns["energy_j"] == pytest.approx(7.5) and columns["energy_window_s"] > 0
    assert columns["energy_method"].startswith("RAPL package counters of the host")


def test_no_counter_gives_the_reason_not_zero(tmp_path):
    meter = EnergyMeter("cpu", single_process=True, gpu_uuids=[], rapl_root=tmp_path / "none")
    meter.start()
    assert meter.columns() == {"energy_method": f"not measured: no RAPL counters under {tmp_path / 'none'}"}
    cluster = EnergyMeter("cpu", single_process=False, gpu_uuids=[], rapl_root=tmp_path)
    cluster.start()
    assert cluster.columns()["energy_method"].startswith("not measured: RAPL counts the whole host")
