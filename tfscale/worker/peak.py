"""The CPU's peak FLOP/s per logical device, measured once per host by a matmul microbenchmark (the denominator of
MFU on CPUs; GPUs take theirs from tfscale.measures.peaks' datasheet table).

For each logical-device count n asked for: n square matmuls at a time, one on each of n logical CPU devices (they
share the host's cores, as the configs' devices do), timed in windows of at least WINDOW_S after a warm-up; a
count's figure is its best window. measures.peaks takes the host's peak as the best any count reached (n matmuls at
once oversubscribe the cores' threads: two at once reached 0.6 of one, once, here), and a device's peak as its n-th
part, since n logical devices share the same cores. Each compute dtype the configs train in is measured.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

SIZE = 1024  # a square matmul big enough for the BLAS kernels' peak, small enough for ~20 ms on 2 cores
CHAIN = 4  # matmuls per device per call: one host round trip per CHAIN x n matmuls
WINDOWS = 15  # ~1.5 s of windows: a slow spell of the host shorter than that leaves one window at the peak
WINDOW_S = 0.1
METHOD = (
    f"matmul microbenchmark: {SIZE}x{SIZE} matmuls (2 {SIZE}^3 FLOPs each), n at a time on n logical CPU devices for "
    f"each count n, {WINDOWS} windows of >= {WINDOW_S:g} s after a warm-up, the best window's FLOP/s; "
    "the host's peak is the best count's, each of n devices' peak its n-th part"
)


def measure(counts: list[int], dtypes: list[str]) -> dict[str, Any]:
    """{"total": {dtype: {str(n): FLOP/s of n at once}}, "spread": {dtype: {str(n): (max - min) / median of the
    windows}}, "method": METHOD}, for each of `counts` (the parent asks for 1 too: the host's own peak). Sets up
    max(counts) logical CPU devices (TF allows that once per process). measures.peaks makes the per-device peaks."""
    import tensorflow as tf

    from tfscale.worker.devices import setup_devices

    devices = setup_devices("cpu", max(counts))
    totals: dict[str, dict[str, float]] = {}
    spread: dict[str, dict[str, float]] = {}
    for dtype in dtypes:
        totals[dtype], spread[dtype] = {}, {}
        for n in sorted(set(counts)):
            rates = _rates(tf, devices[:n], tf.as_dtype(dtype))
            # A peak is the best the hardware did: other work on the host only ever slows a window down (seen
            # here: window medians 124-184 GFLOP/s over four runs, their best windows 171-191)
            totals[dtype][str(n)] = max(rates)
            spread[dtype][str(n)] = (max(rates) - min(rates)) / statistics.median(rates)
    return {"total": totals, "spread": spread, "method": METHOD}


def _rates(tf, devices: list[str], dtype) -> list[float]:
    """FLOP/s of each timing window with every device running its chain of matmuls."""
    operands = []
    for name in devices:
        with tf.device(name):
            a = tf.random.stateless_uniform((SIZE, SIZE), seed=(1, 2), dtype=tf.float32)
            # b scaled by 1/SIZE: each product keeps values near half the last, no overflow in 16 bits in CHAIN steps
            operands.append((tf.cast(a, dtype), tf.cast(tf.transpose(a) / SIZE, dtype)))

    @tf.function
    def chains():
        outputs = []
        for name, (a, b) in zip(devices, operands, strict=True):
            with tf.device(name):
                x = a
                for _ in range(CHAIN):
                    x = tf.linalg.matmul(x, b)
                outputs.append(tf.reduce_sum(tf.cast(x[:1, :1], tf.float32)))
        return tf.add_n(outputs)

    flops_per_call = 2 * SIZE**3 * CHAIN * len(devices)
    calls = 1
    for _ in range(3):  # warm-up; also finds how many calls fill a window
        start = time.perf_counter()
        for _ in range(calls):
            chains().numpy()  # the host sync: the value exists once every matmul has run
        elapsed = time.perf_counter() - start
        calls = max(1, calls, int(calls * WINDOW_S / max(elapsed, 1e-9)) + 1)
    rates = []
    for _ in range(WINDOWS):
        start = time.perf_counter()
        for _ in range(calls):
            chains().numpy()
        rates.append(flops_per_call * calls / (time.perf_counter() - start))
    return rates
