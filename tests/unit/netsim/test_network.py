"""Pure parts of simulated hosts: rates, names, commands, stale detection, suite sugar and plan handling."""

import pytest

from tfscale.contract import Task, cluster_tasks, node_of
from tfscale.errors import SuiteError
from tfscale.launch.tasks import cluster_spec
from tfscale.netsim.clean import find_stale
from tfscale.netsim.hosts import placement
from tfscale.netsim.linkcheck import check_bytes
from tfscale.netsim.network import Layout, setup_commands, teardown_commands, token_of, unavailable_reason
from tfscale.suite.linkrate import parse_rate, tbf_burst_bytes
from tfscale.suite.planner import expand
from tfscale.suite.planview import network_note
from tfscale.suite.suitefile import parse_suite


@pytest.mark.parametrize(
    ("text", "bytes_per_s"),
    [("100mbit", 12.5e6), ("1gbit", 125e6), ("1Gbit", 125e6), ("2.5gbit", 312.5e6), ("800kbit", 1e5), ("8bit", 1.0)],
)
def test_parse_rate(text, bytes_per_s):
    assert parse_rate(text) == bytes_per_s


@pytest.mark.parametrize(
    "text", ["100", "1gbps", "1GB", "0mbit", "fast", "-1mbit", "", "101tbit", "9" * 300 + "bit", 1e9]
)
def test_bad_rates_are_refused(text):
    with pytest.raises(ValueError, match="is not a link rate"):
        parse_rate(text)


def test_tbf_burst():
    assert tbf_burst_bytes(12.5e6) == 65536  # 4 ms at 100 mbit is 50 kB: the 64 KiB floor
    assert tbf_burst_bytes(1.25e9) == 5_000_000  # 10 gbit: one 4 ms tick


def test_layout_names_fit_interface_limits():
    layout = Layout("20261202-132100-p4242-c3", 12)
    assert layout.namespace(11) == "tfscale-20261202-132100-p4242-c3-n11"
    assert layout.token == token_of("20261202-132100-p4242-c3") and len(layout.token) == 6
    assert layout.bridge == f"tfs{layout.token}br"
    assert (layout.host_veth(11), layout.node_veth(11)) == (f"tfs{layout.token}h11", f"tfs{layout.token}n11")
    assert max(len(layout.bridge), len(layout.host_veth(99))) <= 15  # IFNAMSIZ - 1
    assert (layout.address(0), layout.address(11)) == ("10.213.0.1", "10.213.0.12")
    assert layout.wrap(1, ["python", "-V"]) == [
        "nsenter",
        "--net=/run/netns/tfscale-20261202-132100-p4242-c3-n1",
        "--",
        "python",
        "-V",
    ]


def test_setup_and_teardown_commands():
    layout = Layout("r-p1-c0", 2)
    commands = setup_commands(layout, 12.5e6)
    assert commands[:2] == [["ip", "netns", "add", layout.namespace(0)], ["ip", "netns", "add", layout.namespace(1)]]
    assert commands[2][:5] == ["ip", "link", "add", layout.bridge, "type"]
    shaped = [c for c in commands if c[0] == "tc"]
    assert len(shaped) == 4  # both ends of both nodes' veths
    tbf = ["root", "tbf", "rate", "100000000bit", "burst", "65536", "latency", "100ms"]
    assert shaped[0] == ["tc", "qdisc", "add", "dev", layout.host_veth(0), *tbf]
    assert shaped[1] == ["tc", "-n", layout.namespace(0), "qdisc", "add", "dev", layout.node_veth(0), *tbf]
    assert ["ip", "-n", layout.namespace(1), "addr", "add", "10.213.0.2/24", "dev", layout.node_veth(1)] in commands
    assert teardown_commands(layout) == [
        ["ip", "netns", "delete", layout.namespace(0)],
        ["ip", "netns", "delete", layout.namespace(1)],
        ["ip", "link", "delete", layout.host_veth(0)],
        ["ip", "link", "delete", layout.host_veth(1)],
        ["ip", "link", "delete", layout.bridge],
    ]


def test_unavailable_reason():
    root = (1 << 12) | (1 << 21)
    assert unavailable_reason(root, ()) is None
    assert unavailable_reason(1 << 12, ()) == (
        "simulated networking (network_link) is unavailable: it needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): "
        "run tfscale as root, e.g. `sudo -E tfscale run ...`"
    )
    assert unavailable_reason(root, ("tc",)).endswith(
        "it needs the tools tc (Debian: apt-get install iproute2 util-linux)"
    )


