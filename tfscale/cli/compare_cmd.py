"""`tfscale compare BASE NEW`: per-config change between two sweeps, significance, regressions, env differences."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("base", type=click.Path(exists=True, file_okay=False))
@click.argument("new", type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="HTML comparison (default reports/compare.html).")
@click.option("--threshold", default=0.05, show_default=True, help="Throughput drop that counts as a regression.")
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when a significant regression is found.")
def compare(base: str, new: str, output: str | None, threshold: float, fail_on_regression: bool) -> None:
    """Compare the run folders BASE and NEW (configs matched by config_id, else by axes)."""
    # Late imports: pandas and plotly load only for this command.
    from tfscale.compare import DRIFT_NOTE, ON_WINDOWS, TESTED_ON, env_differences
    from tfscale.compare import compare as compare_runs
    from tfscale.report.comparison import render_comparison
    from tfscale.store import load_env, load_results
    from tfscale.textable import format_table

    rows = compare_runs(load_results(base), load_results(new), threshold)
    diffs = env_differences(load_env(base), load_env(new))
    path = Path(output or Path("reports") / "compare.html")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_comparison(rows, diffs, base, new, threshold), encoding="utf-8")
    click.echo(
        format_table(
            [
                {
                    "config_id": r["config_id"],
                    "model": r["model"],
                    "strategy": r["strategy"],
                    "devices": r["devices"],
                    "throughput": f"{r['throughput_change']:+.1%}",
                    "step shift (95 % CI)": _shift_text(r),
                    "q": f"{r['q_value']:.3g}",
                    "verdict": "REGRESSION" if r["regression"] else "improvement" if r["improvement"] else "",
                }
                for _, r in rows.iterrows()
            ]
        )
    )
    for key, a, b in diffs:
        click.echo(f"env differs: {key}: {a} -> {b}")
    on_windows = int((rows[TESTED_ON] == ON_WINDOWS).sum()) if not rows.empty else 0
    if on_windows:
        click.echo(f"note: {on_windows} config(s) {DRIFT_NOTE}")
    regressions = int(rows["regression"].sum()) if not rows.empty else 0
    click.echo(
        f"{len(rows)} configs compared, {regressions} significant regression(s) beyond {threshold:.0%}; "
        f"comparison: {path}"
    )
    if fail_on_regression and regressions:
        raise click.exceptions.Exit(1)


def _shift_text(row) -> str:
    """Hodges-Lehmann step-time shift relative to BASE, with its CI where there is one: '+10.2 % (+9.8, +10.6)'."""
    text = f"{row['shift_rel']:+.1%}"
    if row["shift_ci95_low_rel"] is None or row["shift_ci95_low_rel"] != row["shift_ci95_low_rel"]:
        return text
    return f"{text} ({row['shift_ci95_low_rel'] * 100:+.1f}, {row['shift_ci95_high_rel'] * 100:+.1f})"
