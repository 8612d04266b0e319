"""compare names what makes BASE and NEW unlike before any figure, and refuses to gate across it (issue 32)."""

import json
import shutil
from pathlib import Path

from tfscale.cli import cli

DATA = Path(__file__).resolve().parent.parent / "data"


def run_with(root: Path, name: str, steps, cores: int = 2) -> Path:
    """The committed quickstart run as run <name>, its plan.json saying `steps`, its env.json `cores` cores."""
    run = root / "quickstart" / name
    shutil.copytree(DATA / "quickstart-run", run)
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    (run / "records.jsonl").write_text("".join(json.dumps(r | {"run_id": name}) + "\n" for r in records))
    specs = [{"suite": "quickstart", "config_id": r["config_id"], "steps": steps, "timeout_s": 600.0} for r in records]
    (run / "plan.json").write_text(json.dumps({"plan_version": 1, "specs": specs}))
    env = json.loads((run / "env.json").read_text()) | {"cpu_logical_cores": cores}
    (run / "env.json").write_text(json.dumps(env))
    return run


def test_settings_that_differ_are_named_first_and_stop_the_gate(runner, tmp_path, in_processes):
    base, new = run_with(tmp_path, "base", 30), run_with(tmp_path, "new", "auto")
    in_processes(base)
    in_processes(new)
    out = ["-o", str(tmp_path / "c.html"), "--markdown", str(tmp_path / "c.md")]
    result = runner.invoke(cli, ["compare", str(base), str(new), *out])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "warning: settings differ: steps: 30 -> auto (17 config(s))"
    assert "settings differ: steps: 30 -&gt; auto (17 config(s))" in (tmp_path / "c.html").read_text()
    assert "- warning: settings differ: steps: 30 -&gt; auto (17 config(s))" in (tmp_path / "c.md").read_text()
    gate = runner.invoke(cli, ["compare", str(base), str(new), *out, "--fail-on-regression"])
    assert gate.exit_code == 2
    assert gate.output.splitlines()[-1] == (
        "tfscale: error: --fail-on-regression: BASE and NEW measured unlike things (steps: 30 -> auto "
        "(17 config(s))): run both alike, or gate anyway with --allow-different-settings"
    )
    allowed = runner.invoke(cli, ["compare", str(base), str(new), *out, "--fail-on-regression",
                                  "--allow-different-settings"])  # fmt: skip
    assert allowed.exit_code == 0, allowed.output


def test_other_hardware_stops_the_gate_a_timeout_does_not(runner, tmp_path, in_processes):
    base, new = run_with(tmp_path, "base", 30), run_with(tmp_path, "new", 30, cores=4)
    in_processes(base)
    in_processes(new)
    gate = runner.invoke(cli, ["compare", str(base), str(new), "-o", str(tmp_path / "c.html"), "--fail-on-regression"])
    assert gate.exit_code == 2 and "machine differs: cpu_logical_cores: 2 -> 4" in gate.output
    assert "(cpu_logical_cores: 2 -> 4)" in gate.output
    plan = json.loads((new / "plan.json").read_text())
    (new / "plan.json").write_text(json.dumps(plan | {"specs": [s | {"timeout_s": 60.0} for s in plan["specs"]]}))
    (new / "env.json").write_text((base / "env.json").read_text())
    gate = runner.invoke(cli, ["compare", str(base), str(new), "-o", str(tmp_path / "c.html"), "--fail-on-regression"])
    assert gate.exit_code == 0 and "settings differ: timeout_s: 600.0 -> 60.0 (17 config(s))" in gate.output


def test_a_suite_folder_as_base_compares_each_configs_latest_run(runner, tmp_path):
    for i in range(3):
        run_with(tmp_path / "results", f"r{i}", 30)
    new = run_with(tmp_path, "new", 30)
    records = [json.loads(line) for line in (new / "records.jsonl").read_text().splitlines()]
    records[0] |= {"status": "failed", "reason": "boom", "step_time_median_s": None}
    (new / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    result = runner.invoke(cli, ["compare", str(tmp_path / "results" / "quickstart"), str(new), "-o",
                                 str(tmp_path / "c.html")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output.count("NEWLY FAILED") == 1
    assert "warning: BASE holds 3 runs: each config is compared as its latest run measured it" in result.output


def test_compare_takes_records_files_as_report_does(runner, tmp_path):
    base, new = run_with(tmp_path, "base", 30), run_with(tmp_path, "new", 30)
    result = runner.invoke(cli, ["compare", str(base / "records.jsonl"), str(new / "records.jsonl"), "-o",
                                 str(tmp_path / "c.html")])  # fmt: skip
    assert result.exit_code == 0, result.output