def test_find_stale_keeps_live_owners_and_foreign_names():
    live, dead = Layout("a-p10-c0", 2), Layout("b-p20-c1", 2)
    namespaces = [live.namespace(0), live.namespace(1), dead.namespace(0), "docker-ns", "tfscale-odd"]
    links = [live.bridge, live.host_veth(0), dead.bridge, dead.host_veth(1), "eth0", "tfs0"]
    stale = find_stale(namespaces, links, alive=lambda pid: pid == 10)
    assert stale.namespaces == [dead.namespace(0)]
    assert stale.links == [dead.bridge, dead.host_veth(1)]
    everything = find_stale(namespaces, links, alive=lambda pid: True, everything=True)
    assert everything.namespaces == [live.namespace(0), live.namespace(1), dead.namespace(0)]
    assert everything.links == [live.bridge, live.host_veth(0), dead.bridge, dead.host_veth(1)]


def test_tasks_are_placed_on_their_nodes():
    assert [node_of(t, 2) for t in cluster_tasks("parameter_server", 2, 3)] == [0, 0, 1, 0, 1, 0]
    layout = Layout("r-p1-c0", 2)
    where = placement(layout)
    tasks = cluster_tasks("multi_worker_mirrored", 2, None)
    assert cluster_spec(tasks, [5000, 5001], where) == {"worker": ["10.213.0.1:5000", "10.213.0.2:5001"]}
    assert where.wrap(Task("worker", 1, True), ["x"]) == layout.wrap(1, ["x"])
    assert cluster_spec(tasks, [5000, 5001]) == {"worker": ["127.0.0.1:5000", "127.0.0.1:5001"]}


def test_check_bytes():
    assert check_bytes(12.5e6) == 6_250_000
    assert check_bytes(1e6) == 4 << 20
    assert check_bytes(1e12) == 256 << 20


SUITE = """
name: n
defaults: {strategy: multi_worker_mirrored}
network: {simulate: true, link: [100mbit, 1Gbit]}
matrix:
  nodes: [1, 2]
include:
  - {strategy: mirrored, devices_per_node: 2}
"""


def test_network_option_becomes_an_axis_that_applies_only_between_nodes():
    specs = expand(parse_suite(SUITE, "n.yaml")).specs
    got = [(s.strategy, s.nodes, s.network_link, s.link_bytes_per_s) for s in specs]
    # one node has no link: the two rates collapse into one loopback config; so does mirrored
    assert got == [
        ("multi_worker_mirrored", 1, None, None),
        ("multi_worker_mirrored", 2, "100mbit", 12.5e6),
        ("multi_worker_mirrored", 2, "1gbit", 125e6),
        ("mirrored", 1, None, None),
    ]
    plain = expand(parse_suite(SUITE.replace("network:", "# network:"), "n.yaml")).specs
    assert specs[0].config_id == plain[0].config_id  # no link: the id of a run without simulated hosts
    assert network_note(expand(parse_suite(SUITE, "n.yaml")), "simulated networking is unavailable") == (
        "note: simulated networking is unavailable; 2 config(s) with network_link will be skipped"
    )
    assert network_note(expand(parse_suite(SUITE, "n.yaml")), None) is None


def test_single_link_is_a_default_and_simulate_false_does_nothing():
    one = parse_suite("name: n\nnetwork: {simulate: true, link: 1gbit}\nmatrix: {nodes: [2]}\n", "n.yaml")
    assert one.defaults["network_link"] == "1gbit"
    off = parse_suite("name: n\nnetwork: {simulate: false, link: 1gbit}\nmatrix: {nodes: [2]}\n", "n.yaml")
    assert "network_link" not in off.defaults


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "network: {simulate: true, link: 1gbps}\nmatrix: {nodes: [2]}",
            "n.yaml: defaults.network_link: '1gbps' is not a link rate; write a positive number and "
            "bit|kbit|mbit|gbit|tbit up to 100tbit, e.g. 100mbit or 1gbit",
        ),
        (
            "matrix: {nodes: [2], network_link: [1gbit, fast]}",
            "n.yaml: matrix.network_link[1]: 'fast' is not a link rate",
        ),
        ("network: {simulate: true, link: []}\nmatrix: {nodes: [2]}", "n.yaml: network.link: empty list"),
        (
            "network: {simulate: true, link: 1gbit}\ndefaults: {network_link: 1gbit}\nmatrix: {nodes: [2]}",
            "n.yaml: network: the links are also given as network_link; give them in one place",
        ),
        ("network: {simulate: true, rate: 1gbit}\nmatrix: {nodes: [2]}", "n.yaml: network.rate: unknown key"),
    ],
)
def test_bad_network_options(text, message):
    with pytest.raises(SuiteError) as error:
        parse_suite("name: n\n" + text + "\n", "n.yaml")
    assert str(error.value).startswith(message)


