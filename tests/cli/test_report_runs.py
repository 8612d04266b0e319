"""Reports of several runs of one suite, and of several suites (issue 32): every lookup is keyed by suite, run and
config (the same config ids repeat in each run; `tfscale report results/<suite>` of 2 to 6 runs crashed)."""

import json
import shutil
from pathlib import Path

import pytest

import tfscale
from tfscale.cli import cli

DATA = Path(__file__).resolve().parent.parent / "data"


def runs_of(root: Path, count: int, suite: str = "quickstart") -> Path:
    """`count` runs of the committed quickstart run under root/<suite>/, each with its own run id."""
    for i in range(count):
        run = root / suite / f"r{i}"
        shutil.copytree(DATA / "quickstart-run", run)
        records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
        scale = 1 + i / 10  # each run a little slower: a lookup that mixes runs gives other figures
        for record in records:
            record |= {"run_id": f"r{i}", "suite": suite}
            for column in ("step_time_median_s", "step_time_ci95_low_s", "step_time_ci95_high_s"):
                if record.get(column) is not None:
                    record[column] *= scale
        (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return root / suite


@pytest.mark.parametrize("count", [1, 2, 3, 6, 7])
def test_report_of_several_runs_of_one_suite(runner, tmp_path, count):
    suite = runs_of(tmp_path / "results", count)
    result = runner.invoke(cli, ["report", str(suite), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"report: {tmp_path / 'r.html'}"
    assert (tmp_path / "r.html").stat().st_size > 100_000


def test_report_of_two_suites_with_the_same_run_ids(runner, tmp_path):
    runs_of(tmp_path / "results", 2, "first")
    runs_of(tmp_path / "results", 2, "second")
    result = runner.invoke(cli, ["report", str(tmp_path / "results"), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output


def test_report_of_two_runs_from_python(tmp_path):
    suite = runs_of(tmp_path / "results", 2)
    assert tfscale.report(suite, tmp_path / "r.html", quiet=True) == tmp_path / "r.html"
