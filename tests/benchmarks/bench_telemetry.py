"""Benchmark: the telemetry sampler's cost on step time, measured side by side.

The same config runs through tfscale's runner with the sampler at 10 Hz and with it off, alternating, for a few
rounds; prints each round's median step times and the median of the per-round ratios. Target: < 1 % slower.

    python tests/benchmarks/bench_telemetry.py [--rounds 5] [--hz 10]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
from pathlib import Path

from tfscale.runner.configs import run_config
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

SUITE = """
name: bench-telemetry
defaults: {model_size: small, steps: 60, warmup_steps: 5, comm_breakdown: false}
matrix: {strategy: [mirrored], devices_per_node: [2]}
"""


def sample_cpu_s(samples: int = 500) -> float:
    """CPU seconds one host sample costs (what the sampler thread does each tick, without NVML)."""
    import os
    import time

    import psutil

    from tfscale.host.telemetry import ProcessTrees

    trees = ProcessTrees(lambda: [os.getpid()])
    start = time.process_time()
    for _ in range(samples):
        psutil.net_io_counters()
        psutil.cpu_percent(interval=None)
        trees.rss()
    return (time.process_time() - start) / samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hz", type=float, default=10.0)
    args = parser.parse_args()
    spec = expand(parse_suite(SUITE, "bench")).specs[0]
    variants = {
        "sampler": dataclasses.replace(spec, telemetry_hz=args.hz),
        "off": dataclasses.replace(spec, telemetry_hz=0.0),
    }
    medians: dict[str, list[float]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(args.rounds):
            order = list(variants) if index % 2 == 0 else list(reversed(variants))
            for name in order:
                record = run_config(variants[name], Path(tmp) / f"{name}{index}", "bench")
                medians[name].append(record["step_time_median_s"])
            print(f"round {index + 1}: " + "  ".join(f"{n} {medians[n][-1] * 1e3:.3f} ms" for n in variants))
    ratios = sorted(s / o for s, o in zip(medians["sampler"], medians["off"], strict=True))
    cost = sample_cpu_s()
    print(f"sampler CPU per sample {cost * 1e3:.3f} ms: at {args.hz:g} Hz {cost * args.hz * 100:.2f} % of one core")
    print(
        f"step time with sampler / without: median of per-round ratios {statistics.median(ratios):.4f} "
        f"(range {ratios[0]:.4f}-{ratios[-1]:.4f}; target < 1.01) for {spec.model}/{spec.model_size} "
        f"mirrored x2, {args.hz:g} Hz"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
