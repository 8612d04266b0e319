"""docs/records.md, generated from tfscale/metrics.py (names, units and meanings) and tfscale/axes/ (what each
axis of a config means): `python -m tfscale.records_doc > docs/records.md`. A test fails when the two differ."""

from __future__ import annotations

import re
from pathlib import Path

from tfscale.axes import AXES, SETTINGS
from tfscale.metrics import DERIVED_RENAMED
from tfscale.store import RENAMED

ENTRY = re.compile(r'^[A-Z0-9_]+ = "([a-z0-9_]+)"\s*(?:#\s*(.*))?$')
HEADER = """# Records

One JSON line per worker process in `results/<suite>/<run_id>/records.jsonl` (one per config, or `repeats` per
config with their `repeat` index); `tfscale.load_results(path)` gives one row per config and run (repeats combined:
`tfscale/repeats.py`) as a pandas DataFrame with every derived column of the second table (`tfscale.analyze`;
`derived=False`: the first table's only), as does `tfscale export`. Names never change meaning; figures that do
not apply are `null` (empty), never 0. Generated from `tfscale/metrics.py`: do not edit by hand.
"""


def entries(block: str) -> list[tuple[str, str]]:
    """(column, meaning) of each `NAME = "column"  # meaning` line of a metrics.py block."""
    found = []
    for line in block.splitlines():
        match = ENTRY.match(line.strip())
        if match:
            found.append((match.group(1), (match.group(2) or "").strip()))
    return found


def meanings() -> dict[str, str]:
    """column -> its unit and meaning, as tfscale/metrics.py states them (what docs/records.md shows)."""
    source = Path(__file__).with_name("metrics.py").read_text(encoding="utf-8")
    return dict(entries(source))


def render(metrics_source: str | None = None) -> str:
    source = metrics_source or (Path(__file__).with_name("metrics.py")).read_text(encoding="utf-8")
    stored = source.split("# --- stored", 1)[1].split("# --- derived", 1)[0]
    derived = source.split("# --- derived", 1)[1].split("\n\n", 1)[0]
    predicted = source.split("# --- tfscale predict", 1)[1].split("\n\n", 1)[0]
    layout = source.split("# --- the report's layout table", 1)[1].split("\n\n", 1)[0]
    axes = {name: axis.help for name, axis in {**AXES, **SETTINGS}.items()}
    lines = [HEADER, "## Stored in every record", "", "| column | unit, meaning |", "|---|---|"]
    for column, meaning in entries(stored):
        if not meaning and column in axes:
            meaning = f"axis: {axes[column]}"
        lines.append(f"| `{column}` | {meaning.replace('|', '&#124;')} |")
    lines += ["", "## Derived by the analysis (never stored)", "", "| column | unit, meaning |", "|---|---|"]
    lines += [f"| `{column}` | {meaning.replace('|', '&#124;')} |" for column, meaning in entries(derived)]
    lines += ["", "## Columns of `tfscale predict`'s table (not in records)", "", "| column | unit, meaning |"]
    lines += ["|---|---|", *(f"| `{column}` | {meaning} |" for column, meaning in entries(predicted))]
    lines += ["", "## Columns of the report's layout table (not in records)", "", "| column | unit, meaning |"]
    lines += ["|---|---|", *(f"| `{column}` | {meaning} |" for column, meaning in entries(layout))]
    lines += [
        "",
        "## Renamed columns",
        "",
        "Older records are read with the new names (`tfscale/store.py`, update_to_N);",
    ]
    lines += [
        "scripts that read the old names need the new ones.",
        "",
        "| old name | new name | since schema_version |",
    ]
    lines += ["|---|---|---|"]
    lines += [f"| `{old}` | `{new}` | {v} |" for v, renames in sorted(RENAMED.items()) for old, new in renames.items()]
    lines += [
        "",
        "Derived and table columns renamed (not stored, so no migration):",
        "",
        "| old name | new name | since |",
    ]
    lines += ["|---|---|---|"]
    lines += [
        f"| `{old}` | `{new}` | tfscale {v} |" for v, renames in DERIVED_RENAMED.items() for old, new in renames.items()
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
