"""Benchmark: isolated all-reduce bandwidth on simulated hosts against the shaped link (needs root).

For each link rate (and unshaped loopback, the CPU's own ceiling on this machine), one MultiWorkerMirrored
commbench sweep of large messages on N simulated hosts, in one run. Prints busbw / link per size and the TCP
check / link. Target (issue 8): for messages of >= 4 MB on links of <= 1 Gbit/s, busbw >= 0.85 x link and within
10 % of the TCP check.

    python tests/benchmarks/bench_netsim.py [--nodes 2] [--links 100mbit 1gbit] [--max-mb 16]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tfscale.launch.local import LocalLauncher
from tfscale.netsim.network import unavailable_reason
from tfscale.runner.commbench import run_sweep, sizes_between, sweep_spec, topology_spec

TARGET_FRACTION = 0.85
TARGET_AGREEMENT = 0.10


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--links", nargs="+", default=["100mbit", "1gbit"])
    parser.add_argument("--min-mb", type=int, default=4)
    parser.add_argument("--max-mb", type=int, default=16)
    parser.add_argument("--iters", type=int, default=5)
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    sizes = sizes_between(args.min_mb << 20, args.max_mb << 20)
    met = True
    with tempfile.TemporaryDirectory(prefix="tfscale-bench-netsim-") as tmp:
        for link in [None, *args.links]:
            spec = topology_spec("cpu", "multi_worker_mirrored", args.nodes, 1, network_link=link, timeout_s=600.0)
            sweep = run_sweep(sweep_spec(spec, sizes, args.iters, 2), Path(tmp), LocalLauncher())
            if link is None:
                print(f"loopback ({args.nodes} processes, unshaped): the CPU's ceiling for this all-reduce here")
                for row in sweep.rows:
                    print(f"  {row.size_bytes >> 20:>4d} MiB  busbw {row.busbw_bytes_per_s / 1e6:8.1f} MB/s")
                continue
            rate, check = sweep.link_bytes_per_s, sweep.link_measured_bytes_per_s
            print(
                f"{link} ({rate / 1e6:.1f} MB/s per node and direction), {args.nodes} simulated hosts: "
                f"TCP check {check / 1e6:.2f} MB/s = {check / rate:.3f} x link"
            )
            for row in sweep.rows:
                fraction, agreement = row.busbw_bytes_per_s / rate, row.busbw_bytes_per_s / check - 1
                ok = fraction >= TARGET_FRACTION and abs(agreement) <= TARGET_AGREEMENT
                met &= ok
                print(
                    f"  {row.size_bytes >> 20:>4d} MiB  busbw {row.busbw_bytes_per_s / 1e6:8.2f} MB/s = "
                    f"{fraction:.3f} x link, {agreement:+.1%} vs TCP check  {'ok' if ok else 'below target'}"
                )
    print(
        f"target (busbw >= {TARGET_FRACTION} x link, within {TARGET_AGREEMENT:.0%} of TCP): "
        + ("met" if met else "not met for every link and size")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
