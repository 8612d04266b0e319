"""Simulated hosts on real network namespaces and shaped links (needs root: skipped elsewhere, with the reason)."""

import json
import os
import signal
import time

import pytest

from tfscale.cli import cli
from tfscale.netsim.clean import clean
from tfscale.netsim.network import (
    IFACE_PREFIX,
    NAMESPACE_PREFIX,
    list_links,
    list_namespaces,
    token_of,
    unavailable_reason,
)

from .support import finish, tfscale, wait_for, workers_left

REASON = unavailable_reason()
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.workers,
    pytest.mark.system,
    pytest.mark.skipif(REASON is not None, reason=REASON or ""),
]

# mlp/small: 7.45 MB of gradients, so the 100 mbit link (12.5 MB/s) dominates its all-reduce.
SUITE = """
name: netsim
device: cpu
defaults: {repeats: 1,
           model: mlp, model_size: small, strategy: multi_worker_mirrored, nodes: 2, batch_size: 16, steps: 3,
           warmup_steps: 1, comm_steps: 2, timeout_s: 150, telemetry_hz: 0}
matrix:
  network_link: [null, 100mbit]
"""


def own_names(run_id: str, pid: int) -> set[str]:
    """The namespaces and links that run `run_id` of tfscale process `pid` made and left: their names carry both
    (tfscale.netsim.network.Layout: owner "<run id>-p<pid>-c<count>"), so another suite's simulated networks on this
    host (a second test session, the Slurm tests) do not count."""
    owners = [f"{run_id}-p{pid}-c{count}" for count in range(1000)]
    links = tuple(f"{IFACE_PREFIX}{token_of(owner)}" for owner in owners)
    spaces = {n for n in list_namespaces() if n.startswith(f"{NAMESPACE_PREFIX}{run_id}-p{pid}-c")}
    return spaces | {n for n in list_links() if n.startswith(links)}


def test_shaped_link_slows_the_all_reduce_and_nothing_is_left(runner, tmp_path):
    (tmp_path / "netsim.yaml").write_text(SUITE)
    result = runner.invoke(
        cli,
        [
            "run",
            str(tmp_path / "netsim.yaml"),
            "--results-dir",
            str(tmp_path / "results"),
            "--reports-dir",
            str(tmp_path / "reports"),
            "--run-id",
            "n",
        ],
    )
    assert result.exit_code == 0, result.output
    loopback, shaped = [
        json.loads(line) for line in (tmp_path / "results" / "netsim" / "n" / "records.jsonl").read_text().splitlines()
    ]
    assert (loopback["status"], shaped["status"]) == ("ok", "ok")
    assert (loopback["network_link"], loopback["link_bytes_per_s"], loopback["link_measured_bytes_per_s"]) == (
        None,
        None,
        None,
    )
    assert (shaped["network_link"], shaped["link_bytes_per_s"]) == ("100mbit", 12.5e6)
    # TCP carries at most 1448 payload bytes per 1514-byte frame: 0.956 of the link
    assert 0.7 * 12.5e6 < shaped["link_measured_bytes_per_s"] < 0.97 * 12.5e6
    assert shaped["grad_bytes"] > 4e6
    ratio = shaped["comm_time_isolated_s"] / loopback["comm_time_isolated_s"]
    assert ratio >= 3, f"isolated all-reduce only {ratio:.1f}x slower on 100 mbit than on loopback"
    # 2 nodes: each sends 2(n-1)/n x grad_bytes per all-reduce: a shaped link bounds busbw by its rate
    assert shaped["busbw_bytes_per_s"] < 12.5e6
    assert "busbw / link" in (tmp_path / "reports" / "netsim.html").read_text()
    assert own_names("n", os.getpid()) == set()
    assert workers_left(tmp_path) == []


def test_interrupt_inside_a_simulated_network_removes_it(tmp_path):
    (tmp_path / "netsim.yaml").write_text(SUITE.replace("steps: 3,", "steps: 300,").replace("null, ", ""))
    parent = tfscale("run", "netsim.yaml", "--run-id", "i", "--no-report", cwd=tmp_path)
    wait_for(lambda: own_names("i", parent.pid), 60, "the simulated network")
    wait_for(
        lambda: list((tmp_path / "results" / "netsim" / "i" / "work").glob("*.worker-1.progress")),
        120,
        "the cluster to form",
    )
    time.sleep(1)
    parent.send_signal(signal.SIGINT)
    try:
        _, err = finish(parent, 60)
    finally:  # a failure leaves no network behind for the tests after it
        stale = own_names("i", parent.pid)
        clean()
    assert parent.returncode == 130, err
    assert stale == set()
    assert workers_left(tmp_path) == []


def test_kill_9_of_tfscale_on_simulated_hosts_leaves_no_worker_and_clean_net_removes_the_network(runner, tmp_path):
    (tmp_path / "netsim.yaml").write_text(SUITE.replace("steps: 3,", "steps: 300,").replace("null, ", ""))
    parent = tfscale("run", "netsim.yaml", "--run-id", "k", "--no-report", cwd=tmp_path)
    wait_for(
        lambda: list((tmp_path / "results" / "netsim" / "k" / "work").glob("*.worker-1.progress")),
        120,
        "the cluster to form",
    )
    left = own_names("k", parent.pid)
    assert left  # this run's namespaces, veths and bridge
    killed_at = time.monotonic()
    parent.kill()
    parent.communicate(timeout=10)
    wait_for(lambda: workers_left(tmp_path) == [], 10, "the workers inside the namespaces to die with tfscale")
    print(f"workers gone {time.monotonic() - killed_at:.2f} s after SIGKILL of tfscale")
    assert left <= own_names("k", parent.pid)  # a namespace cannot die with its creator: the next start or clean-net
    result = runner.invoke(cli, ["clean-net"])
    assert result.exit_code == 0, result.output
    assert own_names("k", parent.pid) == set()
