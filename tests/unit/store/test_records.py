import json
import re

import pytest

from tfscale.errors import ResultsError
from tfscale.metrics import RECORD_COLUMNS
from tfscale.store import records as store


def test_append_and_read_round_trip(tmp_path):
    path = tmp_path / "s" / "r1" / "records.jsonl"
    store.append_record(path, {"config_id": "a", "status": "ok"})
    store.append_record(path, {"config_id": "b", "status": "failed"})
    lines = path.read_text().splitlines()
    assert [json.loads(line)["schema_version"] for line in lines] == [store.SCHEMA_VERSION] * 2
    assert [r["config_id"] for r in store.read_records(path)] == ["a", "b"]


def test_torn_last_line_is_skipped_with_a_warning_naming_file_and_line(tmp_path):
    path = tmp_path / "records.jsonl"
    store.append_record(path, {"config_id": "a"})
    with open(path, "a") as f:
        f.write('{"config_id": "b", "sta')
    with pytest.warns(store.RecordWarning, match=r"records\.jsonl:2: unreadable record line skipped"):
        records = list(store.read_records(path))
    assert [r["config_id"] for r in records] == ["a"]


def test_newer_schema_is_a_clear_error(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps({"config_id": "a", "schema_version": store.SCHEMA_VERSION + 1}) + "\n")
    with pytest.raises(
        ResultsError, match=rf"records\.jsonl:1: record schema_version {store.SCHEMA_VERSION + 1} is newer"
    ):
        list(store.read_records(path))


def test_older_records_are_upgraded_step_by_step(monkeypatch):
    def update_to_2(r):
        r = dict(r)
        r["steps"] = r.pop("n_steps")
        return r

    monkeypatch.setattr(store, "SCHEMA_VERSION", 3)
    monkeypatch.setattr(store, "MIGRATIONS", {2: update_to_2, 3: lambda r: {**r, "status": r["status"].lower()}})
    upgraded = store.upgrade({"schema_version": 1, "n_steps": 5, "status": "OK"})
    assert upgraded == {"schema_version": 3, "steps": 5, "status": "ok"}


def test_version_3_names_get_their_units_with_the_same_values():
    old = {
        "schema_version": 3,
        "config_id": "a",
        "host_cpu_util_mean": 55.0,
        "gpu_util_mean": None,
        "rank_throughput": [10.0, 12.0],
        "throughput_per_replica": 11.0,
        "throughput_examples_per_s": 22.0,
    }
    assert store.upgrade(old) == {
        "schema_version": 4,
        "config_id": "a",
        "host_cpu_util_mean_pct": 55.0,
        "gpu_util_mean_pct": None,
        "rank_throughput_examples_per_s": [10.0, 12.0],
        "throughput_per_replica_examples_per_s": 11.0,
        "throughput_examples_per_s": 22.0,
    }


def test_every_rename_ends_at_a_current_column_and_leaves_no_old_one():
    for renames in store.RENAMED.values():
        assert set(renames.values()) <= set(RECORD_COLUMNS)
        assert not set(renames) & set(RECORD_COLUMNS)


def test_load_results_from_file_run_suite_and_root(tmp_path):
    for suite, run, cid in (("s1", "r1", "a"), ("s1", "r2", "b"), ("s2", "r1", "c")):
        store.append_record(store.run_dir(tmp_path, suite, run) / store.RECORDS_FILE, {"config_id": cid})
    assert list(store.load_results(tmp_path)["config_id"]) == ["a", "b", "c"]
    assert list(store.load_results(tmp_path / "s1")["config_id"]) == ["a", "b"]
    assert list(store.load_results(tmp_path / "s1" / "r2")["config_id"]) == ["b"]
    frame = store.load_results(tmp_path / "s2" / "r1" / "records.jsonl")
    assert list(frame.columns[: len(RECORD_COLUMNS)]) == list(RECORD_COLUMNS)
    assert frame["step_time_median_s"].isna().all()


def test_load_results_without_records_is_an_error(tmp_path):
    with pytest.raises(ResultsError, match="no records.jsonl found"):
        store.load_results(tmp_path)
    with pytest.raises(ResultsError, match="no such file or folder"):
        store.load_results(tmp_path / "nope")


