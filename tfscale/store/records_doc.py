"""docs/records.md, generated from the column registry (tfscale.metrics.COLUMNS: names, kinds, units and meanings)
and tfscale/axes/ (what each axis of a config means): `python -m tfscale.store.records_doc > docs/records.md`. A test
fails when the two differ."""

from __future__ import annotations

from tfscale.axes import AXES, SETTINGS
from tfscale.metrics import COLUMNS, DERIVED, DERIVED_RENAMED, LAYOUT_TABLE, PREDICT, STORED, columns_of
from tfscale.store.records import RENAMED

HEADER = """# Records

One JSON line per worker process in `results/<suite>/<run_id>/records.jsonl` (one per config, or `repeats` per
config with their `repeat` index); `tfscale.load_results(path)` gives one row per config and run (repeats combined:
`tfscale/stats/repeats.py`) as a pandas DataFrame with every derived column of the second table (`tfscale.analyze`;
`derived=False`: the first table's only), as does `tfscale export`. Names never change meaning; figures that do
not apply are `null` (empty), never 0. Generated from `tfscale/metrics.py`: do not edit by hand.
"""


def entries(group: str) -> list[tuple[str, str]]:
    """(column, meaning) of each column of one group, in the registry's order."""
    return [(c.name, c.meaning) for c in columns_of(group)]


def meanings() -> dict[str, str]:
    """column -> its unit and meaning, as the registry states them (what docs/records.md shows)."""
    return {name: c.meaning for name, c in COLUMNS.items()}


def render() -> str:
    axes = {name: axis.help for name, axis in {**AXES, **SETTINGS}.items()}
    lines = [HEADER, "## Stored in every record", "", "| column | unit, meaning |", "|---|---|"]
    for column, meaning in entries(STORED):
        if not meaning and column in axes:
            meaning = f"axis: {axes[column]}"
        lines.append(f"| `{column}` | {meaning.replace('|', '&#124;')} |")
    lines += ["", "## Derived by the analysis (never stored)", "", "| column | unit, meaning |", "|---|---|"]
    lines += [f"| `{column}` | {meaning.replace('|', '&#124;')} |" for column, meaning in entries(DERIVED)]
    lines += ["", "## Columns of `tfscale predict`'s table (not in records)", "", "| column | unit, meaning |"]
    lines += ["|---|---|", *(f"| `{column}` | {meaning} |" for column, meaning in entries(PREDICT))]
    lines += ["", "## Columns of the report's layout table (not in records)", "", "| column | unit, meaning |"]
    lines += ["|---|---|", *(f"| `{column}` | {meaning} |" for column, meaning in entries(LAYOUT_TABLE))]
    lines += [
        "",
        "## Renamed columns",
        "",
        "Older records are read with the new names (`tfscale/store/records.py`, update_to_N);",
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
