"""`tfscale compare BASE NEW`: per-config change between two sweeps, significance, regressions, env differences."""

from __future__ import annotations

from pathlib import Path

import click

from tfscale.errors import TfscaleError


@click.command()
@click.argument("base", type=click.Path(exists=True, file_okay=False))
@click.argument("new", type=click.Path(exists=True, file_okay=False))
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
def compare(
    base: str,
    new: str,
    output: str | None,
    threshold: float,
    fail_on_regression: bool,
    allow_missing: bool,
    junit: str | None,
    markdown: str | None,
) -> None:
    """Compare the run folders BASE and NEW (configs matched by config_id, else by axes)."""
    # Late imports: pandas and plotly load only for this command.
    from tfscale.compare import DRIFT_NOTE, ON_WINDOWS, TESTED_ON, env_differences, lost_configs, p_text
    from tfscale.compare import compare as compare_runs
    from tfscale.gate import gate_fails, junit_xml, markdown_table, shift_text, summary_line
    from tfscale.htmlreport.comparison import render_comparison
    from tfscale.store import ENV_FILE, check_output, find_records_files, load_env, load_results, write_atomic
    from tfscale.textable import format_table

    read = [*find_records_files(base), *find_records_files(new), Path(base) / ENV_FILE, Path(new) / ENV_FILE]
    path = check_output(output or Path("reports") / "compare.html", read)
    extra = [check_output(target, read) for target in (junit, markdown) if target]
    if len({p.resolve() for p in (path, *extra)}) < 1 + len(extra):
        raise TfscaleError("-o, --junit and --markdown must name different files")
    base_records, new_records = load_results(base), load_results(new)
    rows = compare_runs(base_records, new_records, threshold)
    lost = lost_configs(base_records, new_records)
    diffs = env_differences(load_env(base), load_env(new))
    write_atomic(path, render_comparison(rows, diffs, base, new, threshold, lost))
    click.echo(
        format_table(
            [
                {
                    "config_id": r["config_id"],
                    "model": r["model"],
                    "mode": r["mode"],
                    "layout": r["layout"],
                    "throughput": f"{r['throughput_change']:+.1%}",
                    "step shift (95 % CI)": shift_text(r),
                    "p": p_text(r["p_value"]),
                    "q": p_text(r["q_value"]),
                    "verdict": r["verdict"],
                }
                for _, r in rows.iterrows()
            ]
        )
    )
    for config in lost:
        click.echo(config.line())
    for key, a, b in diffs:
        click.echo(f"env differs: {key}: {a} -> {b}")
    on_windows = int((rows[TESTED_ON] == ON_WINDOWS).sum()) if not rows.empty else 0
    if on_windows:
        click.echo(f"note: {on_windows} config(s) {DRIFT_NOTE}")
    for target, text in (
        (junit, lambda: junit_xml(rows, lost, threshold, base, new, allow_missing)),
        (markdown, lambda: markdown_table(rows, lost, threshold)),
    ):
        if target:
            write_atomic(target, text())
    written = "".join(f", {what}: {target}" for what, target in (("JUnit", junit), ("Markdown", markdown)) if target)
    click.echo(f"{summary_line(rows, lost, threshold)}; comparison: {path}{written}")
    if fail_on_regression and gate_fails(rows, lost, allow_missing):
        raise click.exceptions.Exit(1)
