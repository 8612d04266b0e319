"""data: files end to end: every strategy and zoo model reading its dataset files, user models with and without
their own dataset_fn, a pipeline made slow on purpose found input-bound (and no synthetic config ever), each
example read once per epoch over two MultiWorkerMirrored workers, and the dataset cache reused, rebuilt when damaged,
never read half-written."""

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tfscale import metrics as m
from tfscale.analysis import BREAKDOWN_FRACTIONS, add_scaling, loss_breakdown
from tfscale.cli import cli
from tfscale.contract import TEST_DATA_DELAY_ENV
from tfscale.store.records import load_results
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

from .support import workers_left

pytestmark = [pytest.mark.e2e, pytest.mark.workers, pytest.mark.tf]
SUPPORT = Path(__file__).parent / "support"

QUICK = (
    "{repeats: 1, model_size: tiny, batch_size: 16, max_measure_s: 0.4, max_warmup_s: 0.4, telemetry_hz: 0, "
    "timeout_s: 180}"
)

EVERY_STRATEGY = f"""
name: files
device: cpu
models:
  plain: {{entry: "user_models:tiny_regressor"}}
  piped: {{entry: "user_models:regressor_with_pipeline"}}
defaults: {QUICK}
include:
  - {{model: mlp, strategy: one_device, data: files, data_examples: 512}}
  - {{model: cnn, strategy: mirrored, devices_per_node: 2, data: files, data_examples: 256, cache: true}}
  - {{model: transformer, strategy: central_storage, devices_per_node: 2, data: files, data_examples: 256}}
  - {{model: mlp, strategy: multi_worker_mirrored, nodes: 2, data: files, data_compression: gzip}}
  - {{model: mlp, strategy: parameter_server, nodes: 2, data: files}}
  - {{model: plain, strategy: central_storage, devices_per_node: 2, data: files}}
  - {{model: plain, strategy: parameter_server, nodes: 2, data: files}}
  - {{model: piped, strategy: one_device, data: files}}
  - {{model: piped, strategy: mirrored, devices_per_node: 2, data: files}}
  - {{model: piped, strategy: multi_worker_mirrored, nodes: 2, data: files}}
  - {{model: piped, strategy: parameter_server, nodes: 2, data: files}}
"""


def run_suite(tmp: Path, name: str, text: str, run_id: str = "r1") -> Path:
    suite = tmp / f"{name}.yaml"
    suite.write_text(text)
    shutil.copy(SUPPORT / "user_models.py", tmp / "user_models.py")
    args = ["run", str(suite), "--results-dir", str(tmp / "results"), "--reports-dir", str(tmp / "reports")]
    result = CliRunner().invoke(cli, [*args, "--run-id", run_id])
    assert result.exit_code == 0, result.output
    return tmp / "results" / name / run_id


def test_every_strategy_and_model_reads_files_with_the_input_figures(tmp_path):
    run = run_suite(tmp_path, "files", EVERY_STRATEGY)
    frame = load_results(run)
    assert (frame[m.STATUS] == m.STATUS_OK).all(), frame[[m.MODEL, m.STRATEGY, m.REASON]].to_string()
    assert set(frame[m.STRATEGY]) == {"one_device", "mirrored", "central_storage", "multi_worker_mirrored",
                                      "parameter_server"}  # fmt: skip
    for _, row in frame.iterrows():
        user_pipeline = row[m.MODEL] == "piped"
        assert row[m.DATA_SOURCE] == ("user dataset_fn" if user_pipeline else "tfrecord files")
        assert row[m.INPUT_THROUGHPUT_EXAMPLES_PER_S] > 0
        assert row[m.INPUT_HEADROOM] == pytest.approx(
            row[m.INPUT_THROUGHPUT_EXAMPLES_PER_S] / row[m.THROUGHPUT_EXAMPLES_PER_S], rel=1e-6
        )
        assert len(row[m.INPUT_MEMORY_TIMES_S]) >= 10
        wait = row[m.INPUT_WAIT_TIME_S]
        assert row[m.INPUT_WAIT_TIME_CI95_LOW_S] <= wait <= row[m.INPUT_WAIT_TIME_CI95_HIGH_S]
        assert isinstance(row[m.INPUT_BOUND], bool) and row[m.INPUT_BOUND_NOTE]
        if not user_pipeline:
            assert Path(row[m.DATA_CACHE_PATH]).is_dir() and row[m.DATA_CACHE_BYTES] > 0
    cnn = frame[frame[m.MODEL] == "cnn"].iloc[0]
    assert "JPEG decode" in cnn[m.INPUT_PIPELINE] and "cache" in cnn[m.INPUT_PIPELINE]
    assert "gzip" in frame[frame[m.DATA_COMPRESSION] == "gzip"].iloc[0][m.INPUT_PIPELINE]
    assert workers_left(tmp_path) == []
    report = (tmp_path / "reports" / "files.html").read_text()
    assert 'id="input"' in report and "configs that read files are input-bound" in report


