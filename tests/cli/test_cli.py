"""CLI behaviour through click's CliRunner: plan output, user errors (one line, exit 2), report rendering."""

import base64
import gzip
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tfscale.cli import cli
from tfscale.suite.planview import SPREAD_NOTE

DATA = Path(__file__).resolve().parent.parent / "data"


def write(tmp_path, text, name="suite.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_version_and_help(runner):
    result = runner.invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("tfscale, version ")
    assert "plan" in runner.invoke(cli, ["--help"]).output


def test_plan_prints_table_and_count(runner, tmp_path):
    suite = write(
        tmp_path,
        "name: demo\ndefaults: {repeats: 1}\n"
        "matrix:\n  strategy: [mirrored, central_storage]\n  devices_per_node: [1, 4]\n",
    )
    result = runner.invoke(cli, ["plan", suite])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:4] == ["config_id", "model", "strategy", "nodes"]
    assert len(lines) == 1 + 4 + 1 + 1
    assert lines[-2] == "4 configs in suite 'demo' (device: cpu)"
    assert lines[-1] == SPREAD_NOTE  # no config in 2+ processes: the CIs will not cover the spread between them


def test_plan_of_the_quickstart(runner):
    result = runner.invoke(cli, ["plan", str(DATA.parent.parent / "suites" / "quickstart.yaml")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "17 configs in suite 'quickstart' (device: cpu)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\nmatrix: {model: [mlp]}\ncolour: red\n", "colour: unknown key"),
        ("name: x\nmatrix: {batch_size: [eight]}\n", "matrix.batch_size[0]: expected int, got 'eight'"),
        ("name: x\nmatrix: {}\n", "matrix: empty"),
        ("name: x\nmatrix: {model: [resnet9]}\n", "matrix.model[0]: unknown model 'resnet9'"),
        ("name: x\nmatrix: {strategy: [magic]}\n", "matrix.strategy[0]: unknown strategy 'magic'"),
        (
            "name: x\nmatrix: {strategy: [one_device], devices_per_node: [2]}\n",
            "matrix: mlp/one_device with devices_per_node=2",
        ),
    ],
)
@pytest.mark.parametrize("command", ["plan", "run"])
def test_bad_suites_exit_2_with_one_line(runner, tmp_path, text, message, command):
    suite = write(tmp_path, text)
    result = runner.invoke(
        cli, [command, suite, "--results-dir", str(tmp_path / "r")] if command == "run" else [command, suite]
    )
    assert result.exit_code == 2
    assert result.output.startswith(f"tfscale: error: {suite}: {message}")
    assert result.output.count("\n") == 1
    assert "Traceback" not in result.output
    assert not (tmp_path / "r").exists()  # nothing started


