"""The house's shape (issue 35): no module of the package over MAX_MODULE_LINES lines and no function over
MAX_FUNCTION_LINES, so that each file holds one concern and each function one job. A module that grows past the
limit is split by what its parts do (tfscale/suite/planview.py left planner.py so), not reformatted."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tfscale"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_is_over_the_limit():
    long = {
        str(p.relative_to(PACKAGE)): n for p in modules() if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_function_is_over_the_limit():
    long = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"] = lines
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_scan_sees_the_package():
    assert len(modules()) > 100 and PACKAGE / "suite" / "planner.py" in modules()
