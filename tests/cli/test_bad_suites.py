"""Malformed suites through the real CLI: exit code 2, one line, naming the file and the offending key."""

import pytest

from tfscale.cli import cli

BASE = "name: s\nmatrix: {model: [mlp]}\n"

CASES = [
    # (suite text, the key the message must name, a phrase it must contain)
    ("name: s\nmatrix: {model: [mlp]\n", "s.yaml:3:1", "YAML syntax error"),
    ("name: s\nmatrix:\n  model: [mlp\n  strategy: [mirrored]\n", "s.yaml:4:", "YAML syntax error"),
    ("\t- bad", "s.yaml:1:1", "YAML syntax error"),
    ("", "s.yaml", "a suite must be a mapping"),
    ("- [1, 2]\n", "s.yaml", "a suite must be a mapping"),
    ("matrix: {model: [mlp]}\n", "name", "required key is missing"),
    ("name: 'bad name!'\nmatrix: {model: [mlp]}\n", "name", "should match pattern"),
    (BASE + "colour: red\n", "colour", "unknown key"),
    (BASE + "path: x\n", "path", "unknown key"),
    ("name: s\nmatrix: {modle: [mlp]}\n", "matrix.modle", "unknown key 'modle'"),
    ("name: s\nmatrix: {}\n", "matrix", "empty"),
    ("name: s\nmatrix: {model: []}\n", "matrix.model", "empty list"),
    ("name: s\nmatrix: {model: mlp}\n", "matrix.model", "valid list"),
    ("name: s\nmatrix: {model: [resnet9]}\n", "matrix.model[0]", "unknown model 'resnet9'"),
    ("name: s\nmatrix: {strategy: [horovod]}\n", "matrix.strategy[0]", "unknown strategy 'horovod'"),
    ("name: s\nmatrix: {precision: [fp8]}\n", "matrix.precision[0]", "unknown value 'fp8'"),
    ("name: s\nmatrix: {batch_size: [0]}\n", "matrix.batch_size[0]", "must be >= 1"),
    ("name: s\nmatrix: {batch_size: [big]}\n", "matrix.batch_size[0]", "expected int"),
    ("name: s\nmatrix: {jit: [yes_please]}\n", "matrix.jit[0]", "expected bool"),
    ("name: s\nmatrix: {nodes: [1.5]}\n", "matrix.nodes[0]", "expected int"),
    ("name: s\nmatrix: {steps: [1, 2]}\n", "matrix.steps", "cannot be swept"),
    ("name: s\ndefaults: {steps: 0}\nmatrix: {model: [mlp]}\n", "defaults.steps", "must be >= 1"),
    ("name: s\ndefaults: {timeout_s: soon}\nmatrix: {model: [mlp]}\n", "defaults.timeout_s", "expected float"),
    ("name: s\ndefaults: {model_size: huge}\nmatrix: {model: [mlp]}\n", "defaults.model_size", "unknown value"),
    ("name: s\ndefaults: [1]\nmatrix: {model: [mlp]}\n", "defaults", "valid dictionary"),
    ("name: s\ndevice: tpu\nmatrix: {model: [mlp]}\n", "device", "'cpu' or 'gpu'"),
    (BASE + "exclude: [{precision: [float32, fp4]}]\n", "exclude[0].precision", "unknown value 'fp4'"),
    (BASE + "include: [{strategy: magic}]\n", "include[0].strategy", "unknown strategy 'magic'"),
    (BASE + "include: [{colour: red}]\n", "include[0].colour", "unknown key 'colour'"),
    (BASE + "models: {m: {entry: nocolon}}\n", "models.m.entry", 'must be "module:function"'),
    (BASE + "models: {m: {entry: 'a:b', extra: 1}}\n", "models.m.extra", "unknown key"),
    (BASE + "commbench: {max_bytes: 1}\n", "commbench.max_bytes", "greater than or equal"),
    ("name: s\nmatrix: {strategy: [one_device], devices_per_node: [2]}\n", "devices_per_node=2", "exactly one device"),
    ("name: s\nmatrix: {strategy: [mirrored], cross_device_ops: [nccl]}\n", "cross_device_ops=nccl", "no CPU kernel"),
    (
        "name: s\nmatrix: {strategy: [multi_worker_mirrored], devices_per_node: [2]}\n",
        "devices_per_node=2",
        "exactly one replica",
    ),
    ("name: s\nmatrix: {strategy: [mirrored], nodes: [2]}\n", "nodes=2", "runs on one node"),
    (
        "name: s\ndefaults: {batch_policy: strong, batch_size: 3}\nmatrix: {strategy: [mirrored], "
        "devices_per_node: [2]}\n",
        "batch_size=3",
        "does not divide",
    ),
    ("name: s\ndefaults: {steps: 5, window_steps: 2}\nmatrix: {model: [mlp]}\n", "steps=5", "window_steps=2"),
    (BASE + "exclude: [{model: mlp}]\n", "exclude", "removes every config"),
]


@pytest.mark.parametrize(("text", "key", "phrase"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_malformed_suite(runner, tmp_path, text, key, phrase):
    suite = tmp_path / "s.yaml"
    suite.write_text(text)
    result = runner.invoke(cli, ["plan", str(suite)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"tfscale: error: {tmp_path}/s.yaml")
    assert result.output.count("\n") == 1, result.output
    assert key in result.output and phrase in result.output, result.output
    assert "Traceback" not in result.output


def test_there_are_at_least_30_cases():
    assert len(CASES) >= 30


def test_debug_shows_the_traceback(runner, tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\nmatrix: {}\n")
    result = runner.invoke(cli, ["--debug", "plan", str(suite)])
    assert result.exit_code != 0
    assert result.exc_info is not None and type(result.exc_info[1]).__name__ == "SuiteError"


@pytest.mark.parametrize("label", ["", "two\nlines", "x" * 201])
def test_a_bad_run_label_is_one_line(runner, tmp_path, label):
    suite = tmp_path / "s.yaml"
    suite.write_text(BASE)
    result = runner.invoke(cli, ["run", str(suite), "--label", label, "--results-dir", str(tmp_path / "r")])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert result.output.startswith("tfscale: error: --label: ") and "printable characters" in result.output
    assert not (tmp_path / "r").exists()  # refused before anything is run or written
