"""No import cycle in the package: every `tfscale` import (module level or late, inside a function) is an edge."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tfscale"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from tfscale.launch import local` imports the module tfscale.launch.local
                targets = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                    for a in node.names
                ]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_in_the_package():
    graph = import_graph()
    assert "tfscale.contract" in graph["tfscale.worker.cluster"]  # the graph sees late imports and both sides
    assert cycles(graph) == []


def part_of(module: str) -> str:
    """A module's part of the package: its subpackage (tfscale.launch) or, at the top level, itself."""
    return ".".join(module.split(".")[:2])


def part_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between parts; the package's own __init__ (the public API, importing from every part) is
    left out, as is a part importing itself."""
    parts: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if module == "tfscale":
            continue
        edges = parts.setdefault(part_of(module), set())
        edges |= {part_of(t) for t in targets if t != "tfscale" and part_of(t) != part_of(module)}
    return parts


def test_the_part_graph_sees_a_cycle_between_subpackages():
    graph = {"tfscale.launch.local": {"tfscale.netsim.hosts"}, "tfscale.netsim.hosts": {"tfscale.launch.base"}}
    graph |= {"tfscale.launch.base": set()}
    assert cycles(part_graph(graph)) == [["tfscale.launch", "tfscale.netsim"]]


def test_no_import_cycle_between_parts():
    # TYPE_CHECKING imports count: they are edges of the design even where they cost nothing at run time
    assert cycles(part_graph(import_graph())) == []


# The order docs/architecture.md draws the tree in: each part imports only parts before it (vocabulary first,
# commands last). A new part takes its place here and in the picture.
PART_ORDER = [
    "tfscale._version",
    "tfscale.errors",
    "tfscale.untrusted",
    "tfscale.formatting",
    "tfscale.textable",
    "tfscale.jsonout",
    "tfscale.axes",
    "tfscale.metrics",
    "tfscale.labels",
    "tfscale.contract",
    "tfscale.gpus",
    "tfscale.suite",
    "tfscale.stats",
    "tfscale.measures",
    "tfscale.store",
    "tfscale.netsim",
    "tfscale.launch",
    "tfscale.host",
    "tfscale.worker",
    "tfscale.analysis",
    "tfscale.htmlreport",
    "tfscale.runner",
    "tfscale.api",
    "tfscale.cli",
    "tfscale.__main__",
]


def upward_imports(parts: dict[str, set[str]], order: list[str]) -> set[tuple[str, str]]:
    """(part, target) for each import of a part listed after the importing one in `order`."""
    return {
        (part, target)
        for part, targets in parts.items()
        for target in targets
        if order.index(target) > order.index(part)
    }


def test_an_import_of_a_later_part_is_found():
    assert upward_imports({"a": set(), "b": {"a", "c"}, "c": set()}, ["a", "b", "c"]) == {("b", "c")}


def test_each_part_imports_only_the_parts_before_it():
    parts = part_graph(import_graph())
    assert sorted(parts) == sorted(PART_ORDER), "a part is missing from PART_ORDER (and docs/architecture.md)"
    assert upward_imports(parts, PART_ORDER) == set()
