"""Untrusted input stays data (issue 37): a corpus of hostile strings (tests/unit/hostile_strings.py) pushed
through plan, launch (every target), collect, report, compare (HTML, JUnit, Markdown) and export. Nothing may
execute (a canary file would appear), nothing may be written outside the target folder, every output must parse
(bash -n, YAML, XML, CSV) and show the strings as text, and no control character may reach the terminal.
`tfscale run` of one tiny config with hostile values is in tests/e2e/test_hostile_run.py."""

from __future__ import annotations

import csv
import html.parser
import json
import os
import re
import shlex
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tfscale.cli import cli
from tfscale.untrusted import is_name, unsafe_character

from .hostile_strings import HOSTILE, MARKUP, hostile, hostile_run

SUITE = """name: h
defaults: {{model_size: tiny, timeout_s: 120, repeats: 1}}
matrix: {{strategy: [multi_worker_mirrored, parameter_server], nodes: [2]}}
include: [{{strategy: one_device}}]
{extra}"""


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def assert_terminal_clean(output: str) -> None:
    assert not any(unsafe_character(line) for line in output.split("\n") if "\t" not in line), output[-500:]


@pytest.fixture
def canary(tmp_path) -> Path:
    path = tmp_path / "PWNED"
    yield path
    assert not path.exists(), "a hostile string was executed"


@pytest.mark.parametrize("index", range(len(HOSTILE)))
def test_plan_refuses_hostile_names_in_one_line(runner, tmp_path, canary, index):
    text = hostile(canary)[index]
    suites = {
        "model name": SUITE.format(extra=f"models: {{{json.dumps(text)}: {{entry: 'm:f'}}}}\n"),
        "suite name": SUITE.format(extra="").replace("name: h", f"name: {json.dumps(text)}"),
        "matrix value": SUITE.format(extra=f"exclude: [{{model: {json.dumps(text)}}}]\n"),
    }
    for what, suite in suites.items():
        path = tmp_path / "s.yaml"
        path.write_text(suite)
        result = runner.invoke(cli, ["plan", str(path)])
        assert result.exit_code == 2, (what, result.output)
        assert result.output.startswith(f"tfscale: error: {path}: ") and result.output.count("\n") == 1, what
        assert_terminal_clean(result.output)


