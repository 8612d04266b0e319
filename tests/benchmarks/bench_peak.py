"""Benchmark: the CPU peak microbenchmark's repeatability, and the MFU of the quickstart's single-device configs.

Measures the host's peak FLOP/s (tfscale.worker.peak, as `tfscale run` does before a CPU sweep on a host it has not
measured yet) twice, in two fresh worker processes, bypassing the cache, and prints both and how far apart they are
(the issue's bar: within 5 %); then runs the quickstart's 1-device configs through tfscale's runner and prints each
one's FLOPs per step, achieved FLOP/s and MFU against the first measurement.

    python tests/benchmarks/bench_peak.py [--suite suites/quickstart.yaml]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd

from tfscale import contract
from tfscale import metrics as m
from tfscale.analysis import add_scaling
from tfscale.labels import model_label, record_mode
from tfscale.launch.processes import call_worker
from tfscale.measures.peaks import ENV_KEY, host_peaks
from tfscale.runner.configs import peak_record, run_config
from tfscale.suite.planner import expand
from tfscale.suite.suitefile import load_suite

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=str(ROOT / "suites" / "quickstart.yaml"))
    args = parser.parse_args()
    # Straight to the worker, twice: tfscale's own path (envinfo.cpu_peaks) would answer the second from its cache.
    runs = [call_worker(contract.PEAK, 300.0, request={"counts": [1], "dtypes": ["float32"]}) for _ in range(2)]
    for run in runs:
        run["host"] = host_peaks(run["total"])
    peaks = [run["host"]["float32"] for run in runs]
    apart = abs(peaks[0] - peaks[1]) / min(peaks)
    print(f"CPU peak (float32, host): {peaks[0] / 1e9:.1f} and {peaks[1] / 1e9:.1f} GFLOP/s, {apart:.1%} apart")
    print(f"method: {runs[0]['method']}")
    env = {ENV_KEY: runs[0]}
    specs = [s for s in expand(load_suite(args.suite)).specs if s.devices == 1]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tfscale-bench-peak-") as tmp:
        for spec in specs:
            record = run_config(spec, Path(tmp), "bench")
            if record[m.STATUS] == m.STATUS_OK:
                record |= peak_record(spec, env, "local")
            rows.append(record)
    frame = add_scaling(pd.DataFrame(rows))
    print(f"\n{'config':32} {'GFLOP/step':>11} {'achieved GFLOP/s':>17} {'MFU':>6}")
    for _, r in frame.iterrows():
        name = f"{model_label(r[m.MODEL], r[m.MODEL_SIZE])} {record_mode(r)}"
        if r[m.STATUS] != m.STATUS_OK:
            print(f"{name:32} {r[m.STATUS]}: {r[m.REASON]}")
            continue
        print(f"{name:32} {r[m.FLOPS_PER_STEP] / 1e9:11.4f} {r[m.ACHIEVED_FLOPS_PER_S] / 1e9:17.2f} {r[m.MFU]:6.1%}")
    return 0 if apart <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
