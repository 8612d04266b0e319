"""Benchmark: do tfscale's stated 95 % intervals cover what a rerun measures?

Two parts, both through tfscale's own estimator code (tfscale.stats, tfscale.uncertainty, tfscale.precision):

1. Simulated sources (seconds): windows drawn from a source whose true median is known: independent, AR(1) with
   rho 0.3 and 0.6, and level shifts (a two-state Markov switch of +4 % over AR(1) 0.3). For each source and number
   of windows, the share of trials whose interval contains the true median, for the order-statistic CI of the
   record (StepStats), the bootstrap CI of derived figures (uncertainty.of_median), and the order-statistic CI when
   the windows stop at +-2 % (precision.stop_reason: optional stopping).
2. Fresh processes (`--processes K`, minutes): K fresh worker processes of a few quickstart configs through the
   runner; for each process, whether its stated interval of the median step time (and of the efficiency against
   the 1-device baseline's process of the same round) contains the median of the other K - 1 processes' figures.

    python tests/benchmarks/bench_coverage.py [--trials 1000] [--processes 8] [--only mlp]

Prints the coverage per source and per config; no assertion (a figure, not a timed test).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tfscale import metrics as m
from tfscale.precision import stop_reason
from tfscale.stats import StepStats
from tfscale.uncertainty import of_median, ratio_of_medians

ROOT = Path(__file__).resolve().parents[2]
SCALE = 0.02  # the sources' spread: 2 % of a 1.0 s median
SIZES = (15, 40, 150)
TARGET_CI = 0.02


def ar1(n: int, rho: float, rng: np.random.Generator) -> np.ndarray:
    noise = rng.standard_normal(n)
    x = np.empty(n)
    x[0] = noise[0] / math.sqrt(1 - rho**2)
    for t in range(1, n):
        x[t] = rho * x[t - 1] + noise[t]
    return 1.0 + SCALE * x


def level_shifts(n: int, rng: np.random.Generator) -> np.ndarray:
    """AR(1) 0.3 plus +4 % while in a high state (a quarter of the time, stays about n / 20 windows)."""
    stay = max(2.0, n / 20)
    x, high = ar1(n, 0.3, rng), rng.random() < 0.25
    for t in range(n):
        x[t] += 2 * SCALE * high
        high = rng.random() > 1 / stay if high else rng.random() < 1 / (3 * stay)
    return x


SOURCES: dict[str, Callable[[int, np.random.Generator], np.ndarray]] = {
    "independent": lambda n, rng: ar1(n, 0.0, rng),
    "AR(1) 0.3": lambda n, rng: ar1(n, 0.3, rng),
    "AR(1) 0.6": lambda n, rng: ar1(n, 0.6, rng),
    "level shifts": level_shifts,
}


def true_median(source: str, n: int, rng: np.random.Generator) -> float:
    if source != "level shifts":
        return 1.0  # symmetric and stationary around 1
    return float(np.median(np.concatenate([level_shifts(n, rng) for _ in range(2000)])))


def stopped(source: str, rng: np.random.Generator, limit: int = 400) -> list[float]:
    """Windows taken one at a time until the +-2 % rule stops them (or `limit`)."""
    stream = SOURCES[source](limit, rng)
    for n in range(1, limit + 1):
        if stop_reason(list(stream[:n]), spent_s=0.0, target_ci=TARGET_CI, max_measure_s=1e9):
            return list(stream[:n])
    return list(stream)


def covered(low: float | None, high: float | None, truth: float) -> bool:
    return low is not None and high is not None and low <= truth <= high


def simulated(trials: int) -> None:
    rng = np.random.default_rng(20261205)
    print(f"simulated sources, {trials} trials each: share of 95 % intervals that contain the true median")
    print(f"{'source':14s} {'windows':>8s} {'record CI':>10s} {'bootstrap':>10s} {'inflation':>10s}")
    for source, draw in SOURCES.items():
        for n in SIZES:
            truth = true_median(source, n, rng)
            record_hits = boot_hits = 0
            inflations = []
            for _ in range(trials):
                windows = list(draw(n, rng))
                stats = StepStats.from_samples(windows)
                record_hits += covered(stats.ci95_low, stats.ci95_high, truth)
                inflations.append(stats.inflation)
                interval = of_median(windows)
                boot_hits += covered(interval.low, interval.high, truth)
            print(
                f"{source:14s} {n:8d} {record_hits / trials:10.3f} {boot_hits / trials:10.3f} "
                f"{statistics.median(inflations):10.2f}"
            )
        truth = true_median(source, 150, rng)
        hits, sizes = 0, []
        for _ in range(trials):
            windows = stopped(source, rng)
            stats = StepStats.from_samples(windows)
            hits += covered(stats.ci95_low, stats.ci95_high, truth)
            sizes.append(len(windows))
        typical = statistics.median(sizes)
        print(f"{source:14s} {'stop+-2%':>8s} {hits / trials:10.3f} {'':>10s} (median {typical:.0f} windows)")


def processes(count: int, only: str | None) -> None:
    # Late import: the simulated part needs no runner (and no suite on disk).
    from tfscale.labels import model_label, record_mode
    from tfscale.planner import expand
    from tfscale.runner import run_config
    from tfscale.suite import load_suite

    specs = [
        s
        for s in expand(load_suite(ROOT / "suites" / "quickstart.yaml")).specs
        if s.strategy in ("one_device", "mirrored") and s.devices in (1, 2) and only in (None, s.model)
    ]
    rounds: list[dict[str, dict]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(count):
            order = specs if k % 2 == 0 else list(reversed(specs))  # alternate the order: drift hits both ends
            rounds.append({s.config_id: run_config(s, Path(tmp) / f"round{k}", "coverage") for s in order})
    print(f"\n{count} fresh processes per config: share of a process's 95 % interval that contains the others' median")
    print(f"{'config':40s} {'step time':>10s} {'efficiency':>11s} {'spread %':>9s}")
    step_hits = step_total = eff_hits = eff_total = 0
    for spec in specs:
        records = [r[spec.config_id] for r in rounds if r[spec.config_id][m.STATUS] == m.STATUS_OK]
        medians = [r[m.STEP_TIME_MEDIAN_S] for r in records]
        hits = sum(
            covered(
                r[m.STEP_TIME_CI95_LOW_S], r[m.STEP_TIME_CI95_HIGH_S], statistics.median(medians[:i] + medians[i + 1 :])
            )
            for i, r in enumerate(records)
        )
        step_hits, step_total = step_hits + hits, step_total + len(records)
        base = next((b for b in specs if b.model == spec.model and b.strategy == "one_device"), None)
        eff_text = "-"
        if base is not None and base is not spec:
            pairs = [(r[base.config_id], r[spec.config_id]) for r in rounds]
            pairs = [(b, c) for b, c in pairs if m.STATUS_OK == b[m.STATUS] == c[m.STATUS]]
            effs = [b[m.STEP_TIME_MEDIAN_S] / c[m.STEP_TIME_MEDIAN_S] for b, c in pairs]
            ehits = 0
            for i, (b, c) in enumerate(pairs):
                interval = ratio_of_medians(b[m.STEP_TIMES_S], c[m.STEP_TIMES_S])
                ehits += covered(interval.low, interval.high, statistics.median(effs[:i] + effs[i + 1 :]))
            eff_hits, eff_total = eff_hits + ehits, eff_total + len(pairs)
            eff_text = f"{ehits}/{len(pairs)}"
        spread = statistics.stdev(np.log(medians)) * 100 if len(medians) > 1 else float("nan")
        label = f"{model_label(spec.model, spec.model_size)} {record_mode(records[0])} x{spec.devices}"
        print(f"{label:40s} {f'{hits}/{len(records)}':>10s} {eff_text:>11s} {spread:9.1f}")
    print(
        f"all: step time {step_hits}/{step_total} = {step_hits / max(step_total, 1):.2f}; "
        f"efficiency {eff_hits}/{eff_total} = {eff_hits / max(eff_total, 1):.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=0, help="K fresh processes per config (0: simulated only)")
    parser.add_argument("--only", help="only configs of this model")
    args = parser.parse_args()
    simulated(args.trials)
    if args.processes:
        processes(args.processes, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
