"""Inputs that cannot crash tfscale: thousands of generated suite documents (random structures, and mutations of
the shipped suites) and hostile files. Each must plan, or be refused with one SuiteError line naming the file;
never another exception. Seeded, so a failure reproduces."""

import random

import pytest

from tfscale.errors import ResultsError, SuiteError
from tfscale.store.records import check_run_id
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import MAX_SUITE_BYTES, load_suite, parse_suite

from ..generated_suites import CASES, documents


def test_thousands_of_generated_suites_plan_or_give_one_line(capsys):
    rng = random.Random(20261203)
    outcomes = {"planned": 0, "refused": 0}
    for n, text in enumerate(documents(rng)):
        try:
            expand(parse_suite(text, f"fuzz{n}.yaml"))
            outcomes["planned"] += 1
        except SuiteError as error:
            message = str(error)
            assert "\n" not in message and message.startswith(f"fuzz{n}.yaml"), (n, text, message)
            outcomes["refused"] += 1
    assert sum(outcomes.values()) == CASES
    with capsys.disabled():
        print(
            f"\nsuite fuzz: {CASES} generated documents: {outcomes['planned']} planned, {outcomes['refused']} refused"
        )


def bomb(levels: int, width: int) -> str:
    lines = ["name: bomb", "models:", f"  m0: {{entry: &a0 [{', '.join(['1'] * width)}]}}"]
    for i in range(1, levels):
        lines.append(f"  m{i}: {{entry: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]}}")
    return "\n".join([*lines, f"include: [*a{levels - 1}]", "matrix: {model: [mlp]}"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"name: x\x00\n", "holds NUL bytes: not a YAML text file"),
        (b"name: \xff\xfe\n", "not UTF-8 text (byte 0xff at offset 6)"),
        (b"", "a suite must be a mapping with at least `name` and `matrix`"),
        (("matrix: " + "[" * 5000 + "]" * 5000).encode(), "nested too deeply to be a suite"),
        (bomb(4, 40).encode(), "more than 100 YAML aliases (*name): refused, as an alias bomb"),
        (b"#" * (MAX_SUITE_BYTES + 1), f"over {MAX_SUITE_BYTES} bytes: not a suite file"),
    ],
)
def test_hostile_files_give_one_line(tmp_path, content, message):
    path = tmp_path / "s.yaml"
    path.write_bytes(content)
    with pytest.raises(SuiteError) as error:
        load_suite(path)
    assert str(error.value).startswith(f"{path}: {message}")


@pytest.mark.parametrize(
    ("path", "message"),
    [("/dev/zero", "/dev/zero: not a regular file: not a suite file"), ("/", "/: not a regular file")],
)
def test_special_files_are_refused_at_once(path, message):
    with pytest.raises(SuiteError) as error:
        load_suite(path)
    assert str(error.value).startswith(message)


def test_an_alias_bomb_under_the_limit_is_refused_at_once():
    # 9 levels of 10: 80 aliases, 10^9 leaves if expanded: refused by size before anything walks it whole
    with pytest.raises(SuiteError, match=r"^b\.yaml: over 100000 values once its YAML aliases are expanded"):
        parse_suite(bomb(9, 10), "b.yaml")


def _bomb_anchors(levels: int = 9, width: int = 10) -> list[str]:
    lines = [f"  - &a0 [{', '.join(['x'] * width)}]"]
    lines += [f"  - &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return lines


@pytest.mark.parametrize(
    "where",
    [
        "models: {m: {entry: 'mod:fn', args: {big: *a8}}}\nmatrix: {model: [m]}",  # model_dump expanded it
        "matrix: {model: [*a8]}",  # the error message's repr expanded it
        "defaults: {steps: *a8}\nmatrix: {model: [mlp]}",
    ],
)
def test_alias_bombs_anywhere_are_refused_before_anything_walks_them(where, monkeypatch):
    # Refused by the bounded count, before validation (model_dump, an error message's repr) walks 10^9 values.
    from tfscale.suite import suitefile as suite

    monkeypatch.setattr(suite, "_validate", lambda *args: pytest.fail("the bomb reached validation"))
    text = "\n".join(["name: b", "anchors:", *_bomb_anchors(), where])
    with pytest.raises(SuiteError, match=r"^b\.yaml: over 100000 values once its YAML aliases are expanded"):
        parse_suite(text, "b.yaml")


def test_deep_flow_nesting_is_refused_while_scanning(monkeypatch):
    # Refused while scanning tokens: PyYAML's scanner is quadratic in flow depth (40,000 "[" took 14.5 s to reach
    # the recursion limit of the composer).
    from tfscale.suite import suitefile as suite

    monkeypatch.setattr(suite.yaml, "safe_load", lambda text: pytest.fail("the document was composed"))
    with pytest.raises(SuiteError, match=r"^d\.yaml: nested too deeply to be a suite \(over 32 levels\)"):
        parse_suite("matrix: " + "[" * 40_000 + "]" * 40_000, "d.yaml")


@pytest.mark.parametrize("run_id", ["../../x", "", ".hidden", "a/b", "x" * 65, "é"])
def test_run_ids_that_would_escape_or_break_names_are_refused(run_id):
    with pytest.raises(ResultsError, match="a run id is 1 to 64 letters, digits"):
        check_run_id(run_id)
    assert check_run_id("20261203-101500") == "20261203-101500" and check_run_id("x" * 64)
