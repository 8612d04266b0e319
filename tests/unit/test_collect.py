"""Result parts of a launched run into outcomes (tfscale.collect): which config failed where, which never ran."""

import json

from tfscale.collect import launched_specs, outcome_of
from tfscale.launch.emit import LaunchOptions, emit
from tfscale.launch.jobs import record_fields
from tfscale.planner import expand
from tfscale.suite import parse_suite

SUITE = """
name: c
defaults: {model_size: tiny}
matrix: {strategy: [multi_worker_mirrored], nodes: [2]}
include: [{strategy: parameter_server, nodes: 2}, {strategy: one_device}]
"""


def launched(tmp_path):
    plan = expand(parse_suite(SUITE, "c.yaml"))
    emit(plan, "slurm", tmp_path, LaunchOptions())
    return plan.specs


def write(tmp_path, config_id, task, part):
    (tmp_path / "results" / f"{config_id}.{task}.result.json").write_text(json.dumps(part))


def test_specs_come_back_in_plan_order(tmp_path):
    specs = launched(tmp_path)
    assert [s.config_id for s in launched_specs(tmp_path)] == [s.config_id for s in specs]


def test_failed_and_missing_parts_name_the_task(tmp_path):
    mwms, ps, single = launched(tmp_path)
    assert outcome_of(single, tmp_path) is None  # no part: not run (yet)
    write(tmp_path, mwms.config_id, "worker-0", {"ok": True, "measurements": {}})
    missing = outcome_of(mwms, tmp_path)
    assert not missing.ok and missing.failed == ""
    assert missing.launcher_reason == f"no result part from worker-1 in {tmp_path / 'results'}"
    fields = record_fields(missing, mwms, tmp_path)
    assert fields["status"] == "failed" and fields["reason"].startswith("no result part from worker-1")
    assert fields["duration_s"] is None and fields["cluster"] == {"worker": 2}
    write(tmp_path, ps.config_id, "chief-0", {"ok": False, "error": "out of memory: X", "error_type": "E"})
    failed = record_fields(outcome_of(ps, tmp_path), ps, tmp_path)
    assert (failed["status"], failed["reason"]) == ("failed", "chief-0: out of memory: X")
