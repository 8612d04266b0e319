"""The code blocks of README.md and docs/*.md: a block that is whole works as shown, and a block that is not whole
says so in its first line (`# fragment: ...`), so that a reader never copies half a suite and wonders why it fails."""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

import tfscale

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FRAGMENT = "# fragment"
# A suite file's top-level keys (tfscale.suite.suitefile reads these): a YAML block made of them alone is a suite
# or part of one.
SUITE_KEYS = {"name", "description", "device", "defaults", "matrix", "include", "exclude", "models", "network"}


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    language: str
    text: str

    @property
    def fragment(self) -> bool:
        return self.text.startswith(FRAGMENT)

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks_in(path: Path) -> list[Block]:
    """Every fenced block of a Markdown page, in order."""
    found, lines = [], path.read_text().splitlines()
    opening = None
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            if opening is None:
                opening = (number, line[3:].strip())
            else:
                text = "\n".join(lines[opening[0] : number - 1]) + "\n"
                found.append(Block(path.relative_to(ROOT).as_posix(), opening[0], opening[1], text))
                opening = None
    assert opening is None, f"{path.name}: a code block opened at line {opening[0]} is never closed"
    return found


BLOCKS = [block for page in PAGES for block in blocks_in(page)]


def of(language: str) -> list[Block]:
    return [block for block in BLOCKS if block.language == language]


def undefined_names(source: str) -> set[str]:
    """Names a Python snippet reads but never binds, imports or gets from builtins (scopes merged: a coarse check
    that catches a snippet leaning on code the page does not show)."""
    tree = ast.parse(source)
    bound, read = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return read - bound


def test_the_pages_have_the_blocks_this_test_reads():
    assert len(BLOCKS) >= 15 and {"yaml", "python", "sh"} <= {block.language for block in BLOCKS}


@pytest.mark.parametrize("block", BLOCKS, ids=str)
def test_every_block_names_its_language(block):
    assert block.language, f"{block}: a code block without a language (```text for diagrams)"


@pytest.mark.parametrize("block", of("yaml"), ids=str)
def test_a_yaml_block_is_a_whole_suite_or_says_it_is_a_fragment(block):
    data = yaml.safe_load(block.text)
    if block.fragment or data is None:  # marked, or comment lines alone (a suite's first line): nothing to misread
        return
    assert isinstance(data, dict), f"{block}: not a YAML mapping; a part of a suite starts with '{FRAGMENT}: ...'"
    if set(data) <= SUITE_KEYS:  # not a CI system's file: a suite, which must plan as shown
        assert "name" in data and ("matrix" in data or "include" in data), (
            f"{block}: part of a suite, not marked '{FRAGMENT}: ...'"
        )
        assert tfscale.plan(data).specs, f"{block}: plans to no config"


@pytest.mark.parametrize("block", of("python"), ids=str)
def test_a_python_block_compiles_and_binds_what_it_reads_or_says_it_is_a_fragment(block):
    missing = undefined_names(block.text)  # parses it, too
    assert block.fragment or not missing, f"{block}: reads {sorted(missing)}; not marked '{FRAGMENT}: ...'"


def test_the_checks_fail_on_an_unmarked_fragment():
    assert undefined_names("import tfscale\nframe = tfscale.analyze(records)\n") == {"records"}
    assert undefined_names("def f(x):\n    return [y for y in x]\n") == set()
    unmarked = "matrix:\n  model: [mlp]\n"
    assert set(yaml.safe_load(unmarked)) <= SUITE_KEYS and "name" not in yaml.safe_load(unmarked)
