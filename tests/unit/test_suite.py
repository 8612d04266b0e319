import pytest

from tfscale.errors import SuiteError
from tfscale.suite import load_suite, parse_suite

GOOD = """
name: demo
device: cpu
defaults: {batch_size: 16, steps: 8, timeout_s: 60}
matrix:
  model: [mlp, mine]
  strategy: [mirrored]
  devices_per_node: [1, 2]
models:
  mine: {entry: "pkg.mod:build", args: {width: 8}}
"""


def test_good_suite_parses():
    suite = parse_suite(GOOD, "demo.yaml")
    assert suite.name == "demo"
    assert suite.matrix["devices_per_node"] == [1, 2]
    assert suite.models["mine"].entry == "pkg.mod:build"
    assert suite.models["mine"].args == {"width": 8}
    assert suite.model_names == ("mlp", "cnn", "transformer", "mine")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\nmatrix: {model: [mlp]}\ncolour: red\n", "s.yaml: colour: unknown key"),
        ("1: x\nname: x\nmatrix: {model: [mlp]}\n", "s.yaml: 1: unknown key"),
        ("name: x\nmatrix: {modle: [mlp]}\n", "s.yaml: matrix.modle: unknown key 'modle'; allowed: model,"),
        ("name: x\nmatrix: {batch_size: [8, big]}\n", "s.yaml: matrix.batch_size[1]: expected int, got 'big'"),
        ("name: x\nmatrix: {jit: [1]}\n", "s.yaml: matrix.jit[0]: expected bool, got 1"),
        (
            "name: x\nmatrix: {strategy: [mirrored, magic]}\n",
            "s.yaml: matrix.strategy[1]: unknown strategy 'magic'; allowed: one_device, mirrored, central_storage",
        ),
        ("name: x\nmatrix: {model: [resnet9]}\n", "s.yaml: matrix.model[0]: unknown model 'resnet9'"),
        ("name: x\nmatrix: {}\n", "s.yaml: matrix: empty; give at least one axis"),
        ("name: x\nmatrix: {model: []}\n", "s.yaml: matrix.model: empty list"),
        ("name: x\nmatrix: {devices_per_node: [0]}\n", "s.yaml: matrix.devices_per_node[0]: must be >= 1, got 0"),
        ("name: x\nmatrix: {steps: [1, 2]}\n", "s.yaml: matrix.steps: a run setting cannot be swept"),
        ("name: x\ndefaults: {steps: true}\nmatrix: {model: [mlp]}\n", "s.yaml: defaults.steps: expected int"),
        ("name: x\ndevice: tpu\nmatrix: {model: [mlp]}\n", "s.yaml: device: Input should be 'cpu' or 'gpu'"),
        ("matrix: {model: [mlp]}\n", "s.yaml: name: required key is missing"),
        (
            "name: x\nmatrix: {model: [m]}\nmodels: {m: {entry: nocolon}}\n",
            's.yaml: models.m.entry: must be "module:function"',
        ),
        (
            "name: x\nmatrix: {model: [mlp]}\nexclude: [{precision: [float32, fp8]}]\n",
            "s.yaml: exclude[0].precision: unknown value 'fp8'",
        ),
        ("name: x\nmatrix: [1, 2\n", "s.yaml:3:1: YAML syntax error"),
        ("- just a list\n", "s.yaml: a suite must be a mapping"),
    ],
)
def test_bad_suites_give_one_line_naming_the_key(text, message):
    with pytest.raises(SuiteError) as info:
        parse_suite(text, "s.yaml")
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_unreadable_file(tmp_path):
    with pytest.raises(SuiteError, match=r"missing\.yaml: cannot read suite file"):
        load_suite(tmp_path / "missing.yaml")
