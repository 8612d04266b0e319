"""Which configs a resumed run still has to run (pure: records only, no worker)."""

from tfscale.runner.configs import interleaved, pending_specs, record_gpu_uuids
from tfscale.store.records import append_record, read_records
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite


def test_rerun_failed_keeps_records_of_configs_the_suite_no_longer_has(tmp_path):
    plan = expand(
        parse_suite("name: s\ndefaults: {repeats: 1}\nmatrix: {strategy: [mirrored], devices_per_node: [1, 2]}\n", "s")
    )
    one, two = (s.config_id for s in plan.specs)
    path = tmp_path / "records.jsonl"
    for cid, status in ((one, "ok"), (two, "failed"), ("gone00000000", "failed")):
        append_record(path, {"config_id": cid, "status": status})
    pending = pending_specs(plan, tmp_path, rerun_failed=True)
    assert ([s.config_id for s in pending.specs], pending.recorded, pending.retried) == ([two], 1, 1)
    assert [r["config_id"] for r in read_records(path)] == [one, "gone00000000"]


def test_repeats_run_interleaved_and_a_resumed_run_runs_only_the_missing_processes(tmp_path):
    plan = expand(parse_suite("name: s\ndefaults: {repeats: 3}\nmatrix: {model: [mlp, cnn]}\n", "s"))
    one, two = plan.specs
    assert [(s.config_id, r) for s, r in interleaved(plan.specs)] == [
        (one.config_id, 0),
        (two.config_id, 0),
        (one.config_id, 1),
        (two.config_id, 1),
        (one.config_id, 2),
        (two.config_id, 2),
    ]
    path = tmp_path / "records.jsonl"
    for cid, repeat in ((one.config_id, 0), (two.config_id, 0), (one.config_id, 1)):
        append_record(path, {"config_id": cid, "status": "ok", "repeat": repeat})
    pending = pending_specs(plan, tmp_path, rerun_failed=False)
    assert [(s.config_id, r) for s, r in pending.runs] == [(two.config_id, 1), (one.config_id, 2), (two.config_id, 2)]
    assert (len(pending.specs), pending.recorded) == (2, 0)


def test_recorded_statuses_read_only_the_lines_appended_since_the_last_look(tmp_path):
    import json

    from tfscale.runner.configs import Recorded

    path = tmp_path / "records.jsonl"
    recorded = Recorded(path)
    assert recorded.of("a") == {}  # no file yet
    path.write_text(json.dumps({"config_id": "a", "status": "ok"}) + "\n")
    assert recorded.of("a") == {0: "ok"}
    offset = recorded.offset
    with open(path, "a") as f:  # another tfscale appends a whole line and starts the next
        f.write(json.dumps({"config_id": "b", "repeat": 1, "status": "failed"}) + "\n" + '{"config_id": "c", "st')
    assert recorded.of("b") == {1: "failed"}
    assert recorded.offset == path.stat().st_size - len('{"config_id": "c", "st') > offset
    with open(path, "a") as f:
        f.write('atus": "ok"}\n')
    assert recorded.of("c") == {0: "ok"} and recorded.of("a") == {0: "ok"}


def test_record_gpu_uuids_flattens_the_ranks_lists():
    assert record_gpu_uuids({"rank_gpu_uuids": [["GPU-a", "GPU-b"], ["GPU-c"]]}) == ["GPU-a", "GPU-b", "GPU-c"]
    assert record_gpu_uuids({"rank_gpu_uuids": [[]]}) == [] and record_gpu_uuids({}) == []
