"""The local launcher's pure parts: addresses and ports of a cluster."""

import json
import socket

from tfscale.contract import cluster_tasks, tf_config
from tfscale.launch.local import cluster_spec, pick_ports


def test_cluster_spec_and_tf_config():
    tasks = cluster_tasks("parameter_server", 2, 1)
    spec = cluster_spec(tasks, [5000, 5001, 5002, 5003])
    assert spec == {
        "chief": ["127.0.0.1:5000"],
        "worker": ["127.0.0.1:5001", "127.0.0.1:5002"],
        "ps": ["127.0.0.1:5003"],
    }
    assert json.loads(tf_config(spec, tasks[2])) == {"cluster": spec, "task": {"type": "worker", "index": 1}}


def test_picked_ports_are_distinct_and_bindable():
    ports = pick_ports(4)
    assert len(set(ports)) == 4
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
