"""Benchmark: measuring to a precision (steps: auto) versus a fixed 100 steps, side by side on the quickstart.

Every config of suites/quickstart.yaml runs twice through tfscale's runner, alternating which variant goes first:
as the suite says (steps, warmup_steps and window_steps auto; its max_measure_s) and with a fixed 100 steps timed
one per window (the pre-0.4 way, warm-up still auto). Prints, per config and in total: the timed steps, the seconds
the config took (process start to exit) and spent in timed windows, and the 95 % CI of the median each achieved;
then the share of configs within +-2 % for each variant.

    python tests/benchmarks/bench_precision.py [--suite suites/quickstart.yaml] [--only mlp]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
from pathlib import Path

from tfscale import metrics as m
from tfscale.labels import model_label, record_mode
from tfscale.runner.configs import run_config
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import load_suite

ROOT = Path(__file__).resolve().parents[2]
FIXED_STEPS = 100


def timed_s(record: dict) -> float:
    """Seconds spent in timed windows: the sum of the windows (samples are per-step times of each window)."""
    return sum(record[m.STEP_TIMES_S]) * record[m.WINDOW_STEPS]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=str(ROOT / "suites" / "quickstart.yaml"))
    parser.add_argument("--only", help="only configs of this model")
    args = parser.parse_args()
    specs = [s for s in expand(load_suite(args.suite)).specs if args.only in (None, s.model)]
    variants = {
        "auto": lambda s: s,
        f"fixed {FIXED_STEPS}": lambda s: dataclasses.replace(s, steps=FIXED_STEPS, window_steps=1),
    }
    results: dict[str, list[dict]] = {name: [] for name in variants}
    print(f"{'config':40s} {'variant':10s} {'steps':>6s} {'timed s':>8s} {'config s':>9s} {'CI +-':>7s}  met")
    with tempfile.TemporaryDirectory() as tmp:
        for index, spec in enumerate(specs):
            order = list(variants) if index % 2 == 0 else list(reversed(variants))
            for name in order:
                record = run_config(variants[name](spec), Path(tmp) / f"{index}-{name.replace(' ', '')}", "bench")
                results[name].append(record)
                label = f"{model_label(record[m.MODEL], record[m.MODEL_SIZE])} {record_mode(record)} x{spec.devices}"
                if record[m.STATUS] != m.STATUS_OK:
                    print(f"{label:40s} {name:10s} {record[m.STATUS]}: {record[m.REASON]}")
                    continue
                width = record[m.CI_HALF_WIDTH_REL]
                print(
                    f"{label:40s} {name:10s} {record[m.TIMED_STEPS]:6d} {timed_s(record):8.2f} "
                    f"{record[m.DURATION_S]:9.1f} {'-' if width is None else f'{width:.1%}':>7s}  {record[m.CI_MET]}"
                )
    print()
    for name, records in results.items():
        ok = [r for r in records if r[m.STATUS] == m.STATUS_OK]
        widths = [r[m.CI_HALF_WIDTH_REL] for r in ok if r[m.CI_HALF_WIDTH_REL] is not None]
        met = sum(1 for r in ok if r[m.CI_MET])
        print(
            f"{name:10s}: {met} of {len(ok)} ok configs within +-2 %; median CI half-width "
            f"{statistics.median(widths):.1%} (range {min(widths):.1%}-{max(widths):.1%}); timed steps "
            f"{sum(r[m.TIMED_STEPS] for r in ok)}, timed windows {sum(timed_s(r) for r in ok):.1f} s, "
            f"configs {sum(r[m.DURATION_S] for r in ok):.1f} s in all"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
