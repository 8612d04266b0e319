"""Benchmark: how often does the gate flag an unchanged commit (A/A)?

Runs the CI suite of docs/ci.md (read from the doc, so the two cannot drift) R times from the same commit, then
compares every pair of runs as `tfscale compare --threshold T --fail-on-regression` would
(tfscale.analysis.compare): per
config its verdict; per pair whether the gate fails. An honest gate fails an A/A pair in at most ~5 % of pairs
(its REGRESSION needs the 95 % CI of the throughput change wholly beyond -T); "slower"/"faster" verdicts (a CI
wholly off 0) should appear in about 5 % of A/A configs if the CI is calibrated, more where runs differ as a whole.

    python tests/benchmarks/bench_aa.py [--runs 5] [--threshold 0.10] [--record FILE]

`--record FILE` writes each run's per-config process medians (JSON), the fixed A/A samples that
tests/unit/analysis/test_compare_aa.py checks. Pairs share runs, so they are not independent: the counts are printed
with that said. Prints figures; no assertion (a figure, not a timed test).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def ci_suite() -> dict:
    """The `name: ci-gate` suite shown in docs/ci.md."""
    text = (ROOT / "docs" / "ci.md").read_text()
    for block in re.findall(r"```yaml\n(.*?)```", text, re.S):
        suite = yaml.safe_load(block)
        if isinstance(suite, dict) and suite.get("name") == "ci-gate":
            return suite
    raise SystemExit("docs/ci.md shows no suite named ci-gate")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threshold", type=float, default=0.10)
    parser.add_argument("--record", help="write the runs' process medians to this JSON file")
    args = parser.parse_args()

    import tfscale
    from tfscale import metrics as m
    from tfscale.analysis.compare import VERDICT_REGRESSION, compare
    from tfscale.stats.repeats import process_medians

    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.runs):
            tfscale.run(ci_suite(), run_id=f"aa{k:02d}", results_dir=tmp, no_report=True)
        frame = tfscale.load_results(Path(tmp) / "ci-gate")
    runs = {run: rows for run, rows in frame.groupby(m.RUN_ID)}
    verdicts: Counter[str] = Counter()
    failing_pairs = 0
    print(f"\n{args.runs} runs of the ci-gate suite, every pair compared at --threshold {args.threshold:g}")
    for a, b in itertools.combinations(sorted(runs), 2):
        rows = compare(runs[a], runs[b], args.threshold)
        verdicts.update(rows["verdict"])
        failing = int((rows["verdict"] == VERDICT_REGRESSION).sum())
        failing_pairs += failing > 0
        changes = ", ".join(
            f"{c:+.1%} ({lo:+.1%} to {hi:+.1%})"
            for c, lo, hi in zip(
                rows["throughput_change"],
                rows["throughput_change_ci95_low"],
                rows["throughput_change_ci95_high"],
                strict=True,
            )
        )
        print(f"{a} vs {b}: {', '.join(rows['verdict'])}; throughput change {changes}")
    pairs = args.runs * (args.runs - 1) // 2
    configs = sum(verdicts.values())
    print(
        f"A/A: gate failed in {failing_pairs}/{pairs} pairs; REGRESSION in {verdicts[VERDICT_REGRESSION]}/{configs} "
        f"config comparisons; verdicts {dict(verdicts)} (pairs share runs: not independent)"
    )
    if args.record:
        medians = {
            run: {row[m.CONFIG_ID]: process_medians(row) for _, row in rows.iterrows()} for run, rows in runs.items()
        }
        Path(args.record).write_text(json.dumps(medians, indent=1) + "\n")
        print(f"process medians: {args.record}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
