"""Benchmark: `tfscale report` on 10,000 records (the example run's records repeated with new config ids).

Prints the wall time of write_report and the size of the HTML file. Targets (issue 9): under 5 s, under 5 MB.

    python tests/benchmarks/bench_report.py [--records 10000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from tfscale.htmlreport import write_report

DATA = Path(__file__).resolve().parent.parent / "data" / "example-run"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    args = parser.parse_args()
    originals = [json.loads(line) for line in (DATA / "records.jsonl").read_text().splitlines()]
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "bench" / "r"
        run.mkdir(parents=True)
        with open(run / "records.jsonl", "w") as f:
            for i in range(args.records):
                record = dict(originals[i % len(originals)])
                record["config_id"] = f"{i:012x}"
                record["run_id"] = f"r{i // len(originals)}"  # each copy of the run is its own run
                f.write(json.dumps(record) + "\n")
        start = time.perf_counter()
        output = write_report([run], Path(tmp) / "report.html")
        seconds = time.perf_counter() - start
        size = output.stat().st_size
    print(
        f"{args.records} records: report written in {seconds:.2f} s (target < 5 s), "
        f"{size / 2**20:.1f} MiB (target < 5 MB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