SLOW = f"""
name: slow
device: cpu
defaults: {QUICK}
matrix:
  model: [mlp]
  data: [synthetic, files]
  strategy: [one_device, mirrored]
  devices_per_node: [1, 2]
exclude:
  - {{strategy: one_device, devices_per_node: 2}}
  - {{strategy: mirrored, devices_per_node: 1}}
"""


def test_a_slow_pipeline_is_input_bound_and_no_synthetic_config_is(tmp_path, monkeypatch):
    # 3 ms per example: a batch of 16 takes the pipeline >= 24 ms on 2 cores, against a step of about 2 ms
    monkeypatch.setenv(TEST_DATA_DELAY_ENV, "3")
    frame = add_scaling(load_results(run_suite(tmp_path, "slow", SLOW)))
    assert (frame[m.STATUS] == m.STATUS_OK).all()
    files = frame[frame[m.DATA] == "files"]
    synthetic = frame[frame[m.DATA] == "synthetic"]
    assert len(files) == 2 and len(synthetic) == 2
    assert files[m.INPUT_BOUND].tolist() == [True, True], files[m.INPUT_BOUND_NOTE].tolist()
    assert all("test delay 3 ms per example" in text for text in files[m.INPUT_PIPELINE])
    assert synthetic[m.INPUT_BOUND].isna().all() and synthetic[m.INPUT_WAIT_TIME_S].isna().all()
    assert (synthetic[m.DATA_SOURCE] == "synthetic in-memory batch").all()
    # each files config's baseline is the 1-device files config, each synthetic one's the synthetic one
    by_id = frame.set_index(m.CONFIG_ID)
    for _, row in frame[frame[m.DEVICES] == 2].iterrows():
        assert by_id.loc[row[m.BASELINE_CONFIG_ID], m.DATA] == row[m.DATA]
    breakdown = loss_breakdown(frame)
    assert len(breakdown) == 2
    for _, row in breakdown.iterrows():
        terms = sum(row[term] for term in BREAKDOWN_FRACTIONS)  # every term, compute growth included
        assert terms == pytest.approx(row[m.GAP_S], abs=1e-12)
        assert row[m.INPUT_WAIT_S] >= 0


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def test_two_multi_worker_mirrored_workers_read_each_example_once_per_epoch(tmp_path):
    text = (
        "name: shards\ndevice: cpu\ndefaults: {repeats: 1, model_size: tiny, batch_size: 8, data: files, "
        "data_examples: 300, "
        "data_shards: 6}\ninclude: [{model: mlp, strategy: multi_worker_mirrored, nodes: 2}]\n"
    )
    [spec] = expand(parse_suite(text, "shards.yaml")).specs
    cluster = {"worker": [f"127.0.0.1:{p}" for p in free_ports(2)]}
    env = os.environ | {"TF_CPP_MIN_LOG_LEVEL": "2"}
    outs = [tmp_path / f"ids-{i}.txt" for i in range(2)]
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                str(SUPPORT / "input_shards.py"),
                json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}}),
                json.dumps(spec.to_dict()),
                str(outs[i]),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    try:
        for worker in workers:
            output, _ = worker.communicate(timeout=180)
            assert worker.returncode == 0, output[-3000:]
    finally:
        for worker in workers:
            worker.kill()
    read = [[int(line) for line in out.read_text().split()] for out in outs]
    assert all(read), "each worker read examples"
    assert not set(read[0]) & set(read[1]), "no example read by both workers"
    everything = read[0] + read[1]
    assert len(everything) == len(set(everything)) == 300, "each example read once, none missed"


def test_the_dataset_cache_is_reused_and_rebuilt_when_damaged_or_partial(tmp_path, monkeypatch):
    from tfscale.host.envinfo import CACHE_DIR_ENV
    from tfscale.worker.files import MANIFEST, ensure_dataset, read_complete
    from tfscale.worker.models import cnn

    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    workload = cnn("tiny")
    what = {"zoo": "cnn", "size": "tiny"}

    def ensure(compression="none"):
        return ensure_dataset(workload, what, 64, 4, compression, seed=0)

    first = ensure()
    assert first.generation_s > 0 and first.examples == 64 and len(first.files) == 4
    again = ensure()
    assert again.generation_s == 0.0 and again.path == first.path and again.files == first.files

    damaged = Path(first.files[2])  # one byte changed: same size, another CRC
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    assert read_complete(first.path, "none") is None
    rebuilt = ensure()
    assert rebuilt.generation_s > 0 and read_complete(first.path, "none") is not None

    (first.path / MANIFEST).unlink()  # a folder without its manifest: half-written by someone, never read
    assert ensure().generation_s > 0
    stale = first.path.parent / f".tmp-{first.path.name}-999999"  # a writer killed mid-way
    stale.mkdir()
    shutil.rmtree(first.path)
    assert ensure().generation_s > 0 and not stale.exists()

    other = ensure("gzip")  # another compression: other bytes, another folder
    assert other.path != first.path and other.generation_s > 0
