"""The local launcher's pure parts: addresses and ports of a cluster."""

import dataclasses
import json
import socket
import sys

import pytest

from tfscale.contract import cluster_tasks, tf_config
from tfscale.launch.base import Job
from tfscale.launch.local import LocalLauncher
from tfscale.launch.tasks import cluster_spec, pick_ports
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite


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


class ScriptJob(Job):
    """A job whose tasks run a short Python script instead of the TensorFlow worker: the launcher's own behaviour
    (processes, TF_CONFIG, results, watchdog) with real processes in well under a second."""

    script = ""

    def argv(self, result, python=None):
        return [sys.executable, "-c", self.script, str(result)]


WRITE_RESULT = """
import json, os, sys
task = json.loads(os.environ.get("TF_CONFIG", '{"task": {"type": "worker", "index": 0}}'))["task"]
if os.environ.get("SILENT") == "{type}-{index}".format(**task):
    sys.exit(0)
json.dump({"ok": True, "measurements": {"task": task, "progress": os.environ["TFSCALE_PROGRESS"]}},
          open(sys.argv[1], "w"))
"""


def job_of(tmp_path, text: str, script: str) -> Job:
    spec = expand(parse_suite("name: l\ndefaults: {timeout_s: 30}\n" + text, "l.yaml")).specs[0]
    job = ScriptJob(spec, tmp_path / "spec.json", tmp_path / "work", tmp_path / "logs", spec.config_id, "r")
    object.__setattr__(job, "script", script)
    job.work.mkdir()
    job.logs.mkdir()
    return job


def test_a_single_process_is_a_cluster_of_one_task_without_tf_config(tmp_path):
    job = job_of(tmp_path, "matrix: {strategy: [one_device]}\n", WRITE_RESULT)
    outcome = LocalLauncher().run(job)
    assert outcome.ok and outcome.trainers == ["worker-0"] and outcome.columns == {}
    part = outcome.parts["worker-0"]["measurements"]
    assert part["task"] == {"type": "worker", "index": 0}  # no TF_CONFIG was set: the script's own default
    assert part["progress"] == str(job.work / f"{job.prefix}.worker-0.progress")
    assert outcome.log_path == job.logs / f"{job.prefix}.log"


def test_a_cluster_gets_tf_config_and_names_the_task_that_wrote_nothing(tmp_path, monkeypatch):
    job = job_of(tmp_path, "matrix: {strategy: [multi_worker_mirrored], nodes: [2]}\n", WRITE_RESULT)
    outcome = LocalLauncher().run(job)
    assert outcome.ok and outcome.columns == {"cluster": {"worker": 2}, "port_retries": 0}
    assert [outcome.parts[t]["measurements"]["task"]["index"] for t in outcome.trainers] == [0, 1]
    monkeypatch.setenv("SILENT", "worker-1")
    outcome = LocalLauncher().run(job)
    assert (outcome.ok, outcome.failed, outcome.returncode) == (False, "worker-1", 0)
    assert outcome.log_path == job.logs / f"{job.prefix}.worker-1.log"


def test_the_watchdog_stops_a_job_past_its_timeout(tmp_path):
    job = job_of(tmp_path, "matrix: {strategy: [one_device]}\n", "import time; time.sleep(60)")
    job = dataclasses.replace(job, spec=dataclasses.replace(job.spec, timeout_s=0.5))
    object.__setattr__(job, "script", "import time; time.sleep(60)")
    outcome = LocalLauncher().run(job)
    assert (outcome.stopped, outcome.stopped_how, outcome.ok) == ("timeout", "process tree killed", False)
    assert outcome.duration_s < 20


FAIL_ONCE = """
import json, os, pathlib, sys
task = json.loads(os.environ["TF_CONFIG"])["task"]
seen = pathlib.Path(sys.argv[1]).parent / "attempted-{type}-{index}".format(**task)
if not seen.exists():
    seen.touch()
    print(os.environ["MARKER"], flush=True)
    sys.exit(1)
json.dump({"ok": True, "measurements": {}}, open(sys.argv[1], "w"))
"""


@pytest.mark.parametrize("marker", ["Address already in use", "Unable to parse request", "something else"])
def test_a_cluster_is_relaunched_on_fresh_ports_after_a_transient_failure_only(tmp_path, monkeypatch, marker):
    job = job_of(tmp_path, "matrix: {strategy: [multi_worker_mirrored], nodes: [2]}\n", FAIL_ONCE)
    monkeypatch.setenv("MARKER", marker)
    outcome = LocalLauncher().run(job)
    if marker == "something else":
        assert (outcome.ok, outcome.returncode, outcome.columns["port_retries"]) == (False, 1, 0)
    else:
        assert outcome.ok and outcome.columns["port_retries"] == 1
        assert f"{marker}\n--- tfscale: attempt 2" in outcome.log_path.read_text()
