"""Benchmark: what reading files costs the zoo cnn, at 1 and 4 logical devices, in one run.

Runs the cnn with OneDevice and with Mirrored on 4 logical devices, each on synthetic data (one in-memory batch)
and on its TFRecord files (JPEG images decoded and augmented by the tf.data pipeline), side by side in one sweep,
through tfscale's own runner; prints per config the training throughput with synthetic data and with files, their
ratio, the pipeline's input-only throughput, its headroom over the training step (input-only / training with
files), the input wait per step and the input-bound verdict.

    python tests/benchmarks/bench_input.py [--size tiny] [--batch 32] [--measure 2.0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile

import pandas as pd

from tfscale import api
from tfscale import formatting as fmt
from tfscale import metrics as m
from tfscale.analysis import add_scaling, input_comparison


def suite(size: str, batch: int, measure_s: float) -> dict:
    return {
        "name": "bench-input",
        "device": "cpu",
        "defaults": {
            "model": "cnn",
            "model_size": size,
            "batch_size": batch,
            "max_measure_s": measure_s,
            "max_warmup_s": 1.0,
            "telemetry_hz": 0,
            "timeout_s": 300,
        },
        "matrix": {"data": ["synthetic", "files"], "strategy": ["one_device", "mirrored"], "devices_per_node": [1, 4]},
        "exclude": [{"strategy": "one_device", "devices_per_node": 4}, {"strategy": "mirrored", "devices_per_node": 1}],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="tiny")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--measure", type=float, default=2.0, help="max_measure_s per config")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        frame = api.run(suite(args.size, args.batch, args.measure), results_dir=tmp, no_report=True, quiet=True)
    frame = add_scaling(frame)
    failed = frame[frame[m.STATUS] != m.STATUS_OK]
    if not failed.empty:
        print(failed[[m.CONFIG_ID, m.STATUS, m.REASON]].to_string(), file=sys.stderr)
        return 1
    rows = input_comparison(frame)
    table = pd.DataFrame(
        {
            "config": [f"cnn/{args.size} {r[m.STRATEGY]} x{r[m.DEVICES]}" for _, r in rows.iterrows()],
            "synthetic ex/s": rows[m.SYNTHETIC_THROUGHPUT_EXAMPLES_PER_S].map(fmt.rate),
            "files ex/s": rows[m.THROUGHPUT_EXAMPLES_PER_S].map(fmt.rate),
            "files/synthetic": rows[m.FILES_VS_SYNTHETIC].map("{:.2f}".format),
            "input-only ex/s": rows[m.INPUT_THROUGHPUT_EXAMPLES_PER_S].map(fmt.rate),
            "headroom": rows[m.INPUT_HEADROOM].map("{:.2f}".format),
            "input wait": [
                fmt.ms(r[m.INPUT_WAIT_TIME_S], r[m.INPUT_WAIT_TIME_CI95_LOW_S], r[m.INPUT_WAIT_TIME_CI95_HIGH_S])
                for _, r in rows.iterrows()
            ],
            "input-bound": rows[m.INPUT_BOUND],
        }
    )
    print(table.to_string(index=False))
    for _, r in rows.iterrows():
        print(f"cnn/{args.size} {r[m.STRATEGY]} x{r[m.DEVICES]}: {r[m.INPUT_BOUND_NOTE]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
