"""The README's two set-up commands are what users and CI run: keep them present and CI on the same command."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def block_after(marker: str) -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(re.escape(marker) + r"\n```sh\n(.*?)\n```", text, re.S)
    assert match, f"README.md has no ```sh block right after {marker}"
    return match.group(1)


def test_readme_has_both_setup_blocks():
    assert "tfscale run suites/quickstart.yaml" in block_after("<!-- setup:run -->")
    assert "pytest" in block_after("<!-- setup:test -->")
    assert "ruff check . && ruff format --check ." in block_after("<!-- setup:test -->")  # lint before the tests


def test_the_gpu_recipe_installs_tensorflow_s_cuda_build_and_checks_it_sees_gpus():
    import tomllib

    recipe = block_after("<!-- gpu recipe -->")
    assert "pip install -e '.[gpu]'" in recipe
    assert "tf.config.list_physical_devices('GPU')" in recipe
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["gpu"] == ["tensorflow[and-cuda]==2.21.*"]


def test_ci_runs_the_readme_test_command():
    test_command = block_after("<!-- setup:test -->")
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_command in ci.splitlines()


def test_metric_names_are_alphabetised_and_unique():
    from tfscale import metrics

    source = (ROOT / "tfscale" / "metrics.py").read_text()
    for block in source.split("# --- ")[1:]:
        names = re.findall(r"^([A-Z0-9_]+) = \"", block.split("\n\n# Columns")[0], re.M)
        assert names == sorted(names)
    assert len(set(metrics.RECORD_COLUMNS)) == len(metrics.RECORD_COLUMNS)


def test_records_doc_is_generated_from_metrics_and_complete():
    from tfscale import metrics
    from tfscale.store import records as store
    from tfscale.store.records_doc import render

    doc = (ROOT / "docs" / "records.md").read_text()
    assert doc == render(), "docs/records.md is stale: python -m tfscale.store.records_doc > docs/records.md"
    current, renamed = doc.split("## Renamed columns")
    columns = re.findall(r"^\| `([a-z0-9_]+)` \| (.*) \|$", current, re.M)
    old_names = re.findall(r"^\| `([a-z0-9_]+)` \| `[a-z0-9_]+` \|", renamed, re.M)
    values = ("STATUS_", "MEMORY_KIND_")  # a column's values, not columns
    vocabulary = {*metrics.KINDS, *metrics.GROUPS}  # what a column holds and where it appears: not columns
    names = {
        v
        for k, v in vars(metrics).items()
        if k.isupper() and isinstance(v, str) and not k.startswith(values) and v not in vocabulary
    }
    assert names == set(metrics.COLUMNS)  # every column constant is declared in the registry, once
    assert {c for c, _ in columns} == names  # every column, each on one line of metrics.py
    assert all(meaning.strip() for _, meaning in columns)  # and each with its meaning
    renamed_count = sum(len(r) for r in (*store.RENAMED.values(), *metrics.DERIVED_RENAMED.values()))
    assert (
        len(old_names) == renamed_count and not set(old_names) & names
    )  # a renamed column's old name is no column now


def test_every_axis_is_a_record_column_named_in_metrics():
    from tfscale import metrics
    from tfscale.axes import AXES

    names = {v for k, v in vars(metrics).items() if k.isupper() and isinstance(v, str)}
    assert set(AXES) <= names
    assert set(AXES) <= set(metrics.RECORD_COLUMNS)
