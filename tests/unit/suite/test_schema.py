"""The suite's JSON Schema: shipped suites carry its line and validate; the shipped schema file is the one
`tfscale schema` writes; and the schema never refuses a suite `tfscale plan` accepts (thousands of generated
suites), while it refuses what editors should flag at once."""

import json
import random
from pathlib import Path

import jsonschema
import pytest
import yaml

from tfscale.axes import ALL_KEYS, AXES
from tfscale.errors import SuiteError
from tfscale.suite.planner import expand
from tfscale.suite.schema import LANGUAGE_SERVER_LINE, SCHEMA_FILE, schema_text, suite_schema, value_schema
from tfscale.suite.suitefile import parse_suite

from ..generated_suites import CASES, SUITES, documents

SUITES_DIR = Path(__file__).resolve().parents[3] / "suites"


@pytest.fixture(scope="module")
def validator():
    schema = suite_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_shipped_schema_file_is_the_one_tfscale_schema_writes():
    assert (SUITES_DIR / SCHEMA_FILE).read_text() == schema_text(), "run: tfscale schema -o suites/suite.schema.json"


@pytest.mark.parametrize("path", SUITES, ids=lambda p: p.name)
def test_shipped_suites_start_with_the_schema_line_and_validate(path, validator):
    text = path.read_text()
    assert text.splitlines()[0] == LANGUAGE_SERVER_LINE
    assert list(validator.iter_errors(yaml.safe_load(text))) == []


def test_value_schema_of_an_axis_exactly():
    assert value_schema(ALL_KEYS["steps"]) == {
        "anyOf": [{"type": "integer", "minimum": 1, "maximum": 2**31}, {"const": "auto"}],
        "description": ALL_KEYS["steps"].help,
        "default": "auto",
    }
    assert value_schema(AXES["cross_device_ops"]) == {
        "anyOf": [
            {"type": "string", "enum": ["nccl", "hierarchical_copy", "reduction_to_one_device"]},
            {"type": "null"},
        ],
        "description": AXES["cross_device_ops"].help,
    }
    assert value_schema(AXES["jit"]) == {"type": "boolean", "description": AXES["jit"].help, "default": False}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("name: x\nmatrix: {modle: [mlp]}\n", ["matrix"]),
        ("name: x\nmatrix: {strategy: [mirrored, magic]}\n", ["matrix", "strategy", 1]),
        ("name: x\nmatrix: {batch_size: [8, big]}\n", ["matrix", "batch_size", 1]),
        ("name: x\nmatrix: {steps: [1, 2]}\n", ["matrix"]),  # a run setting is not swept
        ("name: x\ndefaults: {steps: true}\nmatrix: {model: [mlp]}\n", ["defaults", "steps"]),
        ("name: x\nmatrix: {devices_per_node: [0]}\n", ["matrix", "devices_per_node", 0]),
        ("name: x\nmatrix: {}\n", []),
        ("matrix: {model: [mlp]}\n", []),
        ("name: x\ndevice: tpu\nmatrix: {model: [mlp]}\n", ["device"]),
        ("name: x\nmatrix: {model: [mlp]}\ncommbench: {iters: '5'}\n", ["commbench"]),
        ("name: x\nmatrix: {model: [mlp]}\nexclude: [{precision: [float32, fp8]}]\n", ["exclude", 0, "precision"]),
    ],
)
def test_what_editors_flag_and_plan_refuses_alike(validator, text, where):
    errors = list(validator.iter_errors(yaml.safe_load(text)))
    assert errors and list(min(errors, key=lambda e: len(e.path)).path) == where
    with pytest.raises(SuiteError):
        expand(parse_suite(text, "s.yaml"))


def test_a_suite_the_schema_refuses_is_refused_by_plan(validator, capsys):
    rng = random.Random(20261203)
    outcomes = {"both accept": 0, "both refuse": 0, "only plan refuses": 0, "unparsable YAML": 0}
    for n, text in enumerate(documents(rng)):
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError:
            outcomes["unparsable YAML"] += 1
            continue
        schema_ok = validator.is_valid(document)
        try:
            expand(parse_suite(text, f"fuzz{n}.yaml"))
            plan_ok = True
        except SuiteError:
            plan_ok = False
        assert schema_ok or not plan_ok, (n, text, json.dumps([e.message for e in validator.iter_errors(document)]))
        outcomes["both accept" if plan_ok else "both refuse" if not schema_ok else "only plan refuses"] += 1
    assert sum(outcomes.values()) == CASES and outcomes["both accept"] > 100 and outcomes["both refuse"] > 100
    with capsys.disabled():
        print(f"\nschema vs plan on {CASES} generated suites: {outcomes}")


def test_the_ci_recipe_suite_validates_and_plans(validator):
    import re

    text = (Path(__file__).resolve().parents[3] / "docs" / "ci.md").read_text()
    suite = re.search(r"```yaml\n(# yaml-language-server.*?)```", text, re.S).group(1)
    assert list(validator.iter_errors(yaml.safe_load(suite))) == []
    plan = expand(parse_suite(suite, "ci-gate.yaml"))
    assert len(plan.specs) == 3 and {s.repeats for s in plan.specs} == {5}
