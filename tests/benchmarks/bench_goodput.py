"""Benchmark: what measuring the gradient noise scale in the step costs (issue 18: at most 1 %).

Runs the teacher task's zoo models with Mirrored on 2 logical devices, each with `grad_noise: true` and with
`grad_noise: false`, alternately in fresh processes (A B A B ...: slow drift of the machine falls on both), through
tfscale's runner, and prints per model the median step with and without the probe over the rounds and the overhead
(with / without - 1) with the range over rounds; then the noise scale each round measured.

    python tests/benchmarks/bench_goodput.py [--rounds 3] [--models mlp,cnn,transformer] [--measure 2.0]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile

from tfscale import api
from tfscale import formatting as fmt
from tfscale import metrics as m


def suite(model: str, probe: bool, measure_s: float) -> dict:
    return {
        "name": f"bench-goodput-{model}-{'on' if probe else 'off'}",
        "device": "cpu",
        "defaults": {
            "model": model,
            "model_size": "tiny",
            "batch_size": 32,
            "task": "teacher",
            "grad_noise": probe,
            "strategy": "mirrored",
            "devices_per_node": 2,
            "comm_breakdown": False,
            "max_measure_s": measure_s,
            "max_warmup_s": 1.0,
            "telemetry_hz": 0,
            "timeout_s": 300,
        },
        "matrix": {"batch_size": [32]},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", default="mlp,cnn,transformer")
    parser.add_argument("--measure", type=float, default=2.0, help="max_measure_s per config")
    args = parser.parse_args()
    steps: dict[tuple[str, bool], list[float]] = {}
    noise: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for model in args.models.split(","):
                for probe in (True, False):
                    frame = api.run(suite(model, probe, args.measure), results_dir=tmp, no_report=True, quiet=True)
                    [row] = frame.to_dict("records")
                    if row[m.STATUS] != m.STATUS_OK:
                        print(f"{model} grad_noise={probe}: {row[m.STATUS]}: {row[m.REASON]}", file=sys.stderr)
                        return 1
                    steps.setdefault((model, probe), []).append(row[m.STEP_TIME_MEDIAN_S])
                    if probe:
                        noise.setdefault(model, []).append(row[m.GRAD_NOISE_SCALE])
    print(f"{'model':<12} {'with probe':>12} {'without':>12} {'overhead':>9}  per round")
    for model in args.models.split(","):
        on, off = steps[(model, True)], steps[(model, False)]
        rounds = [a / b - 1 for a, b in zip(on, off, strict=True)]
        overhead = statistics.median(on) / statistics.median(off) - 1
        print(
            f"{model:<12} {fmt.ms(statistics.median(on)):>12} {fmt.ms(statistics.median(off)):>12} "
            f"{fmt.change(overhead):>9}  {', '.join(fmt.change(r) for r in rounds)}"
        )
    for model, values in noise.items():
        print(f"{model}: grad_noise_scale per round: {', '.join(f'{v:,.0f}' for v in values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
