"""Benchmark: how often tfscale.stats.changepoints calls a step that is not there, and finds one that is.

Simulated series of runs (seeded): each run's figure with log-normal noise of 1 % and a 95 % CI that states that
noise (or a third of it: one-process CIs are that much too narrow), n runs; a 5 % step at the middle, and a step
the size of the noise. Prints, per n, the share of steady series with a step (false steps), the share with the 5 %
step found at its run, and the share where a 1 % step is called. Figures, no assertion.

    python tests/benchmarks/bench_changepoints.py [--trials 300]
"""

from __future__ import annotations

import argparse
import math
import random

from tfscale.stats.changepoints import METHOD, Point, find_steps


def series(rng: random.Random, n: int, sd: float, ci_sd: float, step_at: int | None = None, step: float = 0.0):
    points = []
    for i in range(n):
        level = 1.0 + (step if step_at is not None and i >= step_at else 0.0)
        value = level * math.exp(rng.gauss(0, sd))
        points.append(Point(value, value * math.exp(-1.96 * ci_sd), value * math.exp(1.96 * ci_sd)))
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(1)
    print(f"method: {METHOD}")
    for n in (10, 20, 50, 200):
        trials = args.trials if n < 200 else max(args.trials // 5, 1)
        false = sum(bool(find_steps(series(rng, n, 0.01, 0.01)).steps) for _ in range(trials)) / trials
        narrow = sum(bool(find_steps(series(rng, n, 0.03, 0.01)).steps) for _ in range(trials)) / trials
        found = sum(
            any(s.index == n // 2 for s in find_steps(series(rng, n, 0.01, 0.01, n // 2, 0.05)).steps)
            for _ in range(trials)
        )
        noise = sum(bool(find_steps(series(rng, n, 0.01, 0.01, n // 2, 0.01)).steps) for _ in range(trials))
        print(
            f"n {n:>3} ({trials} trials): false steps {false:.3f}, with CIs 3x too narrow {narrow:.3f}; "
            f"5 % step found at its run {found / trials:.2f}; 1 % step (= noise) called {noise / trials:.2f}"
        )


if __name__ == "__main__":
    main()