def _fake_srun(tmp_path: Path) -> dict[str, str]:
    """PATH with an `srun` that only records its arguments: the batch script runs as far as its commands go."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    srun = bin_dir / "srun"
    srun.write_text('#!/bin/sh\nprintf "%s\\n" "$@" >> "$(dirname "$0")/srun.args"\n')
    srun.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def _check_emitted(target: str, out: Path, tmp_path: Path, python: str) -> None:
    """What a target wrote parses, runs without executing any string of the corpus, and carries `python` as one
    literal argument."""
    if target == "slurm":
        script = out / "slurm.sbatch"
        assert subprocess.run(["bash", "-n", script], check=False).returncode == 0
        env = _fake_srun(tmp_path)
        subprocess.run(["bash", script], cwd=out, env=env, capture_output=True, timeout=60, check=False)
        args = (tmp_path / "bin" / "srun.args").read_text().splitlines()
        assert args.count(python.split("\n")[0]) == 3  # each step's worker starts with the interpreter, verbatim
        (tmp_path / "bin" / "srun.args").unlink()
    elif target == "hosts":
        lines = [line for line in (out / "hosts.txt").read_text().splitlines() if not line.startswith("#")]
        assert lines
        for line in lines:
            host, command = line.split(": ", 1)
            assert is_name(host)
            assert subprocess.run(["bash", "-n", "-c", command], check=False).returncode == 0
            words = shlex.split(command)
            assert python in words
            subprocess.run(["bash", "-c", command], cwd=out, capture_output=True, timeout=60, check=False)
    else:
        for manifest in out.glob("*.yaml"):
            _, tfjob = yaml.safe_load_all(manifest.read_text())
            for replica in tfjob["spec"]["tfReplicaSpecs"].values():
                assert replica["template"]["spec"]["containers"][0]["command"][0] == python


@pytest.mark.parametrize("target", ["slurm", "kubernetes", "hosts"])
def test_launch_refuses_or_quotes_every_hostile_option(runner, tmp_path, canary, target):
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.format(extra=""))
    options = ["--time-limit", "--partition", "--account", "--image", "--hosts", "--pod-memory", "--python"]
    accepted = 0
    for n, text in enumerate(hostile(canary)):
        for option in options:
            out = tmp_path / f"out-{n}-{option.strip('-')}"
            hosts = [] if option == "--hosts" else ["--hosts", "h1,h2,h3,h4"]
            image = ["--image", "img:1"] if target == "kubernetes" and option != "--image" else []
            result = runner.invoke(
                cli, ["launch", str(suite), "--target", target, "-o", str(out), *hosts, *image, option, text]
            )
            assert_terminal_clean(result.output)
            if result.exit_code != 0:
                assert result.exit_code == 2 and result.output.count("\n") == 1, (option, text, result.output)
                assert result.output.startswith(f"tfscale: error: {option} "), result.output
                assert not out.exists()
                continue
            assert option == "--python" and unsafe_character(text) is None, (option, text)
            accepted += 1
            _check_emitted(target, out, tmp_path, text)
    assert accepted == sum(unsafe_character(t) is None for t in hostile(canary))  # each safe string as --python


def _hostile_launch_folder(runner, tmp_path: Path, canary: Path, field: str, value: str) -> Path:
    tmp_path.mkdir()
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.format(extra=""))
    out = tmp_path / "launch"
    assert runner.invoke(cli, ["launch", str(suite), "--target", "slurm", "-o", str(out)]).exit_code == 0
    for path in (out / "specs").glob("*.json"):
        if path.name != "order.json":
            path.write_text(json.dumps(json.loads(path.read_text()) | {field: value}))
    return out


@pytest.mark.parametrize("field", ["suite", "config_id", "model"])
def test_collect_refuses_specs_with_hostile_names(runner, tmp_path, canary, field):
    for n, text in enumerate(hostile(canary)):
        folder = _hostile_launch_folder(runner, tmp_path / str(n), canary, field, text)
        before = files_under(tmp_path)
        results = tmp_path / str(n) / "results-root"
        result = runner.invoke(cli, ["collect", str(folder), "--results-dir", str(results), "--run-id", "r1"])
        assert result.exit_code == 2 and result.output.count("\n") == 1, (field, text, result.output)
        assert f": {field}: not a name" in result.output
        assert files_under(tmp_path) == before
        assert_terminal_clean(result.output)


class Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(page: str) -> set[tuple[str, str]]:
    parser = Tags()
    parser.feed(page)
    return {(tag, attrs.get("href", "") + attrs.get("src", "")) for tag, attrs in parser.tags}


def _figure_strings(page: str) -> list[str]:
    found = []

    def walk(value):
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    for data in re.findall(r'<script type="application/json" class="figure-data"[^>]*>(.*?)</script>', page, re.S):
        walk(json.loads(data.replace("<\\/", "</")))
    return found


def test_report_of_hostile_records_shows_them_as_text(runner, tmp_path, canary):
    run = hostile_run(tmp_path / "results", canary)
    (tmp_path / "results" / "outside.csv").write_text("t_s,host_cpu_percent\n0,4242.4242\n")
    clean = tmp_path / "clean.html"
    plain = tmp_path / "results" / "quickstart" / "plain"
    import shutil

    from .hostile_strings import DATA

    shutil.copytree(DATA / "quickstart-run", plain)
    assert runner.invoke(cli, ["report", str(plain), "-o", str(clean)]).exit_code == 0
    report = tmp_path / "report.html"
    report.write_text("the previous report")
    before = files_under(tmp_path)
    result = runner.invoke(cli, ["report", str(run), "-o", str(report)])
    assert result.exit_code == 0, result.output
    assert files_under(tmp_path) == before  # the report replaced, nothing else written
    assert_terminal_clean(result.output)
    page = report.read_text()
    assert not any(markup in page for markup in MARKUP)
    assert _tags(page) <= _tags(clean.read_text()) | {("td", ""), ("li", ""), ("tr", ""), ("th", "")}
    assert "4242.4242" not in page  # the series a record names outside its run folder is not read
    shown = _figure_strings(page)
    # no markup but plotly express's own line breaks between a template's values
    assert shown and not any(re.search(r"<[A-Za-z/]", s.replace("<br>", "")) or unsafe_character(s) for s in shown)
    assert any("&lt;img src=x onerror=alert(1)&gt;" in s for s in shown)  # plotly shows &lt; as "<"


def test_report_never_writes_over_the_records(runner, tmp_path, canary):
    run = hostile_run(tmp_path / "results", canary)
    records = (run / "records.jsonl").read_text()
    for name in ("records.jsonl", "env.json", "commbench.jsonl"):
        result = runner.invoke(cli, ["report", str(run), "-o", str(run / name)])
        assert result.exit_code == 2 and "a run's own file (records, environment, plan)" in result.output
    assert (run / "records.jsonl").read_text() == records


def test_compare_of_hostile_records_parses_as_xml_and_markdown(runner, tmp_path, canary):
    base = hostile_run(tmp_path / "results", canary, "base")
    new = hostile_run(tmp_path / "results", canary, "new")
    out = tmp_path / "out"
    result = runner.invoke(
        cli,
        ["compare", str(base), str(new), "-o", str(out / "c.html"), "--junit", str(out / "j.xml"),
         "--markdown", str(out / "c.md")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert_terminal_clean(result.output)
    assert {p.name for p in files_under(out)} == {"c.html", "j.xml", "c.md"}
    junit = ET.parse(out / "j.xml").getroot()
    names = [case.get("name") for case in junit.iter("testcase")]
    assert names and not any(unsafe_character(n) for n in names)
    assert any("<img src=x onerror=alert(1)>" in n for n in names)  # XML escapes it; the name reads as written
    markdown = (out / "c.md").read_text()
    assert not any(markup in markdown for markup in MARKUP if markup != "</details>") and "\r" not in markdown
    assert markdown.count("<details>") == markdown.count("</details>") == 1  # tfscale's own, once
    assert not any(m in (out / "c.html").read_text() for m in MARKUP)


def test_export_of_hostile_records_stays_in_its_folder(runner, tmp_path, canary):
    run = hostile_run(tmp_path / "results", canary)
    before = files_under(tmp_path)
    board = tmp_path / "board"
    result = runner.invoke(cli, ["export", str(run), "--format", "tensorboard", "-o", str(board)])
    if "needs the tensorboard package" in result.output:
        pytest.skip("tensorboard is an optional extra, not installed here")
    assert result.exit_code == 0, result.output
    assert {p for p in files_under(tmp_path) - before if board not in p.parents and p != board} == set()
    trials = {p.parent.name for p in board.rglob("events.*") if p.parent != board}
    assert len(trials) > 10 and all(is_name(t) for t in trials)
    table = tmp_path / "t.csv"
    result = runner.invoke(cli, ["export", str(run), "-o", str(table)])
    assert result.exit_code == 0, result.output
    with open(table, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    models = {r["model"] for r in rows}  # each cell read back as it was written, one field whatever it holds
    assert len(models) >= 10 and models <= {t.replace("\ud800", "\ufffd") for t in hostile(canary)}
    result = runner.invoke(cli, ["export", str(run), "-o", str(run / "records.jsonl")])
    assert result.exit_code == 2
