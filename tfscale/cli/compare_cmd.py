"""`tfscale compare BASE NEW`: per-config change between two sweeps, significance, regressions, env differences."""

from __future__ import annotations

from pathlib import Path

import click


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
@click.option("--allow-missing", is_flag=True, help="With --fail-on-regression: configs missing in NEW do not fail.")
def compare(
    base: str, new: str, output: str | None, threshold: float, fail_on_regression: bool, allow_missing: bool
) -> None:
    """Compare the run folders BASE and NEW (configs matched by config_id, else by axes)."""
    # Late imports: pandas and plotly load only for this command.
    from tfscale.compare import DRIFT_NOTE, LOST_MISSING, ON_WINDOWS, TESTED_ON, env_differences, lost_configs, p_text
    from tfscale.compare import compare as compare_runs
    from tfscale.report.comparison import render_comparison
    from tfscale.store import load_env, load_results
    from tfscale.textable import format_table

    base_records, new_records = load_results(base), load_results(new)
    rows = compare_runs(base_records, new_records, threshold)
    lost = lost_configs(base_records, new_records)
    diffs = env_differences(load_env(base), load_env(new))
    path = Path(output or Path("reports") / "compare.html")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_comparison(rows, diffs, base, new, threshold, lost), encoding="utf-8")
    click.echo(
        format_table(
            [
                {
                    "config_id": r["config_id"],
                    "model": r["model"],
                    "mode": r["mode"],
                    "layout": r["layout"],
                    "throughput": f"{r['throughput_change']:+.1%}",
                    "step shift (95 % CI)": _shift_text(r),
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
    regressions = int(rows["regression"].sum()) if not rows.empty else 0
    missing = sum(1 for c in lost if c.status == LOST_MISSING)
    failed = len(lost) - missing
    click.echo(
        f"{len(rows)} configs compared, {regressions} significant regression(s) beyond {threshold:.0%}, "
        f"{failed} newly failed, {missing} missing in NEW; comparison: {path}"
    )
    if fail_on_regression and (regressions or failed or (missing and not allow_missing)):
        raise click.exceptions.Exit(1)


def _shift_text(row) -> str:
    """Hodges-Lehmann step-time shift relative to BASE, with its CI where there is one: '+10.2 % (+9.8, +10.6)'."""
    text = f"{row['shift_rel']:+.1%}"
    if row["shift_ci95_low_rel"] is None or row["shift_ci95_low_rel"] != row["shift_ci95_low_rel"]:
        return text
    return f"{text} ({row['shift_ci95_low_rel'] * 100:+.1f}, {row['shift_ci95_high_rel'] * 100:+.1f})"
