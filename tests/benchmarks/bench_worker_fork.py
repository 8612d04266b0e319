"""Benchmark: workers forked by the zygote against workers started as fresh interpreters, side by side.

A CPU config's worker is forked from a process that has imported TensorFlow once (tfscale.launch.zygote) instead
of paying `import tensorflow` itself. This runs each config as a forked worker and as a fresh one, in turns (so a
slow spell of the machine falls on both alike), and prints per config and start method:

- the seconds from start to exit (what a run waits per process);
- the median step time the worker measured, and each process's median against the other method's: forking must
  change when a worker starts, not what it measures (the spread between processes is several % here, so a
  difference inside it is noise);
- the peak resident set the worker recorded (a forked worker shares the zygote's pages copy-on-write).

    python tests/benchmarks/bench_worker_fork.py [--rounds 4]

No assertion (a figure, not a timed test).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tfscale import contract
from tfscale import metrics as m
from tfscale.launch.processes import kill_tree, start_worker
from tfscale.launch.zygote import stop_zygote
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import parse_suite

SUITE = """
name: fork
defaults: {model_size: tiny, batch_size: 16, max_measure_s: 0.8, max_warmup_s: 1.2, telemetry_hz: 0}
include:
  - {model: mlp, strategy: one_device}
  - {model: cnn, strategy: mirrored, devices_per_node: 2}
"""
METHODS = {"forked": contract.WORKER_START_FORK, "fresh": contract.WORKER_START_EXEC}


def run_once(spec, folder: Path, method: str) -> tuple[float, float, float]:
    """(seconds start to exit, median step s, peak RSS bytes) of one worker started by `method`."""
    (folder / "spec.json").write_text(json.dumps(spec.to_dict()))
    result = folder / "result.json"
    result.unlink(missing_ok=True)
    argv = contract.worker_argv(result, contract.TRAIN, folder / "spec.json")
    os.environ[contract.WORKER_START_ENV] = method
    with open(folder / f"{method}.log", "ab") as log:
        start = time.perf_counter()
        process = start_worker(argv, log, dict(os.environ), fork=True)
        process.wait()
        seconds = time.perf_counter() - start
        kill_tree(process)
    measured = json.loads(result.read_text())["measurements"]
    return seconds, measured[m.STEP_TIME_MEDIAN_S], measured[m.HOST_RSS_PEAK_BYTES]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    specs = expand(parse_suite(SUITE, "fork.yaml")).specs
    seen: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-fork-") as tmp:
        for _ in range(args.rounds):
            for spec in specs:
                for name, method in METHODS.items():
                    seen.setdefault((spec.config_id, name), []).append(run_once(spec, Path(tmp), method))
    stop_zygote()
    print(f"{args.rounds} processes per config and method, in turns; the zygote's own start is in the first forked")
    for spec in specs:
        for name in METHODS:
            rows = seen[(spec.config_id, name)]
            walls, steps, rss = zip(*rows, strict=True)
            print(
                f"{spec.model} {spec.strategy} x{spec.devices_per_node} {name:6s}: "
                f"start to exit median {statistics.median(walls):5.2f} s (range {min(walls):.2f}-{max(walls):.2f}); "
                f"step median of medians {statistics.median(steps) * 1e3:7.2f} ms "
                f"(range {min(steps) * 1e3:.2f}-{max(steps) * 1e3:.2f}); "
                f"peak RSS {statistics.median(rss) / 2**20:.0f} MiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
