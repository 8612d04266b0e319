"""`tfscale compare BASE NEW`: per-config change between two sweeps, significance, regressions, env differences."""

from __future__ import annotations

from pathlib import Path

import click

from tfscale.errors import TfscaleError


@click.command()
@click.argument("base", type=click.Path(exists=True))
@click.argument("new", type=click.Path(exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="HTML comparison (default reports/compare.html).")
@click.option("--threshold", default=0.05, show_default=True, help="Throughput drop that counts as a regression.")
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 on a significant regression, or a config ok in BASE that failed, timed out or is missing in NEW.",
)
@click.option(
    "--allow-missing",
    is_flag=True,
    help="With --fail-on-regression (and in --junit): configs missing in NEW do not fail.",
)
@click.option(
    "--junit",
    type=click.Path(dir_okay=False),
    help="Also write JUnit XML: one test case per config, failed where the gate fails.",
)
@click.option("--markdown", type=click.Path(dir_okay=False), help="Also write a short Markdown table for a PR comment.")
@click.option(
    "--allow-different-settings",
    is_flag=True,
    help="Gate even where BASE and NEW ran with other timing settings or on other hardware (named either way).",
)
@click.option("--json", "as_json", is_flag=True, help="The comparison as JSON, alone on standard output.")
def compare(
    base: str,
    new: str,
    output: str | None,
    threshold: float,
    fail_on_regression: bool,
    allow_missing: bool,
    junit: str | None,
    markdown: str | None,
    allow_different_settings: bool,
    as_json: bool,
) -> None:
    """Compare BASE and NEW (run folders, suite folders: each config's latest run, or records files; configs matched
    by config_id, else by axes), naming first what makes them unlike: other settings, other hardware."""
    # Late imports: pandas and plotly load only for this command.
    from tfscale.analysis.compare_runs import compare_paths
    from tfscale.analysis.gate import gate_fails, junit_xml, markdown_table, summary_line
    from tfscale.htmlreport.comparison import render_comparison
    from tfscale.jsonout import dumps
    from tfscale.store.records import ENV_FILE, check_outputs, find_records_files, write_atomic

    read = [
        f for side in (base, new) for records in find_records_files(side) for f in (records, records.parent / ENV_FILE)
    ]
    path, *_ = check_outputs([output or Path("reports") / "compare.html", junit, markdown], read, OUTPUT_OPTIONS)
    found = compare_paths(base, new, threshold)
    rows, lost = found.rows, found.lost
    write_atomic(path, render_comparison(rows, found.env, base, new, threshold, lost, found.warnings()))
    for target, text in (
        (junit, lambda: junit_xml(rows, lost, threshold, base, new, allow_missing)),
        (markdown, lambda: markdown_table(rows, lost, threshold, found.warnings())),
    ):
        if target:
            write_atomic(target, text())
    summary = summary_line(rows, lost, threshold)
    if as_json:
        document = {"base": base, "new": new, "threshold": threshold, "summary": summary}
        document["gate_fails"] = gate_fails(rows, lost, allow_missing)
        written = {"comparison": path, "junit": junit, "markdown": markdown}
        click.echo(dumps(document | found.document() | {"written": written}))
    else:
        show(found, summary, path, junit, markdown)
    if fail_on_regression:
        gate(found, allow_missing, allow_different_settings)


OUTPUT_OPTIONS = "-o, --junit and --markdown"


def gate(found, allow_missing: bool, allow_different_settings: bool) -> None:
    """--fail-on-regression: exit 2 where the sides measured unlike things, 1 on a regression or a lost config, 2
    where a compared config has no verdict."""
    from tfscale.analysis.compare import GATE_MIN_PROCESSES
    from tfscale.analysis.gate import gate_fails, without_verdict

    rows = found.rows
    if found.unlike() and not allow_different_settings:
        raise TfscaleError(
            "--fail-on-regression: BASE and NEW measured unlike things ("
            + "; ".join(found.unlike())
            + "): run both alike, or gate anyway with --allow-different-settings"
        )
    if gate_fails(rows, found.lost, allow_missing):
        raise click.exceptions.Exit(1)
    if without_verdict(rows):
        raise TfscaleError(
            f"--fail-on-regression: {without_verdict(rows)} of {len(rows)} compared configs have no verdict (fewer "
            f"than {GATE_MIN_PROCESSES} processes per side): run both with repeats: {GATE_MIN_PROCESSES} or more"
        )


def show(found, summary: str, path: Path, junit: str | None, markdown: str | None) -> None:
    """The comparison for a person: what makes the sides unlike, a row per config, lost configs, environment."""
    from tfscale.analysis.compare import NO_VERDICT_NOTE, p_text
    from tfscale.analysis.gate import change_text, shift_text, without_verdict
    from tfscale.textable import format_table

    rows = found.rows
    for line in found.warnings():
        click.echo(f"warning: {line}")
    click.echo(
        format_table(
            [
                {
                    "config_id": r["config_id"],
                    "model": r["model"],
                    "mode": r["mode"],
                    "layout": r["layout"],
                    "throughput (95 % CI)": change_text(r),
                    "step shift (95 % CI)": shift_text(r),
                    "p": p_text(r["p_value"]),
                    "q": p_text(r["q_value"]),
                    "verdict": r["verdict"],
                }
                for _, r in rows.iterrows()
            ]
        )
    )
    for config in found.lost:
        click.echo(config.line())
    for key, a, b in found.env:
        click.echo(f"env differs: {key}: {a} -> {b}")
    if without_verdict(rows):
        click.echo(f"note: {without_verdict(rows)} config(s) {NO_VERDICT_NOTE}")
    written = "".join(f", {what}: {target}" for what, target in (("JUnit", junit), ("Markdown", markdown)) if target)
    click.echo(f"{summary}; comparison: {path}{written}")
