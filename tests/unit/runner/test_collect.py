"""Result parts of a launched run into outcomes (tfscale.runner.collect): which config failed where, which never ran."""

import json
import os
import re

import pytest

from tfscale.errors import TfscaleError
from tfscale.launch.emit import LaunchOptions, emit
from tfscale.launch.jobs import record_fields
from tfscale.runner.collect import collect, launched_specs, outcome_of
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

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


def _edit_spec(folder, spec, **changes):
    path = folder / "specs" / f"{spec.config_id}.json"
    path.write_text(json.dumps(json.loads(path.read_text()) | changes))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"suite": "../../../outside"}, "suite: not a name"),
        ({"suite": "/abs"}, "suite: not a name"),
        ({"config_id": "../x"}, "config_id: not a name"),
        ({"model": "evil\ntouch x"}, "model: not a name"),
        ({"nodes": 10**11}, "nodes: must be <= 4096"),
        ({"timeout_s": None}, "timeout_s: must not be empty"),
        ({"strategy": "magic"}, "strategy: unknown strategy 'magic'"),
        ({"unknown_field": 1}, "not a spec tfscale launch wrote (RunSpec: unknown fields ['unknown_field'])"),
    ],
)
def test_a_spec_is_checked_as_a_suites_values_are(tmp_path, changes, message):
    single = launched(tmp_path)[2]
    _edit_spec(tmp_path, single, **changes)
    with pytest.raises(TfscaleError) as error:
        collect(tmp_path, tmp_path / "results-root", "r1")
    assert str(error.value).startswith(str(tmp_path / "specs" / f"{single.config_id}.json")), str(error.value)
    assert message in str(error.value) and "\n" not in str(error.value)
    assert not (tmp_path / "results-root").exists() and not (tmp_path.parent / "outside").exists()


@pytest.mark.parametrize(
    ("order", "message"),
    [
        (b"{", "order.json: not a list of config ids"),
        (b'["../../etc/passwd"]', "order.json: not a list of config ids"),
        (b'{"a": 1}', "order.json: not a list of config ids"),
        (b'["abc123abc123"]', "specs/abc123abc123.json: missing, or not a spec"),
    ],
)
def test_a_malformed_order_file_gives_one_line(tmp_path, order, message):
    launched(tmp_path)
    (tmp_path / "specs" / "order.json").write_bytes(order)
    with pytest.raises(TfscaleError, match=re.escape(message)):
        launched_specs(tmp_path)


def test_parts_outside_the_folder_or_special_are_refused_without_reading_them(tmp_path):
    mwms, ps, single = launched(tmp_path)
    (tmp_path / "secret.json").write_text(json.dumps({"ok": True, "measurements": {"secret": 1}}))
    part = tmp_path / "results" / f"{single.config_id}.worker-0.result.json"
    part.symlink_to(tmp_path / "secret.json")  # inside the launch folder, but not inside results/
    with pytest.raises(TfscaleError, match=r"result\.json: refused: .* leads outside"):
        outcome_of(single, tmp_path)
    part.unlink()
    part.symlink_to("/dev/zero")
    with pytest.raises(TfscaleError, match=r"result\.json: refused: .* leads outside"):
        outcome_of(single, tmp_path)
    part.unlink()
    os.mkfifo(part)  # no writer: reading it would wait for ever
    with pytest.raises(TfscaleError, match=r"result\.json: refused: .*: not a regular file"):
        outcome_of(single, tmp_path)
    part.unlink()
    part.write_text("[1, 2]")  # JSON, but not a part: as if none was written
    assert outcome_of(single, tmp_path) is None


def test_parts_that_are_not_tfscales_give_one_line_and_no_record(tmp_path):
    single = launched(tmp_path)[2]
    write(tmp_path, single.config_id, "worker-0", {"ok": True, "measurements": {"step_time_median_s": "fast"}})
    with pytest.raises(TfscaleError, match=f"config {single.config_id}: parts tfscale did not write"):
        collect(tmp_path, tmp_path / "root", "r1")
    assert not (tmp_path / "root").exists()


def test_a_folder_with_no_part_yet_is_an_error_and_makes_no_run(tmp_path):
    launched(tmp_path)
    with pytest.raises(TfscaleError, match=r"results: no result part yet for any of the 3 config\(s\): nothing to"):
        collect(tmp_path, tmp_path / "root", "r1")
    assert not (tmp_path / "root").exists()


def test_a_config_of_several_repeats_is_collected_as_that_many_processes_and_combined(tmp_path):
    from tfscale.store.records import load_results

    plan = expand(parse_suite("name: c\ndefaults: {model_size: tiny, repeats: 3}\nmatrix: {model: [mlp]}\n", "c.yaml"))
    emit(plan, "slurm", tmp_path, LaunchOptions())
    [spec] = plan.specs
    medians = {spec.config_id: 0.010, f"{spec.config_id}-r1": 0.012}  # the third process has not written yet
    for name, median in medians.items():
        times = [median * 0.99, median, median * 1.01]
        part = {"step_times_s": times, "step_time_median_s": median, "throughput_examples_per_s": 32 / median}
        write(tmp_path, name, "worker-0", {"ok": True, "measurements": part})
    done = collect(tmp_path, tmp_path / "root", "r1")
    assert [r["repeat"] for r in done.records] == [0, 1] and done.not_run == [f"{spec.config_id}-r2"]
    [row] = load_results(done.run_dir).to_dict(orient="records")
    assert row["repeats"] == 3 and row["repeat_medians_s"] == [0.010, 0.012]
    assert row["step_time_median_s"] == pytest.approx(0.011)  # the median of the process medians
