"""Where the step goes, by op: a profiled mlp's trace grouped (real TensorFlow worker, real profiler trace)."""

import json

import pytest

from tfscale.cli import cli
from tfscale.measures.opgroups import GROUP_COLUMNS

pytestmark = [pytest.mark.e2e, pytest.mark.workers]

SUITE = """
name: ops
defaults: {repeats: 1, model: mlp, model_size: medium, strategy: one_device, profile: true, profile_steps: 5,
           steps: 10, warmup_steps: 3, timeout_s: 300}
matrix: {batch_size: [64]}
"""


def test_a_profiled_mlp_step_is_mostly_matmul_and_its_groups_add_up(runner, tmp_path):
    suite = tmp_path / "ops.yaml"
    suite.write_text(SUITE)
    result = runner.invoke(
        cli, ["run", str(suite), "--results-dir", str(tmp_path / "results"), "--reports-dir", str(tmp_path / "r")]
    )
    assert result.exit_code == 0, result.output
    [records] = (tmp_path / "results" / "ops").glob("*/records.jsonl")
    [record] = [json.loads(line) for line in records.read_text().splitlines()]
    assert record["status"] == "ok" and record["trace_error"] is None
    groups = {column: record[column] for column in GROUP_COLUMNS.values()}
    # by construction the groups share out the traced window; the window is the traced step less the host's own
    # time before the first op and after the last one
    assert sum(groups.values()) == pytest.approx(record["op_window_s"], rel=1e-9)
    assert record["op_window_s"] == pytest.approx(record["traced_step_s"], rel=0.05)
    assert max(groups, key=groups.get) == "op_time_matmul_s"
    assert groups["op_time_matmul_s"] > 0.5 * record["op_window_s"]
    assert record["op_time_collectives_s"] == 0.0  # one device: no collective ran
    assert len(record["top_ops"]) == 10 and "MatMul" in record["top_ops"][0]
    assert "Where the step goes, by op" in (tmp_path / "r" / "ops.html").read_text()
