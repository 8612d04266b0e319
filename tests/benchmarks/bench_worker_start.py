"""Benchmark: what a worker process spends before its first step, import by import.

Every config runs in a fresh process whose first seconds are `import tensorflow`: on 2 shared cores that is most
of a quick config's wall time (the quickstart starts 23 processes, the tests about 490). This prints, each from
fresh interpreters taking turns (so a slow spell of the machine falls on every variant alike):

- `import ml_dtypes` alone (TensorFlow imports it first; its version is printed: 0.7.0 took 1.3-1.4 s here, 0.6.0
  and 0.5.4 0.2 s, numpy included);
- `import tensorflow` as a plain script does it, and as the worker does it (tfscale.worker.main.import_tensorflow:
  pandas hidden while Keras imports, which would load it only to accept DataFrames in `fit`);
- `import tfscale.worker.main`, tfscale's own modules a worker loads before TensorFlow.

    python tests/benchmarks/bench_worker_start.py [--rounds 5]

Prints the median and range of each, in seconds; no assertion (a figure, not a timed test).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from importlib import metadata

VARIANTS = {
    "import ml_dtypes": "import ml_dtypes",
    "import tensorflow (plain)": "import tensorflow",
    "import tensorflow (worker)": "from tfscale.worker.main import import_tensorflow; import_tensorflow()",
    "import tfscale.worker.main": "import tfscale.worker.main",
}


def seconds(code: str) -> float:
    """Wall time of a fresh interpreter running `code`, its own start included (`python -c pass`: 0.04-0.06 s
    here)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(args.rounds):
        for name, code in VARIANTS.items():
            times[name].append(seconds(code))
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("tensorflow", "keras", "ml_dtypes", "numpy", "pandas"))
    print(f"{versions}; {args.rounds} fresh processes each, in turns")
    for name, values in times.items():
        print(f"{name:28s} median {statistics.median(values):6.2f} s  (range {min(values):.2f} to {max(values):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
