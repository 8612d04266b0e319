import pytest

from tfscale.errors import SuiteError
from tfscale.suite.suitefile import load_suite, parse_suite

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


EVIL_MODEL = "evil\ntouch /tmp/x/PWNED\n#"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (  # the name that broke out of a script's comment line (issue 37)
            'name: x\nmodels: {"evil\\ntouch /tmp/x/PWNED\\n#": {entry: "m:f"}}\nmatrix: {model: [mlp]}\n',
            "s.yaml: models.evil\\ntouch /tmp/x/PWNED\\n#: \\n (U+000A) in a key: control, line-separator and "
            "bidirectional characters are refused in a suite",
        ),
        (
            'name: x\ndescription: "ok\\e[2Jcleared"\nmatrix: {model: [mlp]}\n',
            "s.yaml: description: \\x1b (U+001B) in 'ok\\x1b[2Jcleared': control, line-separator",
        ),
        (
            'name: x\nmatrix: {model: [mlp, "m\\u202eb"]}\n',
            "s.yaml: matrix.model[1]: \\u202e (U+202E) in",
        ),
        (
            'name: x\nmodels: {m: {entry: "a:b", args: {k: "\\r"}}}\nmatrix: {model: [m]}\n',
            "s.yaml: models.m.args.k: \\r (U+000D) in",
        ),
        ("name: x\nmodels: {m/../x: {entry: 'a:b'}}\nmatrix: {model: [mlp]}\n", "s.yaml: models.m/../x: a model name"),
        ("name: x\nmodels: {'$(id)': {entry: 'a:b'}}\nmatrix: {model: [mlp]}\n", "s.yaml: models.$(id): a model name"),
        (f"name: {'n' * 65}\nmatrix: {{model: [mlp]}}\n", "s.yaml: name: String should match pattern"),
        ("name: x\ndefaults: {timeout_s: .nan}\nmatrix: {model: [mlp]}\n", "s.yaml: defaults.timeout_s: nan is not a"),
        ("name: x\ndefaults: {timeout_s: .inf}\nmatrix: {model: [mlp]}\n", "s.yaml: defaults.timeout_s: inf is not a"),
        (
            "name: x\nmodels: {m: {entry: 'a:b', args: {k: -.inf}}}\nmatrix: {model: [m]}\n",
            "s.yaml: models.m.args.k: -inf is not a finite number",
        ),
        (
            f"name: x\ndefaults: {{timeout_s: {'9' * 300}}}\nmatrix: {{model: [mlp]}}\n",
            "s.yaml: defaults.timeout_s: must be <= 2.592e+06, got 9999",
        ),
        ("name: x\nmatrix: {nodes: [100000000000]}\n", "s.yaml: matrix.nodes[0]: must be <= 4096, got 100000000000"),
        ("name: x\ndefaults: {repeats: 1001}\nmatrix: {model: [mlp]}\n", "s.yaml: defaults.repeats: must be <= 1000"),
        (
            "name: x\nmodels: {m: {entry: 'a:b', args: {k: !!binary aGk=}}}\nmatrix: {model: [m]}\n",
            "s.yaml: models.m.args.k: a YAML bytes is no suite value",
        ),
        (
            "name: x\nmodels: {m: {entry: 'a:b', args: {k: 2026-12-05}}}\nmatrix: {model: [m]}\n",
            "s.yaml: models.m.args.k: a YAML date is no suite value",
        ),
        (
            "name: x\nmatrix: {network_link: [" + "9" * 300 + "bit]}\n",
            "s.yaml: matrix.network_link[0]: '99999",
        ),
    ],
)
def test_hostile_values_are_refused_in_one_line(text, message):
    with pytest.raises(SuiteError) as info:
        parse_suite(text, "s.yaml")
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value) and "\x1b" not in str(info.value)


def test_the_same_rules_hold_for_a_suite_given_as_a_dict():
    from tfscale.suite.suitefile import suite_from_dict

    with pytest.raises(SuiteError, match=r"^api: models\.evil\\ntouch /tmp/x/PWNED\\n#: \\n \(U\+000A\) in a key"):
        suite_from_dict({"name": "x", "models": {EVIL_MODEL: {"entry": "m:f"}}, "matrix": {"model": ["mlp"]}}, "api")
    with pytest.raises(SuiteError, match=r"^api: defaults\.timeout_s: nan is not a finite number"):
        suite_from_dict({"name": "x", "defaults": {"timeout_s": float("nan")}, "matrix": {"model": ["mlp"]}}, "api")


def test_every_numeric_axis_is_bounded_on_both_sides():
    from tfscale.axes import ALL_KEYS

    numeric = [axis for axis in ALL_KEYS.values() if axis.kind in (int, float)]
    assert numeric and all(a.minimum is not None and a.maximum is not None for a in numeric)
    defaults = [a for a in numeric if isinstance(a.default, (int, float))]
    assert len(defaults) >= 20 and all(a.minimum <= a.default <= a.maximum for a in defaults)


def test_a_suite_arrives_through_a_pipe(tmp_path):
    import os

    read_end, write_end = os.pipe()
    os.write(write_end, b"name: piped\nmatrix: {model: [mlp]}\n")
    os.close(write_end)
    try:
        assert load_suite(f"/dev/fd/{read_end}").name == "piped"
    finally:
        os.close(read_end)
