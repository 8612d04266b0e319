"""Which configs a resumed run still has to run (pure: records only, no worker)."""

from tfscale.plan import expand
from tfscale.runner import pending_specs
from tfscale.store import append_record, read_records
from tfscale.suite import parse_suite


def test_rerun_failed_keeps_records_of_configs_the_suite_no_longer_has(tmp_path):
    plan = expand(parse_suite("name: s\nmatrix: {strategy: [mirrored], devices_per_node: [1, 2]}\n", "s"))
    one, two = (s.config_id for s in plan.specs)
    path = tmp_path / "records.jsonl"
    for cid, status in ((one, "ok"), (two, "failed"), ("gone00000000", "failed")):
        append_record(path, {"config_id": cid, "status": status})
    pending = pending_specs(plan, tmp_path, rerun_failed=True)
    assert ([s.config_id for s in pending.specs], pending.recorded, pending.retried) == ([two], 1, 1)
    assert [r["config_id"] for r in read_records(path)] == [one, "gone00000000"]
