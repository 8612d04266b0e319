"""Results that cannot crash the readers: the committed quickstart records with fields of random types or values,
lines of random bytes, a newer schema. Loading, analysing, predicting, comparing and exporting must succeed or
raise one TfscaleError line (a skipped line warns); never another exception. Seeded."""

import json
import random
import shutil
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from tfscale.analysis import add_scaling, summary_rows
from tfscale.analysis.compare import compare, lost_configs
from tfscale.analysis.findings import best_rows, failed_lines, findings_table, losses
from tfscale.analysis.predict import holdout, predict, unmodelled
from tfscale.cli import cli
from tfscale.errors import RecordWarning, TfscaleError
from tfscale.htmlreport import render
from tfscale.store.records import load_results

from .generated_suites import random_value

DATA = Path(__file__).resolve().parents[1] / "data" / "quickstart-run"
CASES = 300


def damaged(rng: random.Random, lines: list[str]) -> list[str]:
    lines = list(lines)
    for _ in range(rng.randrange(1, 4)):
        i = rng.randrange(len(lines))
        kind = rng.randrange(10)
        if kind == 0:
            lines[i] = rng.randbytes(rng.randrange(1, 200)).decode("latin-1").replace("\n", "")
        elif kind == 1:
            lines[i] = json.dumps(random_value(rng))
        else:
            try:
                record = json.loads(lines[i])
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict):
                continue
            key = rng.choice(list(record))
            record[key] = random_value(rng)
            lines[i] = json.dumps(record)
    return lines


def export_frame(run: Path) -> None:
    """`tfscale export` of the run: it exits 0 or 2 (TfscaleError in one line), never with another exception."""
    result = CliRunner().invoke(cli, ["export", str(run), "-o", str(run / "x.csv")])
    if result.exit_code == 2:
        raise TfscaleError(result.output.strip().splitlines()[-1].removeprefix("tfscale: error: "))
    assert result.exit_code == 0 and result.exception is None, result.output


def read_everything(base: Path, run: Path, render_too: bool = False) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecordWarning)
        if render_too:  # the whole report, and the export: what `tfscale report` and `tfscale export` do
            render(load_results(run), {}, "fuzz")
            export_frame(run)
        frame = add_scaling(load_results(run))
        summary_rows(frame)
        best = best_rows(frame)
        findings_table(best), losses(frame, best), failed_lines(frame)
        predict(frame, [8, 64]), holdout(frame), unmodelled(frame)
        before = load_results(base)
        compare(before, frame), lost_configs(before, frame)


def test_hundreds_of_damaged_runs_load_or_give_one_line(tmp_path, capsys):
    rng = random.Random(20261203)
    lines = (DATA / "records.jsonl").read_text().splitlines()
    outcomes = {"read": 0, "refused": 0}
    for n in range(CASES):
        run = tmp_path / f"r{n}"
        run.mkdir()
        (run / "records.jsonl").write_text("\n".join(damaged(rng, lines)) + "\n", encoding="utf-8")
        try:
            read_everything(DATA, run, render_too=n % 10 == 0)
            outcomes["read"] += 1
        except TfscaleError as error:
            assert "\n" not in str(error) and str(error).startswith(str(run)), (n, str(error))
            outcomes["refused"] += 1
        shutil.rmtree(run)
    with capsys.disabled():
        print(f"\nresults fuzz: {CASES} damaged runs: {outcomes['read']} read, {outcomes['refused']} refused")


def test_a_records_file_that_is_a_folder_or_binary_is_named(tmp_path):
    (tmp_path / "a" / "records.jsonl").mkdir(parents=True)
    with pytest.raises(TfscaleError, match=r"a: no records\.jsonl found"):
        load_results(tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "records.jsonl").write_bytes(random.Random(1).randbytes(3000).replace(b"\n", b""))
    with pytest.warns(RecordWarning), pytest.raises(TfscaleError, match="no readable records"):
        load_results(tmp_path / "b")
