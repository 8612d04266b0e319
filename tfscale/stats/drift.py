"""The drift between runs: how far a run's median step of a config strays from that config's over runs of the same
suite on the same host, beyond what the run's own CI covers (its windows and its spread between processes). Pure.

Why: a run of a few minutes measures the spread within its processes and between them (tfscale.stats.repeats), but
not the machine's state from one run to the next (other tenants, frequency, caches), which a rerun meets. Measured
on 2 shared cores (tests/benchmarks/bench_coverage.py, 8 runs of 9 configs one after another, 2026-12-07): the
drift came out 0.0 % sd (9 to 36 degrees of freedom) while the runs' own CIs explained their spread, and 8.6 % and
7.1 % sd (45, 54) once two runs' process spreads had been 0.0 % in a noisier hour, when configs' medians spread
10-20 % between runs. A run's stated CIs contained the median of the other runs' 67 of 72 times (step time) and
48 of 48 (efficiency).

How: from the suite's earlier runs on this host (the HISTORY_RUNS latest), each config's record as that run stated
it, without a drift term of its own: for each config ok in two or more of them, the sample variance of the log
medians less the mean variance each run accounts for, times runs - 1; pooled over the configs, divided by the summed
runs - 1 (the degrees of freedom), floored at 0; as the process spread is pooled. A run with such a history widens
every CI it states by that sd (Student's t with those degrees of freedom), and its ci_covers says so. What a run
accounts for is its processes' own noise and its spread between processes for that many processes
(tfscale.stats.repeats.explained_variance), not its stated CI's width: that adds margins for how well the run
knew them (Student's t of 2.45 with 6 degrees of freedom), which read as variance left the drift at 0.0 % in all 8
runs of two bench_coverage sets (2026-12-07) while configs' medians spread 6-17 % between runs; accounted for so,
the same 8 runs gave 4.6 % (63 degrees of freedom). Records without their process lines are read from their CI
(stated_quantile).

Where it falls short: a real change among those earlier runs (a slower commit) counts as drift until it has left
the HISTORY_RUNS latest: the CIs are then wider than the machine's drift alone makes them, never narrower;
`tfscale history` finds such a change.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tfscale import metrics as m
from tfscale.stats.core import Z_975, ci_log_variance, excess_spread, t_975

HISTORY_RUNS = 10  # the earlier runs a run's drift is estimated from: recent enough to be this machine's state
ENV_KEY = "run_drift"  # in a run's env.json: {"sd_log", "df", "runs"}, or null where the suite had no such history


@dataclass(frozen=True)
class RunDrift:
    """The spread of a config's median step between runs beyond each run's own CI: the sd of log run medians (0.05 is
    ~5 %), its degrees of freedom and the earlier runs it was estimated from."""

    sd_log: float
    df: int
    runs: int

    def offset_sd(self, processes: int) -> float:
        """The same for any number of processes: a run's drift moves all of its processes together."""
        return self.sd_log


def step_log_variance(record: Mapping[str, Any], quantile: float = Z_975) -> float:
    """The variance of a record's log median step time that its stated CI explains, the CI read as `quantile`
    standard errors on each side (0 without a CI; stats.core.ci_log_variance)."""
    middle, low, high = (record.get(k) for k in (m.STEP_TIME_MEDIAN_S, m.STEP_TIME_CI95_LOW_S, m.STEP_TIME_CI95_HIGH_S))
    return ci_log_variance(middle, low, high, quantile)


def stated_quantile(record: Mapping[str, Any]) -> float:
    """The standard errors on each side a record's stated CI spans: Student's t with its process spread's degrees
    of freedom where it covers one (the spread's term dominates it), else Z_975."""
    df = record.get(m.PROCESS_SPREAD_DF)
    if isinstance(df, int | float) and not isinstance(df, bool) and math.isfinite(df) and df >= 1:
        return t_975(int(df))
    return Z_975


def between_runs(
    records: Iterable[Mapping[str, Any]], explained: Callable[[Mapping[str, Any]], float] | None = None
) -> RunDrift | None:
    """The drift pooled over the configs of earlier runs' records (one per run and config, as load_results gives
    them, their CIs without a drift term); None where no config is ok in two or more runs. `explained`: the variance
    of a record's log median its run accounts for (default: read from its stated CI, stated_quantile)."""
    explained = explained or (lambda r: step_log_variance(r, stated_quantile(r)))
    by_config: dict[Any, list[Mapping[str, Any]]] = {}
    runs = set()
    for record in records:
        if record.get(m.STATUS) == m.STATUS_OK and record.get(m.STEP_TIME_MEDIAN_S):
            by_config.setdefault(record.get(m.CONFIG_ID), []).append(record)
            runs.add(record.get(m.RUN_ID))
    found = excess_spread(
        [[(math.log(r[m.STEP_TIME_MEDIAN_S]), explained(r)) for r in seen] for seen in by_config.values()]
    )
    return None if found is None else RunDrift(found.sd, found.df, len(runs))
