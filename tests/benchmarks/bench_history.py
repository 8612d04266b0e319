"""Benchmark: `tfscale history` of 200 runs x 50 configs (issue 36: renders in <= 5 s and <= 10 MB).

Builds a suite folder of `--runs` runs, each of `--configs` configs: the quickstart run's records (tests/data) in
three batch-size families with their own config ids, every figure moved by a run's own 1 % offset, and a 10 %
slowdown of one config from run 3/4 on; each run's env.json and plan.json as `tfscale run` writes them. Then times,
as `tfscale history SUITE -o page.html` does: reading and analysing the records and finding the steps
(tfscale.history), and writing the page, the first time (every run analysed) and the next (each run's figures
read from the figures.json the first kept); prints each, the page's size and the steps found. Figures, no
assertion.

    python tests/benchmarks/bench_history.py [--runs 200] [--configs 50]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from tfscale.api import history
from tfscale.htmlreport.history import page

DATA = Path(__file__).resolve().parent.parent / "data" / "quickstart-run"
SCALED = ("step_time_median_s", "step_time_mean_s", "step_time_p10_s", "step_time_p90_s", "step_time_mad_s")
SCALED += ("step_time_ci95_low_s", "step_time_ci95_high_s", "compute_time_s", "comm_time_exposed_s")
SCALED += ("comm_time_exposed_ci95_low_s", "comm_time_exposed_ci95_high_s")


def templates(configs: int) -> list[dict]:
    """`configs` records: the quickstart's configs (first record of each) in batch-size families x1, x2, x4."""
    firsts: dict[str, dict] = {}
    for line in (DATA / "records.jsonl").read_text().splitlines():
        record = json.loads(line)
        firsts.setdefault(record["config_id"], record)
    out = []
    for family in range(3):
        for config_id, record in firsts.items():
            scale = 2**family
            copy = dict(record, config_id=f"{family}{config_id[1:]}")
            copy["batch_size"] = record["batch_size"] * scale
            copy["global_batch_size"] = record["global_batch_size"] * scale
            out.append(copy)
    return out[:configs]


def write_run(suite: Path, index: int, records: list[dict], env: dict, slow_from: int, rng: random.Random) -> None:
    run_id = f"2026{index // 28 + 1:02d}{index % 28 + 1:02d}-r{index:03d}"
    folder = suite / run_id
    folder.mkdir(parents=True)
    (folder / "env.json").write_text(json.dumps(env))
    plan = {"plan_version": 2, "tfscale_version": "bench", "suite_path": "bench.yaml", "specs": []}
    (folder / "plan.json").write_text(json.dumps(plan | {"label": f"v{index}", "commit": f"abc{index:04d}"}))
    offset = 1 + rng.gauss(0, 0.01)
    with open(folder / "records.jsonl", "w") as f:
        for n, record in enumerate(records):
            factor = offset * (1.1 if n == 1 and index >= slow_from else 1.0)
            out = dict(record, run_id=run_id)
            out["started_at"] = f"2026-{index // 28 + 1:02d}-{index % 28 + 1:02d}T{index % 24:02d}:00:00+00:00"
            for key in SCALED:
                if isinstance(record.get(key), float):
                    out[key] = record[key] * factor
            out["step_times_s"] = [t * factor for t in record.get("step_times_s") or []]
            out["throughput_examples_per_s"] = record["global_batch_size"] / out["step_time_median_s"]
            f.write(json.dumps(out) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--configs", type=int, default=50)
    args = parser.parse_args()
    records = templates(args.configs)
    env = json.loads((DATA / "env.json").read_text())
    rng = random.Random(7)
    slow_from = args.runs * 3 // 4
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "bench"
        for index in range(args.runs):
            write_run(suite, index, records, env, slow_from, rng)
        start = time.perf_counter()
        history(suite)  # the first time: every run analysed, its figures kept in its figures.json
        cold = time.perf_counter() - start
        start = time.perf_counter()
        found = history(suite)
        read = time.perf_counter() - start
        text = page(found, "bench")
        seconds = time.perf_counter() - start
        (Path(tmp) / "history.html").write_text(text)
        steps = found.steps
        planted = int(((steps["config_id"] == records[1]["config_id"]) & (steps["order"] == slow_from)).sum())
        size = (Path(tmp) / "history.html").stat().st_size
    print(
        f"{args.runs} runs x {len(records)} configs ({len(found.series)} points; {len(found.steps)} step(s) found, "
        f"{planted} at the planted slowdown's config and run): "
        f"first read, every run analysed, {cold:.2f} s; then, each run's figures kept, read and fitted in "
        f"{read:.2f} s and the page written in {seconds - read:.2f} s: {seconds:.2f} s (target <= 5 s); page "
        f"{size / 1e6:.1f} MB (target <= 10 MB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
