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
knew them (Student's t of 2.45 with 6 degrees of freedom), which read as variance left the drift at 0.0 % in every
run that had one (the third to the eighth) of two bench_coverage sets of 8 runs (2026-12-07; the second set re-read
with that t: 0.0 % again) while configs' medians spread 6-17 % between runs; accounted for so, the second set's 8
runs gave 4.6 % (63 degrees of freedom). Records without their process lines are read from their CI.

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
from tfscale.stats.core import Z_975, ci_log_variance, excess_spread

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


def stored_estimate(sd: Any, df: Any, runs: Any, least_runs: int = 0) -> tuple[float, int, int] | None:
    """A log-sd, its degrees of freedom and the runs it came from as a file stores them (env.json, a record), or
    None where they are not one: missing, or an edited file (the run's CIs then leave it out, rather than the run
    stopping)."""
    numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (sd, df, runs))
    if not numbers or not math.isfinite(sd) or sd < 0 or df < 1 or runs < least_runs:
        return None
    return float(sd), int(df), int(runs)


def between_runs(
    records: Iterable[Mapping[str, Any]], explained: Callable[[Mapping[str, Any]], float] | None = None
) -> RunDrift | None:
    """The drift pooled over the configs of earlier runs' records (one per run and config, as load_results gives
    them, their CIs without a drift term); None where no config is ok in two or more runs. `explained`: the variance
    of a record's log median its run accounts for (default: read from its stated CI as Z_975 standard errors)."""
    explained = explained or step_log_variance
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