def test_an_include_entry_may_name_its_own_network():
    suite = parse_suite(
        "name: n\nmatrix: {nodes: [2]}\ninclude:\n"
        "  - {strategy: multi_worker_mirrored, nodes: 2, network: {simulate: true, link: 100mbit}}\n"
        "  - {strategy: multi_worker_mirrored, nodes: 4, network: {simulate: false}}\n",
        "n.yaml",
    )
    assert [(i["nodes"], i["network_link"]) for i in suite.include] == [(2, "100mbit"), (4, None)]
    with pytest.raises(SuiteError, match=r"n.yaml: include\[0\].network: give \{simulate: true, link: RATE\}"):
        parse_suite("name: n\nmatrix: {nodes: [2]}\ninclude: [{network: {simulate: true, link: [1gbit]}}]\n", "n.yaml")
    with pytest.raises(SuiteError, match=r"n.yaml: include\[0\].network.speed: unknown key"):
        parse_suite("name: n\nmatrix: {nodes: [2]}\ninclude: [{network: {speed: 1}}]\n", "n.yaml")


def test_without_privileges_a_simulated_config_is_skipped_with_the_reason(monkeypatch, tmp_path):
    from tfscale.launch import local
    from tfscale.runner import configs as runner

    monkeypatch.setattr(local, "network_unavailable", lambda: "simulated networking is unavailable: needs root")
    spec = expand(parse_suite(SUITE, "n.yaml")).specs[1]
    record = runner.run_config(spec, tmp_path, "r")
    assert (record["status"], record["reason"]) == ("skipped", "simulated networking is unavailable: needs root")
    assert (record["network_link"], record["link_bytes_per_s"], record["step_time_median_s"]) == (
        "100mbit",
        12.5e6,
        None,
    )
    assert list(tmp_path.iterdir()) == []  # nothing was started or written


def test_network_rows_relate_busbw_to_the_link_and_to_loopback():
    import pandas as pd

    from tfscale import metrics as m
    from tfscale.analysis import add_scaling, layout_label, network_rows

    base = dict.fromkeys(m.RECORD_COLUMNS) | {
        m.RUN_ID: "r",
        m.DEVICE: "cpu",
        m.MODEL: "mlp",
        m.MODEL_SIZE: "small",
        m.PRECISION: "float32",
        m.BATCH_POLICY: "weak",
        m.BATCH_SIZE: 16,
        m.JIT: False,
        m.OPTIMIZER: "sgd",
        m.STATUS: "ok",
        m.STRATEGY: "multi_worker_mirrored",
        m.NODES: 2,
        m.DEVICES_PER_NODE: 1,
        m.DEVICES: 2,
        m.STEP_TIME_MEDIAN_S: 0.1,
        m.THROUGHPUT_EXAMPLES_PER_S: 320.0,
        m.DEVICE_KIND: "cpu-logical",
    }
    frame = pd.DataFrame(
        [
            base | {m.CONFIG_ID: "loop", m.COMM_TIME_ISOLATED_S: 0.05},
            base
            | {
                m.CONFIG_ID: "slow",
                m.NETWORK_LINK: "100mbit",
                m.LINK_BYTES_PER_S: 12.5e6,
                m.LINK_MEASURED_BYTES_PER_S: 11.875e6,
                m.BUSBW_BYTES_PER_S: 10e6,
                m.COMM_TIME_ISOLATED_S: 0.75,
            },
            base | {m.CONFIG_ID: "bad", m.STATUS: "skipped", m.NETWORK_LINK: "1gbit"},
        ]
    )
    rows = network_rows(add_scaling(frame))
    assert list(rows[m.CONFIG_ID]) == ["slow"]
    row = rows.iloc[0]
    assert (row[m.BUSBW_LINK_FRACTION], row["check_link_fraction"], row["comm_vs_loopback"]) == (0.8, 0.95, 15.0)
    assert layout_label(frame.iloc[1]) == "2 nodes × 1, 100mbit"
    assert layout_label(frame.iloc[0]) == "2 nodes × 1"


def test_clean_net_never_takes_a_network_being_set_up_for_a_dead_runs():
    # After every setup command, what `ip` would list: a live run's links must never look stale (its bridge was
    # once made before its first namespace, and clean-net could delete it in that moment).
    from tfscale.netsim.clean import Stale, find_stale

    layout = Layout("run1-p4242-c0", 2)
    namespaces, links = [], []
    for command in setup_commands(layout, 12.5e6):
        if command[:3] == ["ip", "netns", "add"]:
            namespaces.append(command[3])
        elif command[:3] == ["ip", "link", "add"]:
            links += [command[3], *([command[command.index("peer") + 2]] if "peer" in command else [])]
        elif command[:3] == ["ip", "link", "set"] and "netns" in command:
            links.remove(command[3])  # the node's end moved into its namespace
        assert find_stale(namespaces, links, lambda pid: pid == 4242) == Stale([], []), command
    assert len(namespaces) == 2 and len(links) == 3  # a bridge and two host ends
    assert find_stale(namespaces, links, lambda pid: False) == Stale(namespaces, links)