def test_missing_suite_file(runner, tmp_path):
    result = runner.invoke(cli, ["plan", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert result.output.startswith(f"tfscale: error: {tmp_path / 'nope.yaml'}: cannot read suite file")


def test_report_from_committed_records(runner, tmp_path):
    run = tmp_path / "results" / "quickstart" / "example"
    shutil.copytree(DATA / "quickstart-run", run)
    result = runner.invoke(cli, ["report", str(run), "--reports-dir", str(tmp_path / "reports")])
    assert result.exit_code == 0, result.output
    report = tmp_path / "reports" / "quickstart.html"
    # the summary table first, as `tfscale run` ends
    lines = result.output.splitlines()
    assert lines[-1] == f"report: {report}" and lines[0].split()[:2] == ["config_id", "model"]
    assert len(lines) == 1 + 17 + 1 + 1 and lines[-2].startswith("caveat: Logical CPU devices share the same cores")
    text = report.read_text()
    assert '<h1>tfscale report: quickstart</h1>\n<p class="caveat">Logical CPU devices share' in text  # first line
    # self-contained: plotly.js inlined once, no external scripts or stylesheets
    assert len(re.findall(r"<script[^>]*\bsrc=", text)) == 0
    assert "<link" not in text
    # plotly.js packed once (gzip + base64), unpacked by the report's own loader
    [packed] = re.findall(r'<script id="plotlyjs-gz" type="application/octet-stream">([^<]+)</script>', text)
    assert gzip.decompress(base64.b64decode(packed)).decode().count("plotly.js v") == 1
    # throughput, efficiency, steps, memory, layouts, communication breakdown, share, busbw, loss breakdown
    assert text.count('class="plotly-graph-div"') == 9
    assert "Where the efficiency went" in text
    # 1, 2 and 4 devices leave two points above one: fewer than a hold-out check needs, so the section is left out
    # and the contents say why; so are the sections of modes and simulated hosts that did not run
    assert '<h2 id="prediction">' not in text and "<th>error</th>" not in text
    left_out = re.search(r"<p>Left out, nothing to show: (.*?)\.</p>", text).group(1)
    assert "Prediction check: the largest device count from the smaller ones: no workload and strategy" in left_out
    assert "Simulated hosts: communication against the link: no config ran on simulated hosts" in left_out
    assert "Data vs model parallelism at equal device counts: no workload ran" in left_out
    # the report opens with the findings, then the contents
    order = [
        text.index(part)
        for part in ('<h2 id="findings">Findings</h2>', '<nav class="contents">', '<h2 id="precision">')
    ]
    assert order == sorted(order)
    assert "<td>mlp/tiny, batch 16 weak</td>" in text and "of linear scaling" in text
    assert "All 17 configs succeeded." in text
    assert "How sure are these numbers" in text and "within noise" in text
    # the quickstart's repeats: 2 on six configs give the run's spread between processes, which every CI covers
    six = "6 config(s): its 2 processes&#x27; windows and the spread between fresh processes (sd 15.8% with 6 degrees"
    assert six in text
    assert "11 config(s): its process&#x27;s windows and the spread between fresh processes" in text
    assert "2 nodes × 1" in text
    assert "All-reduce bus bandwidth vs message size" in text
    assert "one replica: no gradient communication" in text
    assert "Logical CPU devices share the same cores" in text
    for column in ("step_time_median_s", "scaling_efficiency", "scaling_efficiency_ci95_low", "ci_met"):
        assert f"<th>{column}</th>" in text


def test_report_of_nothing_is_a_user_error(runner, tmp_path):
    result = runner.invoke(cli, ["report", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output == f"tfscale: error: {tmp_path}: no records.jsonl found\n"


def test_names_from_suites_are_escaped_in_the_report(runner, tmp_path):
    import json

    run = tmp_path / "results" / "quickstart" / "x"
    shutil.copytree(DATA / "example-run", run)
    evil = "<script>alert(1)</script>"
    lines = (run / "records.jsonl").read_text().splitlines()
    (run / "records.jsonl").write_text("\n".join(json.dumps({**json.loads(line), "model": evil}) for line in lines))
    result = runner.invoke(cli, ["report", str(run), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "r.html").read_text()
    assert evil not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # shown as text in the tables


def _slowed_copy(tmp_path):
    """BASE, a copy of the quickstart run, and NEW, the same with mlp mirrored x2 20 % slower; that record."""
    base, new = tmp_path / "quickstart" / "base", tmp_path / "quickstart" / "new"
    shutil.copytree(DATA / "quickstart-run", base)
    shutil.copytree(DATA / "quickstart-run", new)
    lines = [json.loads(line) for line in (new / "records.jsonl").read_text().splitlines()]
    slowed = next(r for r in lines if (r["model"], r["strategy"], r["devices_per_node"]) == ("mlp", "mirrored", 2))
    slowed["step_times_s"] = [t * 1.2 for t in slowed["step_times_s"]]
    slowed["step_time_median_s"] *= 1.2
    slowed["throughput_examples_per_s"] /= 1.2
    (new / "records.jsonl").write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    return base, new, slowed


def _slowed_in_processes(tmp_path, in_processes):
    """BASE and NEW, the quickstart run in five processes per config, mlp mirrored x2 20 % slower in NEW."""
    base, new, slowed = _slowed_copy(tmp_path)
    shutil.rmtree(new)
    shutil.copytree(DATA / "quickstart-run", new)
    in_processes(base)
    in_processes(new, slow=slowed["config_id"])
    return base, new, slowed


def test_compare_fails_on_a_planted_20_percent_slowdown(runner, tmp_path, in_processes):
    base, new, slowed = _slowed_in_processes(tmp_path, in_processes)
    out = tmp_path / "cmp.html"
    junit, markdown = tmp_path / "ci" / "junit.xml", tmp_path / "ci" / "compare.md"
    result = runner.invoke(
        cli,
        [
            "compare",
            str(base),
            str(new),
            "-o",
            str(out),
            "--fail-on-regression",
            "--junit",
            junit,
            "--markdown",
            markdown,
        ],
    )
    assert result.exit_code == 1, result.output
    assert f"; comparison: {out}, JUnit: {junit}, Markdown: {markdown}" in result.output
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("17", "1")
    failed = [case for case in suite.iter("testcase") if case.find("failure") is not None]
    assert failed[0].get("name").startswith(slowed["config_id"])
    assert failed[0].find("failure").get("message") == (
        "REGRESSION: throughput -16.7 % (95 % CI -19.1 to -14.1; 12,245 -> 10,204 examples/s), step time shift "
        "+20.0 % (95 % CI +16.8 to +23.2), p 0.012, q 0.207, tested on process medians; beyond the 5 % threshold"
    )
    table = markdown.read_text().splitlines()
    assert table[0].startswith("**tfscale compare**: 17 configs compared, 1 significant regression(s) beyond 5 %")
    assert table[4].startswith(f"| **REGRESSION** | `{slowed['config_id']}` |")
    verdicts = [line for line in result.output.splitlines() if "REGRESSION" in line]
    assert len(verdicts) == 1 and verdicts[0].startswith(slowed["config_id"]) and "-16.7 %" in verdicts[0]
    assert "-16.7 % (-19.1 to -14.1)  +20.0 % (+16.8 to +23.2)" in verdicts[0]  # throughput CI, then the shift
    assert "1 significant regression(s) beyond 5 %" in result.output
    text = out.read_text()
    assert "Mann-Whitney U" in text and text.count('class="plotly-graph-div"') == 1
    assert runner.invoke(cli, ["compare", str(base), str(new), "-o", str(out)]).exit_code == 0
    # every row has a verdict, and p and q one fixed format
    table = result.output.split("\nnote: ")[0].splitlines()
    assert table[0].split()[:5] == ["config_id", "model", "mode", "layout", "throughput"]
    rows = [line for line in table[1:] if line[:12].isalnum()]
    assert len(rows) == 17
    assert all(line.rstrip().endswith(("REGRESSION", "slower", "faster", "same within noise")) for line in rows)
    assert all(re.search(r" (<0\.001|[01]\.\d{3}) +(<0\.001|[01]\.\d{3}) ", line) for line in rows), rows


def test_compare_without_enough_processes_gives_no_verdict_and_refuses_to_gate(runner, tmp_path):
    base, new, slowed = _slowed_copy(tmp_path)  # one process per config (two for the 1-device ones)
    out = tmp_path / "cmp.html"
    result = runner.invoke(cli, ["compare", str(base), str(new), "-o", str(out), "--fail-on-regression"])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == (
        "tfscale: error: --fail-on-regression: 17 of 17 compared configs have no verdict (fewer than 5 processes "
        "per side): run both with repeats: 5 or more"
    )
    summary = "17 configs compared, 0 significant regression(s) beyond 5 %, 0 newly failed, 0 missing in NEW, 17 "
    assert summary + "without a verdict" in result.output
    assert "note: 17 config(s) without a verdict: a verdict needs 5 or more fresh processes per side" in result.output
    slowed_line = next(line for line in result.output.splitlines() if line.startswith(slowed["config_id"]))
    assert slowed_line.rstrip().endswith("no verdict") and "-16.7 %" in slowed_line


def test_compare_as_json_for_scripts(runner, tmp_path, in_processes):
    base, new, slowed = _slowed_in_processes(tmp_path, in_processes)
    out = tmp_path / "cmp.html"
    args = ["compare", str(base), str(new), "-o", str(out), "--json"]
    result = runner.invoke(cli, [*args, "--fail-on-regression"])
    assert result.exit_code == 1  # the gate still decides the exit
    document = json.loads(result.stdout)  # JSON alone on standard output
    assert document["summary"].startswith("17 configs compared, 1 significant regression(s) beyond 5 %")
    assert document["gate_fails"] is True and document["written"]["comparison"] == str(out)
    assert (document["warnings"], document["unlike"], document["lost"], document["env_differences"]) == ([],) * 4
    regressed = [row for row in document["configs"] if row["verdict"] == "REGRESSION"]
    assert [row["config_id"] for row in regressed] == [slowed["config_id"]]
    assert regressed[0]["throughput_change"] == pytest.approx(1 / 1.2 - 1)
    assert len(document["configs"]) == 17
    assert runner.invoke(cli, args).exit_code == 0


def _without(run, drop, fail=None):
    """A copy of the run's records with config `drop` left out and config `fail` failed (out of memory)."""
    import json

    lines = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    for r in lines:
        if r["config_id"] == fail:
            r.update(status="failed", reason="out of memory: ResourceExhaustedError: OOM when allocating")
    kept = [r for r in lines if r["config_id"] != drop]
    (run / "records.jsonl").write_text("\n".join(json.dumps(r) for r in kept) + "\n")


def test_compare_gate_fails_on_a_newly_failed_and_on_a_missing_config(runner, tmp_path, in_processes):
    base, new = tmp_path / "quickstart" / "base", tmp_path / "quickstart" / "new"
    shutil.copytree(DATA / "quickstart-run", base)
    shutil.copytree(DATA / "quickstart-run", new)
    ids = list(
        dict.fromkeys(r["config_id"] for r in map(json.loads, (base / "records.jsonl").read_text().split("\n")[:-1]))
    )
    gate = ["-o", str(tmp_path / "c.html"), "--fail-on-regression"]
    in_processes(base)
    in_processes(new)
    _without(new, drop=ids[3], fail=ids[5])
    result = runner.invoke(cli, ["compare", str(base), str(new), *gate])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(
        line.startswith(f"NEWLY FAILED: {ids[5]} ")
        and line.endswith(": out of memory: ResourceExhaustedError: OOM when allocating")
        for line in lines
    ), result.output
    assert any(line.startswith(f"MISSING in NEW: {ids[3]} ") for line in lines)
    assert (
        "15 configs compared, 0 significant regression(s) beyond 5 %, 1 newly failed, 1 missing in NEW" in result.output
    )
    assert "Ok in BASE, not ok in NEW" in (tmp_path / "c.html").read_text()
    # --allow-missing lets a missing config pass, never a failed one
    assert runner.invoke(cli, ["compare", str(base), str(new), *gate, "--allow-missing"]).exit_code == 1
    shutil.rmtree(new)
    shutil.copytree(DATA / "quickstart-run", new)
    in_processes(new)
    _without(new, drop=ids[3])
    assert runner.invoke(cli, ["compare", str(base), str(new), *gate]).exit_code == 1
    assert runner.invoke(cli, ["compare", str(base), str(new), *gate, "--allow-missing"]).exit_code == 0


def test_export_csv_reads_back_with_pandas(runner, tmp_path):
    import pandas as pd

    run = tmp_path / "quickstart" / "r"
    shutil.copytree(DATA / "example-run", run)
    result = runner.invoke(cli, ["export", str(run)])
    assert result.exit_code == 0, result.output
    assert result.output == f"wrote 23 records to {run / 'records.csv'}\n"
    frame = pd.read_csv(run / "records.csv")
    assert len(frame) == 23
    assert {"config_id", "step_time_median_s", "scaling_efficiency"} <= set(frame.columns)


def test_predict_prints_predictions_and_the_holdout_check(runner):
    result = runner.invoke(cli, ["predict", str(DATA / "example-run"), "--devices", "8", "16", "64"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    # logical CPU devices, 16x beyond the largest count (4), fitted through two counts: no interval
    assert (
        "warning (!): cnn mirrored x64, mlp mirrored x64, transformer mirrored x64: 16x beyond the largest measured "
        "count (4); fitted on logical CPU devices that share cores: it tests the harness, not the hardware; fitted on "
        "2 points for 2 parameters: nothing checks the fit, so no interval"
    ) in lines
    assert "not predicted: parameter_server: asynchronous steps through parameter servers" in result.output
    # MWMS ran at one multi-device count (2 nodes): no line through one point; central_storage: no exposed figure
    assert (
        "not predicted: multi_worker_mirrored: communication measured at one multi-device count: alpha and beta "
        "need two" in lines
    )
    assert any(
        line.startswith("not predicted: central_storage: exposed communication not measured: ") for line in lines
    )
    old = runner.invoke(cli, ["predict", str(DATA / "example-run"), "--nodes", "8"])
    assert old.exit_code == 0 and "note: --nodes is deprecated: it always meant total devices; use --devices" in (
        old.output
    )
    assert lines[0].split()[:4] == ["model", "strategy", "devices", "fitted_on"]
    # 1, 2 and 4 devices: two points above one per strategy, fewer than a hold-out needs to validate anything
    assert [line for line in lines if line.startswith("hold-out: ")] == [
        "hold-out: none (a check needs three or more multi-device counts of a strategy: fitted on fewer, the "
        "model's two parameters fit any points)"
    ]
    assert any(" 16 " in line and "mirrored" in line for line in lines)
    assert sum(1 for line in lines if line.split()[2:3] == ["64"]) == 3  # 3 models, mirrored
    assert lines[-1].startswith("method: Model, per workload, strategy and link")


def test_schema_writes_the_json_schema_to_a_file_or_stdout(runner, tmp_path):
    from tfscale.suite.schema import schema_text

    out = tmp_path / "suite.schema.json"
    result = runner.invoke(cli, ["schema", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == schema_text()
    assert json.loads(runner.invoke(cli, ["schema"]).output)["title"] == "tfscale suite"


def test_what_reaches_a_terminal_has_its_control_characters_escaped():
    # A record's text (a reason, a model name) printed by any command passes through VisibleText; on a terminal
    # click strips no escape sequence itself.
    import io

    import click

    from tfscale.cli import VisibleText

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    click.echo("a\x1b[2Jb\rc\x00\u202e\n\td", file=VisibleText(terminal))
    assert terminal.getvalue() == "a\\x1b[2Jb\\rc\\x00\\u202e\n\td\n"


def test_click_usage_errors_pass_through_the_same_escaping(runner, tmp_path):
    suite = write(tmp_path, "name: x\nmatrix: {model: [mlp]}\n")
    result = runner.invoke(cli, ["launch", suite, "--target", "x\rfake line\u202e"])
    assert result.exit_code == 2
    assert "'x\\rfake line\\u202e' is not one of" in result.output and "\r" not in result.output


def test_export_without_pyarrow_is_one_line(runner, tmp_path, monkeypatch):
    import importlib.util
    import sys

    if importlib.util.find_spec("fastparquet") is not None:
        pytest.skip("fastparquet is installed: pandas writes Parquet without pyarrow")
    run = tmp_path / "quickstart" / "r"
    shutil.copytree(DATA / "quickstart-run", run)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as where pyarrow is not installed
    result = runner.invoke(cli, ["export", str(run), "--format", "parquet", "-o", str(tmp_path / "r.parquet")])
    assert result.exit_code == 2
    assert result.output == "tfscale: error: --format parquet needs pyarrow: pip install 'tfscale[parquet]'\n"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["report", "/nope"], "tfscale: error: Invalid value for 'PATHS...': Path '/nope' does not exist. "
                              "(see 'tfscale report --help')"),
        (["run"], "tfscale: error: Missing argument 'SUITE'. (see 'tfscale run --help')"),
        (["plan", "--bogus", "x"], "tfscale: error: No such option '--bogus'. (see 'tfscale plan --help')"),
    ],
)  # fmt: skip
def test_click_errors_are_one_line_and_exit_2_as_tfscale_errors_are(runner, args, line):
    result = runner.invoke(cli, args, prog_name="tfscale")
    assert (result.exit_code, result.output) == (2, line + "\n")


def test_the_group_alone_shows_its_help(runner):
    result = runner.invoke(cli, [], prog_name="tfscale")
    assert result.output.startswith("Usage: tfscale [OPTIONS] COMMAND [ARGS]...")


def test_plan_as_json_for_scripts(runner):
    result = runner.invoke(cli, ["plan", str(DATA.parent.parent / "suites" / "quickstart.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert (document["suite"], document["device"], len(document["specs"])) == ("quickstart", "cpu", 17)
    assert {spec["steps"] for spec in document["specs"]} == {"auto"} and document["specs"][0]["config_id"]


def test_predict_as_json_for_scripts(runner):
    from tfscale.analysis.predict import NOT_MODELLED

    result = runner.invoke(cli, ["predict", str(DATA / "example-run"), "--devices", "8", "64", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    predictions = document["predictions"]
    assert sorted({row["devices"] for row in predictions}) == [8, 64]
    assert sum(1 for row in predictions if row["devices"] == 64) == 3  # as the table: 3 models, mirrored
    # these records keep no samples of the compute-only step: no interval, null (not NaN, not 0)
    assert {(row["predicted_step_ci95_low_s"], row["predicted_step_ci95_high_s"]) for row in predictions} == {
        (None, None)
    }
    assert all(row["prediction_warnings"] for row in predictions if row["devices"] == 64)
    assert [row["what"] for row in document["not_predicted"]] == [
        "central_storage",
        "parameter_server",
        "multi_worker_mirrored",
    ]
    assert document["not_predicted"][1] == {"what": "parameter_server", "why": NOT_MODELLED["parameter_server"]}
    assert document["holdout"] == [] and document["method"].startswith("Model, per workload, strategy and link")


def test_predict_takes_several_runs_and_the_counts_after_devices(runner, tmp_path):
    for name in ("a", "b"):
        shutil.copytree(DATA / "example-run", tmp_path / name)
    result = runner.invoke(cli, ["predict", str(tmp_path / "a"), str(tmp_path / "b"), "--devices", "8", "16"])
    assert result.exit_code == 0, result.output
    bad = runner.invoke(cli, ["predict", str(tmp_path / "a"), "nope", "--devices", "8"])
    assert (bad.exit_code, bad.output) == (2, "tfscale: error: nope: no such file or folder (and not a device count)\n")


def test_launch_takes_time_limit_as_run_does_and_time_with_a_note(runner, tmp_path):
    suite = write(tmp_path, "name: x\nmatrix: {model: [mlp]}\n")
    for option in ("--time-limit", "--time"):
        out = tmp_path / option.strip("-")
        result = runner.invoke(cli, ["launch", suite, "--target", "slurm", "-o", str(out), option, "1:30:00"])
        assert result.exit_code == 0, result.output
        assert "#SBATCH --time=1:30:00" in (out / "slurm.sbatch").read_text().splitlines()
        assert ("note: --time is deprecated" in result.output) == (option == "--time")
