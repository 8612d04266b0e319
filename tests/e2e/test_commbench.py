"""`tfscale commbench` and the suite option on real strategies: mirrored on 4 logical CPUs, 2 local MWMS workers."""

import json

import pytest

from tfscale.cli import cli
from tfscale.measures.comm import fit_alpha_beta
from tfscale.store.records import SCHEMA_VERSION

from .support import workers_left

pytestmark = [pytest.mark.e2e, pytest.mark.workers]


@pytest.mark.parametrize(
    ("args", "replicas"),
    [
        (["--strategy", "mirrored", "--devices-per-node", "4"], 4),
        (["--strategy", "multi_worker_mirrored", "--devices-per-node", "1", "--nodes", "2"], 2),
    ],
)
def test_commbench_prints_and_stores_the_size_table(runner, tmp_path, args, replicas):
    result = runner.invoke(
        cli,
        [
            "commbench",
            *args,
            "--max-bytes",
            "65536",
            "--iters",
            "3",
            "--warmup",
            "1",
            "--results-dir",
            str(tmp_path),
            "--run-id",
            "c",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    table = [line.split() for line in lines if line.strip() and not line.startswith(("#", "stored"))]
    assert [int(row[0]) for row in table] == [1024, 2048, 4096, 8192, 16384, 32768, 65536]
    [stored] = [
        json.loads(line) for line in (tmp_path / "commbench" / "c" / "commbench.jsonl").read_text().splitlines()
    ]
    assert stored["replicas"] == replicas and stored["schema_version"] == SCHEMA_VERSION
    n = replicas
    for row in stored["rows"]:
        assert row["time_s"] > 0
        assert row["busbw_bytes_per_s"] == pytest.approx(row["size_bytes"] / row["time_s"] * 2 * (n - 1) / n)
    fit = fit_alpha_beta([r["size_bytes"] for r in stored["rows"]], [r["time_s"] for r in stored["rows"]], n)
    assert (stored["alpha_s"], stored["beta_s_per_byte"]) == pytest.approx((fit.alpha_s, fit.beta_s_per_byte))
    assert workers_left(tmp_path) == []


def test_suite_commbench_gives_each_record_the_model_prediction(runner, tmp_path):
    suite = tmp_path / "cb.yaml"
    suite.write_text(
        "name: cb\ndefaults: {repeats: 1, model_size: tiny, steps: 6, warmup_steps: 2, timeout_s: 120}\n"
        "commbench: {max_bytes: 65536, iters: 3, warmup: 1}\n"
        "matrix: {strategy: [mirrored], devices_per_node: [1, 2]}\n"
    )
    result = runner.invoke(
        cli, ["run", str(suite), "--results-dir", str(tmp_path / "r"), "--no-report", "--run-id", "a"]
    )
    assert result.exit_code == 0, result.output
    run = tmp_path / "r" / "cb" / "a"
    one, two = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    [sweep] = [json.loads(line) for line in (run / "commbench.jsonl").read_text().splitlines()]
    assert one["comm_time_model_s"] is None  # one replica: nothing to communicate
    assert two["comm_time_model_s"] == pytest.approx(
        sweep["alpha_s"] + sweep["beta_s_per_byte"] * two["grad_bytes"] * 2 * (2 - 1) / 2
    )
