import pytest

from tfscale.errors import TfscaleError
from tfscale.runner.commbench import format_sweep, merge_sweeps, sizes_between, topology, topology_spec
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite


def rank(times):
    return {"replicas": 4, "method": "m", "rows": [{"size_bytes": s, "time_s": t} for s, t in times]}


def test_merge_takes_the_slowest_rank_per_size_and_fits():
    sweep = merge_sweeps(
        [rank([(1024, 1e-4), (2048, 3e-4)]), rank([(1024, 2e-4), (2048, 2e-4)])], {"strategy": "multi_worker_mirrored"}
    )
    assert [(r.size_bytes, r.time_s) for r in sweep.rows] == [(1024, 2e-4), (2048, 3e-4)]
    assert sweep.rows[1].algbw_bytes_per_s == pytest.approx(2048 / 3e-4)
    assert sweep.rows[1].busbw_bytes_per_s == pytest.approx(2048 / 3e-4 * 1.5)
    # two points: the line through them, in x = S * 2(n-1)/n
    assert sweep.fit.beta_s_per_byte == pytest.approx(1e-4 / (1024 * 1.5))
    assert sweep.fit.predict(1024) == pytest.approx(2e-4)
    assert sweep.method == "m; slowest of 2 ranks per size"


def test_format_sweep_is_an_nccl_tests_like_table():
    sweep = merge_sweeps(
        [rank([(1024, 1e-4), (2048, 3e-4)])],
        {"strategy": "mirrored", "nodes": 1, "devices_per_node": 4, "device": "cpu"},
    )
    lines = format_sweep(sweep).splitlines()
    assert lines[0] == "# all-reduce (sum, float32) on mirrored: 4 replicas, 1 node(s) x 4 cpu device(s)"
    assert lines[1].split() == ["#", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)"]
    assert lines[2].split() == ["1024", "100.0", "0.010", "0.015"]
    assert lines[-1].startswith("# fit T(S) = alpha + beta*S*2(n-1)/n: alpha = ")


def test_topologies():
    specs = expand(
        parse_suite(
            "name: t\nmatrix:\n  strategy: [one_device, mirrored, parameter_server]\n"
            "include: [{strategy: mirrored, devices_per_node: 2}]\n",
            "t",
        )
    ).specs
    assert [topology(s) for s in specs[:3]] == [None, None, None]  # one replica each, and PS
    assert topology(specs[3]) == {
        "device": "cpu",
        "strategy": "mirrored",
        "nodes": 1,
        "devices_per_node": 2,
        "cross_device_ops": None,
        "collective": None,
        "bytes_per_pack": None,
        "network_link": None,
    }


def test_topology_spec_applies_the_plan_checks():
    assert topology_spec("cpu", "mirrored", 1, 4).replicas == 4
    assert topology_spec("cpu", "multi_worker_mirrored", 2, 1, network_link="1gbit").network_link == "1gbit"
    with pytest.raises(TfscaleError, match="--link simulates the links between nodes"):
        topology_spec("cpu", "mirrored", 1, 2, network_link="1gbit")
    with pytest.raises(TfscaleError, match="has no all-reduce"):
        topology_spec("cpu", "one_device", 1, 1)
    with pytest.raises(TfscaleError, match="cross_device_ops=nccl has no CPU kernel"):
        topology_spec("cpu", "mirrored", 1, 2, cross_device_ops="nccl")
    with pytest.raises(TfscaleError, match="fewer than two"):
        sizes_between(1024, 1024)


def test_suite_option():
    suite = parse_suite("name: t\nmatrix: {model: [mlp]}\ncommbench: true\n", "t")
    assert (suite.commbench.min_bytes, suite.commbench.max_bytes, suite.commbench.iters) == (1024, 64 << 20, 10)
    assert (
        parse_suite("name: t\nmatrix: {model: [mlp]}\ncommbench: {max_bytes: 4096}\n", "t").commbench.max_bytes == 4096
    )
    assert parse_suite("name: t\nmatrix: {model: [mlp]}\n", "t").commbench is None
