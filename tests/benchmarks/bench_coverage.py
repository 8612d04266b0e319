"""Benchmark: do tfscale's stated 95 % intervals cover what a rerun measures?

Two parts, both through tfscale's own estimator code (tfscale.stats: core, uncertainty,
precision):

1. Simulated sources (seconds): windows drawn from a source whose true median is known: independent, AR(1) with
   rho 0.3 and 0.6, and level shifts (a two-state Markov switch of +4 % over AR(1) 0.3). For each source and number
   of windows, the share of trials whose interval contains the true median, for the order-statistic CI of the
   record (StepStats), the bootstrap CI of derived figures (uncertainty.of_median), and the order-statistic CI when
   the windows stop at +-2 % (precision.stop_reason: optional stopping; the level shifts there stay 20 windows,
   about as long as the stopped measurement); and the stated CI of stopped windows in a run as the quickstart's
   `repeats: auto` makes it (17 configs, 6 in two processes; tfscale.stats.repeats.combine_all pools their spread and
   every CI covers it); and the gradient noise scale's CI (goodput.NoiseScale.of) over simulated probe windows.
2. Fresh runs (`--processes K`, about 2 minutes per run): K runs of the quickstart's 1- and 2-device OneDevice and
   Mirrored configs with its settings and repeats (some in two processes, so each run measures its spread between
   processes), one after another in one results folder (so from the third on a run's CIs also cover the drift
   between the runs before it, tfscale.stats.drift); for each run and config, whether the interval tfscale states
   (load_results, analyze) of the median step time and of the efficiency contains the median of the other K - 1
   runs' figures; beside it, the same for each process's own within-process CI.

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
from tfscale.measures.goodput import NoiseScale
from tfscale.stats.core import StepStats
from tfscale.stats.precision import stop_reason
from tfscale.stats.repeats import combine_all
from tfscale.stats.uncertainty import of_median

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


RUN_CONFIGS, RUN_PAIRS = 17, 6  # the quickstart under repeats: auto: 6 of its 17 configs in two processes


def stopped_run(source: str, rng: np.random.Generator) -> list[dict]:
    """One simulated run as tfscale stores and reads it: RUN_CONFIGS configs of `source`, the first RUN_PAIRS in two
    fresh processes, each process's windows stopped at +-2 %; its lines combined by tfscale.stats.repeats.combine_all as
    load_results does (the run's spread between processes pooled over the pairs, and every config's CI covering
    it). The combined records."""
    lines = []
    for config in range(RUN_CONFIGS):
        for repeat in range(2 if config < RUN_PAIRS else 1):
            windows = stopped(source, rng)
            stats = StepStats.from_samples(windows)
            lines.append(
                {m.RUN_ID: "simulated", m.CONFIG_ID: f"c{config}", m.REPEAT: repeat, m.STATUS: m.STATUS_OK}
                | {m.STEP_TIMES_S: windows, m.STEP_TIME_MEDIAN_S: stats.median, m.SAMPLES: len(windows)}
                | {m.STEP_TIME_CI95_LOW_S: stats.ci95_low, m.STEP_TIME_CI95_HIGH_S: stats.ci95_high}
                | {m.GLOBAL_BATCH_SIZE: 1, m.REPLICAS: 1, m.CI_TARGET: TARGET_CI}
            )
    return combine_all(lines)


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
        runs = max(trials // RUN_CONFIGS, 20)
        hits = total = 0
        for _ in range(runs):
            for record in stopped_run(source, rng):
                hits += covered(record[m.STEP_TIME_CI95_LOW_S], record[m.STEP_TIME_CI95_HIGH_S], truth)
                total += 1
        print(f"{source:14s} {'in a run':>8s} {hits / total:10.3f} {'':>10s} ({runs} runs of {RUN_CONFIGS} configs)")


NOISE_TRUE = 1400.0  # the simulated noise scale: tr(Sigma) / |G|^2 of the per-step estimates below


def noise_windows(n: int, steps: int, rho: float, rng: np.random.Generator) -> tuple[list[float], list[float]]:
    """n windows' sums of `steps` probed steps each: per step |G|^2 ~ N(1, 2^2) and tr(Sigma) ~ N(1400, 1500^2),
    both levels wandering together between windows (AR(1) `rho`, sd 30 %: the true ratio stays 1,400)."""
    level, grad_sq, trace = 0.0, [], []
    for _ in range(n):
        level = rho * level + math.sqrt(1 - rho**2) * rng.standard_normal()
        scale = 1 + 0.3 * level
        grad_sq.append(float(rng.normal(scale, 2.0, steps).sum()))
        trace.append(float(rng.normal(NOISE_TRUE * scale, 1500.0, steps).sum()))
    return grad_sq, trace


def noise_scale(trials: int) -> None:
    """The noise scale's 95 % CI (goodput.NoiseScale.of, Fieller) over windows of a simulated probe: the share that
    holds the true value (an unbounded end holds everything beyond it; no CI at all is not counted)."""
    rng = np.random.default_rng(20261206)
    print(f"\ngradient noise scale, {trials} trials each: share of 95 % CIs that contain the true value")
    for steps in (1, 3):
        for rho in (0.0, 0.5):
            cells = []
            for n in (8, 15, 40):
                hits = total = unbounded = 0
                for _ in range(trials):
                    scale = NoiseScale.of(*noise_windows(n, steps, rho, rng))
                    if scale.low is None:
                        continue
                    total += 1
                    unbounded += scale.high is None
                    hits += scale.low <= NOISE_TRUE <= (scale.high if scale.high is not None else math.inf)
                cells.append(f"{n} windows {hits / max(total, 1):.3f} ({unbounded} unbounded)")
            print(f"{steps} probed step(s) a window, level AR(1) {rho}: " + "; ".join(cells))


def coverage_suite(only: str | None, repeats: int | None = None) -> dict:
    """The quickstart's 1- and 2-device OneDevice and Mirrored configs with its settings and repeats (some in two
    processes: the run's process spread comes from them, as in the quickstart); `repeats`: that many processes per
    config instead (1: every run measures no spread, and only the drift between runs widens its CIs)."""
    import yaml

    quickstart = yaml.safe_load((ROOT / "suites" / "quickstart.yaml").read_text())
    include = [
        item
        for item in quickstart["include"]
        if item["strategy"] in ("one_device", "mirrored")
        and item.get("devices_per_node", 1) <= 2
        and only in (None, item["model"])
    ]
    defaults = quickstart["defaults"] | ({} if repeats is None else {"repeats": repeats})
    return {"name": "coverage", "device": quickstart["device"], "defaults": defaults, "include": include}


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} = {hits / total:.2f}" if total else "-"


def processes(count: int, only: str | None, keep: str | None, repeats: int | None = None) -> None:
    """`count` runs of the coverage suite (each a fresh set of processes), then for each run and config: does the
    interval tfscale states (load_results and analyze, as the report reads them) contain the median of the other
    runs' figures? Printed beside the same share for each process's own within-process CI (the stored line)."""
    # Late import: the simulated part needs no runner (and no suite on disk).
    import tfscale

    with tempfile.TemporaryDirectory() as scratch:
        tmp = keep or scratch
        for k in range(count):
            tfscale.run(coverage_suite(only, repeats), run_id=f"round{k:02d}", results_dir=tmp, no_report=True)
        report_coverage(Path(tmp) / "coverage")


def report_coverage(suite_dir: Path) -> None:
    """Print the coverage of the runs under `suite_dir` (results/<suite>)."""
    import tfscale
    from tfscale.labels import model_label, record_mode
    from tfscale.store.records import read_records

    frame = tfscale.analyze(tfscale.load_results(suite_dir))
    lines = [r for run in sorted(suite_dir.iterdir()) if run.is_dir() for r in read_records(run / "records.jsonl")]
    frame = frame[frame[m.STATUS] == m.STATUS_OK]
    count = frame[m.RUN_ID].nunique()
    print(f"\n{count} runs of {len(set(frame[m.CONFIG_ID]))} configs: share of")
    print("a run's stated 95 % interval that contains the median of the other runs' figures")
    print(f"{'config':36s} {'step (stated)':>14s} {'step (1 process)':>17s} {'efficiency':>11s} {'spread %':>9s}")
    totals = dict.fromkeys(("step", "within", "eff"), (0, 0))
    by_drift = dict.fromkeys(("drift", "no drift"), (0, 0))  # stated step-time CIs of runs with / without a drift
    for config, rows in frame.groupby(m.CONFIG_ID, sort=False):
        medians = list(rows[m.STEP_TIME_MEDIAN_S])
        others = [statistics.median(medians[:i] + medians[i + 1 :]) for i in range(len(medians))]
        hit = [
            covered(lo, hi, o)
            for lo, hi, o in zip(rows[m.STEP_TIME_CI95_LOW_S], rows[m.STEP_TIME_CI95_HIGH_S], others, strict=True)
        ]
        step = sum(hit)
        for h, df in zip(hit, rows[m.RUN_DRIFT_DF], strict=True):
            key = "drift" if _given(df) else "no drift"
            by_drift[key] = (by_drift[key][0] + h, by_drift[key][1] + 1)
        by_run = dict(zip(rows[m.RUN_ID], others, strict=True))
        own = [r for r in lines if r[m.CONFIG_ID] == config and r[m.STATUS] == m.STATUS_OK]
        within = sum(covered(r[m.STEP_TIME_CI95_LOW_S], r[m.STEP_TIME_CI95_HIGH_S], by_run[r[m.RUN_ID]]) for r in own)
        effs = list(rows[m.SCALING_EFFICIENCY])
        is_base = rows.iloc[0][m.STRATEGY] == "one_device"
        eff = (0, 0)
        if not is_base:
            hits = sum(
                covered(lo, hi, statistics.median(effs[:i] + effs[i + 1 :]))
                for i, (lo, hi) in enumerate(
                    zip(rows[m.SCALING_EFFICIENCY_CI95_LOW], rows[m.SCALING_EFFICIENCY_CI95_HIGH], strict=True)
                )
            )
            eff = (hits, len(effs))
        for key, (hits, total) in (("step", (step, len(rows))), ("within", (within, len(own))), ("eff", eff)):
            totals[key] = (totals[key][0] + hits, totals[key][1] + total)
        spread = statistics.stdev(np.log(medians)) * 100 if len(medians) > 1 else float("nan")
        first = rows.iloc[0]
        label = f"{model_label(first[m.MODEL], first[m.MODEL_SIZE])} {record_mode(first)} x{first[m.DEVICES]}"
        print(
            f"{label:36s} {f'{step}/{len(rows)}':>14s} {f'{within}/{len(own)}':>17s} "
            f"{f'{eff[0]}/{eff[1]}' if eff[1] else '-':>11s} {spread:9.1f}"
        )
    print(
        f"stated step-time CI of runs with a drift from the runs before: {_share(*by_drift['drift'])}; "
        f"of runs without one: {_share(*by_drift['no drift'])}"
    )
    spreads = frame[[m.RUN_ID, m.PROCESS_SPREAD_SD_REL, m.PROCESS_SPREAD_DF]].drop_duplicates()
    print(
        f"all: stated step-time CI {_share(*totals['step'])}; one process's own CI {_share(*totals['within'])}; "
        f"efficiency {_share(*totals['eff'])}"
    )
    print(
        "the runs' process spread (sd of log process medians beyond noise): "
        + ", ".join(_sd_df(sd, df) for _, sd, df in spreads.itertuples(index=False))
    )
    drifts = frame[[m.RUN_ID, m.RUN_DRIFT_SD_REL, m.RUN_DRIFT_DF]].drop_duplicates()
    print(
        "the runs' drift between runs (from the runs before each, tfscale.stats.drift): "
        + ", ".join(_sd_df(sd, df) for _, sd, df in drifts.itertuples(index=False))
    )


def _given(value) -> bool:
    """Whether a column holds a number (an empty one reads as NaN or None)."""
    return isinstance(value, int | float) and not math.isnan(value)


def _sd_df(sd, df) -> str:
    """The figure as "12.4% (18 df)", or "-" for a run without it."""
    return f"{sd:.1%} ({int(df)} df)" if _given(df) else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=0, help="K fresh runs of each config (0: simulated only)")
    parser.add_argument("--only", help="only configs of this model")
    parser.add_argument("--repeats", type=int, help="processes per config instead of the quickstart's (auto)")
    parser.add_argument("--keep", help="results folder to keep the runs in (default: a temporary one)")
    parser.add_argument("--from", dest="kept", help="only evaluate runs kept before: their results/<suite> folder")
    args = parser.parse_args()
    if args.kept:
        report_coverage(Path(args.kept))
        return 0
    simulated(args.trials)
    noise_scale(max(args.trials // 2, 100))
    if args.processes:
        processes(args.processes, args.only, args.keep, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