def test_write_json_atomic_leaves_no_temporary(tmp_path):
    store.write_json_atomic(tmp_path / "x.json", {"a": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]
    assert json.loads((tmp_path / "x.json").read_text()) == {"a": 1}


def test_remove_records_rewrites_without_them(tmp_path):
    path = tmp_path / "records.jsonl"
    for cid in ("a", "b", "a2", "c"):
        store.append_record(path, {"config_id": cid})
    assert store.remove_records(path, {"b", "c"}) == 2
    assert [r["config_id"] for r in store.read_records(path)] == ["a", "a2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records.jsonl", "records.jsonl.lock"]


def _append_many(args):
    path, writer = args
    for i in range(200):
        store.append_record(path, {"config_id": f"{writer}-{i}", "payload": "x" * 2000})


def test_concurrent_writers_never_interleave_lines(tmp_path):
    import multiprocessing

    path = tmp_path / "records.jsonl"
    with multiprocessing.get_context("fork").Pool(4) as pool:
        pool.map(_append_many, [(path, w) for w in range(4)])
    records = list(store.read_records(path))  # every line parses: none interleaved
    assert len(records) == 800
    assert len({r["config_id"] for r in records}) == 800


def test_files_that_are_not_records_are_a_clear_error(tmp_path):
    (tmp_path / "records.jsonl").write_text('["a list"]\n')
    with pytest.raises(ResultsError, match=r"records\.jsonl:1: not a tfscale record"):
        store.load_records(tmp_path)
    (tmp_path / "records.jsonl").write_text('{"config_id": "x"}\n')
    with pytest.raises(ResultsError, match=r"records\.jsonl:1: not a tfscale record \(no valid schema_version\)"):
        store.load_records(tmp_path)
    (tmp_path / "records.jsonl").write_text("garbage\n")
    with pytest.warns(store.RecordWarning), pytest.raises(ResultsError, match="no readable records"):
        store.load_records(tmp_path)


def test_version_1_records_are_upgraded_to_loopback_without_a_link():
    upgraded = store.upgrade({"schema_version": 1, "config_id": "a", "status": "ok"})
    assert upgraded == {
        "schema_version": store.SCHEMA_VERSION,
        "repeat": 0,  # version 3: a line is one process, and older records ran one each
        "config_id": "a",
        "status": "ok",
        "network_link": None,
        "link_bytes_per_s": None,
        "link_measured_bytes_per_s": None,
        "link_check_method": None,
        "slurm_job_id": None,
        "slurm_step_id": None,
        "stages": None,
        "micro_batches": None,
        "tensor_parallel": None,
        "param_bytes_per_device": None,
        "stage_param_bytes": None,
        "bubble_fraction": None,
        "bubble_fraction_theory": None,
        "model_parallel_method": None,
    }


def test_lone_surrogates_in_a_record_read_as_replacement_characters(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text('{"config_id": "a\\ud800", "reason": "x \\udfff", "nested": {"k\\ud801": ["\\ud802"]}, '
                    '"emoji": "\\ud83d\\ude00", "schema_version": 3}\n')  # fmt: skip
    [record] = store.read_records(path)
    assert record["config_id"] == "a\ufffd" and record["reason"] == "x \ufffd"
    assert record["nested"] == {"k\ufffd": ["\ufffd"]} and record["emoji"] == "\U0001f600"
    json.dumps(record).encode("utf-8")  # writable again


def test_write_atomic_keeps_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / "report.html"
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        store.write_atomic(path, "new \ud800")  # a lone surrogate: UTF-8 cannot write it
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["report.html"]
    store.write_atomic(path, b"\x00bytes")
    assert path.read_bytes() == b"\x00bytes"


@pytest.mark.parametrize("name", ["records.jsonl", "env.json", "commbench.jsonl", "plan.json"])
def test_no_output_replaces_what_records_are_read_from(tmp_path, name):
    with pytest.raises(
        ResultsError, match=re.escape("a run's own file (records, environment, plan): write the output")
    ):
        store.check_output(tmp_path / "run" / name)
    read = tmp_path / "mine.jsonl"
    with pytest.raises(ResultsError, match=re.escape("a run's own file (records, environment, plan)")):
        store.check_output(tmp_path / "sub" / ".." / "mine.jsonl", [read])
    with pytest.raises(ResultsError, match="is a folder"):
        store.check_output(tmp_path)
    assert store.check_output(tmp_path / "report.html", [read]) == tmp_path / "report.html"


@pytest.mark.parametrize("run_id", ["r1\n", "r1\n\n", "../r1", "r1/x", "-r", ".r"])
def test_a_run_id_is_matched_whole(run_id):
    with pytest.raises(ResultsError, match="a run id is 1 to 64 letters"):
        store.check_run_id(run_id)


def test_an_axis_value_outside_its_choices_is_not_a_record_readers_can_use(tmp_path):
    path = tmp_path / "records.jsonl"
    store.append_record(path, {"config_id": "a", "status": "ok", "strategy": "<evil>"})
    with pytest.raises(ResultsError, match=r"records\.jsonl:1: not a tfscale record: strategy must be one of one_dev"):
        store.load_records(path)
