"""Merge the result parts of a multi-process config's training ranks into one record's measurements. Pure.

MultiWorkerMirrored ranks run the same synchronous steps, so their timing windows line up: sample i of the config
is the slowest rank's sample i (a synchronous step is done when its last rank is). Global throughput is the SUM of
the ranks' own throughputs (each rank's examples per step / its own median step time), not rank 0 x K.
"""

from __future__ import annotations

from typing import Any

from tfscale import metrics as m
from tfscale.measures.comm import comm_figures
from tfscale.stats.core import StepStats, median
from tfscale.stats.precision import Precision

STRAGGLER_THRESHOLD = 1.10  # a rank whose median step is > 10 % above the median of the ranks' medians


def stragglers(rank_medians: list[float], threshold: float = STRAGGLER_THRESHOLD) -> list[int]:
    """Indices of ranks whose median step time exceeds threshold x the median of all ranks' medians."""
    typical = median(rank_medians)
    return [i for i, t in enumerate(rank_medians) if t > threshold * typical]


def step_stats_columns(stats: StepStats) -> dict[str, Any]:
    return {
        m.STEP_TIME_MEDIAN_S: stats.median,
        m.STEP_TIME_MEAN_S: stats.mean,
        m.STEP_TIME_P10_S: stats.p10,
        m.STEP_TIME_P90_S: stats.p90,
        m.STEP_TIME_MAD_S: stats.mad,
        m.STEP_TIME_CI95_LOW_S: stats.ci95_low,
        m.STEP_TIME_CI95_HIGH_S: stats.ci95_high,
    }


def precision_columns(samples: list[float], target_ci: float) -> dict[str, Any]:
    """The record's precision columns for these per-step samples (tfscale.stats.precision.Precision)."""
    return Precision.of(samples, target_ci).columns()


def merge_rank_parts(parts: list[dict[str, Any]], global_batch: int) -> dict[str, Any]:
    """One config's measurements from the parts of its training ranks (in rank order)."""
    if len(parts) == 1:
        return dict(parts[0])
    ranks = len(parts)
    samples = [max(values) for values in zip(*(p[m.STEP_TIMES_S] for p in parts), strict=True)]
    rank_medians = [p[m.STEP_TIME_MEDIAN_S] for p in parts]
    rank_throughput = [global_batch / ranks / t for t in rank_medians]
    slow = stragglers(rank_medians)
    merged = dict(parts[0])  # model facts (params, grad_bytes, timing method) are the same on every rank
    merged.update(step_stats_columns(StepStats.from_samples(samples)))
    merged.update(precision_columns(samples, parts[0][m.CI_TARGET]))
    merged.update(
        {
            m.STEP_TIMES_S: samples,
            m.FIRST_STEP_S: max(p[m.FIRST_STEP_S] for p in parts),
            m.THROUGHPUT_EXAMPLES_PER_S: sum(rank_throughput),
            m.THROUGHPUT_PER_REPLICA_EXAMPLES_PER_S: sum(rank_throughput) / parts[0][m.REPLICAS],
            m.PEAK_MEMORY_BYTES: max(p[m.PEAK_MEMORY_BYTES] for p in parts),
            m.HOST_RSS_PEAK_BYTES: max(p[m.HOST_RSS_PEAK_BYTES] for p in parts),
            m.RANK_THROUGHPUT_EXAMPLES_PER_S: rank_throughput,
            m.RANK_STEP_TIME_MEDIAN_S: rank_medians,
            m.RANK_PEAK_MEMORY_BYTES: [p[m.PEAK_MEMORY_BYTES] for p in parts],
            m.RANK_CPU_AFFINITY: [a for p in parts for a in p.get(m.RANK_CPU_AFFINITY, [])],
            m.RANK_GPU_UUIDS: [u for p in parts for u in p.get(m.RANK_GPU_UUIDS, [])],
            m.PEAK_MEMORY_DEVICE: max(parts, key=lambda p: p[m.PEAK_MEMORY_BYTES]).get(m.PEAK_MEMORY_DEVICE),
            m.STRAGGLER: bool(slow),
            m.STRAGGLER_RANKS: slow,
            m.TIMING: parts[0][m.TIMING] + f"; merged over {ranks} ranks: each sample is the slowest rank's",
        }
    )
    energies = [p.get(m.ENERGY_J) for p in parts]
    if all(e is not None for e in energies):  # each rank read its own GPUs' counters: the config's is the sum
        merged[m.ENERGY_J] = sum(energies)
        merged[m.ENERGY_WINDOW_S] = max(p[m.ENERGY_WINDOW_S] for p in parts)
        merged[m.ENERGY_METHOD] = parts[0][m.ENERGY_METHOD] + f"; summed over {ranks} ranks"
    if parts[0].get(m.DATA_GENERATION_S) is not None:  # one rank wrote the files, the others found them
        merged[m.DATA_GENERATION_S] = max(p[m.DATA_GENERATION_S] for p in parts)
    if parts[0].get(m.INPUT_MEMORY_TIMES_S) is not None:  # every rank timed its own pipeline: the config's figures
        merged.update(_merged_input(parts, samples, merged[m.THROUGHPUT_EXAMPLES_PER_S]))
    if parts[0].get(m.COMPUTE_TIME_S) is not None:  # every rank timed its communication: the slowest counts
        merged.update(
            comm_figures(
                fused_s=merged[m.STEP_TIME_MEDIAN_S],
                compute_s=max(p[m.COMPUTE_TIME_S] for p in parts),
                split_s=max(p[m.COMM_TIME_SPLIT_S] for p in parts),
                isolated_s=max(p[m.COMM_TIME_ISOLATED_S] for p in parts),
                grad_bytes=parts[0][m.GRAD_BYTES],
                replicas=parts[0][m.REPLICAS],
            )
        )
        merged.update(_merged_intervals(parts, samples))
        merged[m.COMM_METHOD] = parts[0][m.COMM_METHOD] + "; merged: the slowest rank's median of each"
    return merged


def _merged_input(parts: list[dict[str, Any]], samples: list[float], throughput: float) -> dict[str, Any]:
    """Input figures of a synchronous cluster: the in-memory step's windows merged as the step's are (slowest rank
    per window), the wait from both merged sets; the input-only throughputs summed (each rank drained its own
    files), the headroom over the config's throughput."""
    from tfscale.measures.inputs import input_columns

    memory = [max(values) for values in zip(*(p[m.INPUT_MEMORY_TIMES_S] for p in parts), strict=True)]
    rates = [p.get(m.INPUT_THROUGHPUT_EXAMPLES_PER_S) for p in parts]
    total = sum(rates) if all(r is not None for r in rates) else None
    found = input_columns(samples, memory, total, throughput, parts[0][m.WINDOW_STEPS])
    found[m.INPUT_WAIT_METHOD] += f"; merged over {len(parts)} ranks: each window the slowest rank's"
    return found


def _merged_intervals(parts: list[dict[str, Any]], fused_samples: list[float]) -> dict[str, Any]:
    """The CI columns that go with the slowest ranks' communication figures: exposed from the merged fused samples
    and the slowest compute rank's samples; overlap and busbw as the slowest compute / isolated rank measured."""
    from tfscale.stats.uncertainty import difference_of_medians

    compute = max(parts, key=lambda p: p[m.COMPUTE_TIME_S])
    isolated = max(parts, key=lambda p: p[m.COMM_TIME_ISOLATED_S])
    exposed = difference_of_medians(fused_samples, compute.get(m.COMPUTE_TIMES_S) or [])
    return {
        m.COMPUTE_TIMES_S: compute.get(m.COMPUTE_TIMES_S),
        m.COMM_TIME_EXPOSED_CI95_LOW_S: None if exposed is None else exposed.low,
        m.COMM_TIME_EXPOSED_CI95_HIGH_S: None if exposed is None else exposed.high,
        m.OVERLAP_FRACTION_CI95_LOW: compute.get(m.OVERLAP_FRACTION_CI95_LOW),
        m.OVERLAP_FRACTION_CI95_HIGH: compute.get(m.OVERLAP_FRACTION_CI95_HIGH),
        m.BUSBW_CI95_LOW_BYTES_PER_S: isolated.get(m.BUSBW_CI95_LOW_BYTES_PER_S),
        m.BUSBW_CI95_HIGH_BYTES_PER_S: isolated.get(m.BUSBW_CI95_HIGH_BYTES_PER_S),
    }


def counts_from_positions(positions: list[int], workers: int) -> list[int]:
    """Steps each worker completed, largest first, from the iterator positions the steps reported.

    Under ParameterServer every worker reads its own iterator, fresh at the start of the timed windows, so the
    positions a worker reports are 0, 1, ..., its count - 1. Position n therefore appears once per worker that
    completed more than n steps, and the k-th largest count is the number of positions seen at least k times.
    Which worker had which count is not known (the coordinator does not say), hence the sorted order.
    """
    seen: dict[int, int] = {}
    for position in positions:
        seen[position] = seen.get(position, 0) + 1
    return [sum(1 for c in seen.values() if c >= k) for k in range(1, workers + 1)]


def parameter_server_ranks(counts: list[int], per_worker_batch: int, timed_s: float) -> dict[str, Any]:
    """Per-worker figures of a ParameterServer config from its workers' completed steps over `timed_s` seconds.

    Throughput is what the workers completed: sum of counts x per-worker batch / timed seconds.
    """
    rank_throughput = [c * per_worker_batch / timed_s for c in counts]
    implied_step_s = [timed_s / c if c else float("inf") for c in counts]
    slow = stragglers(implied_step_s)
    return {
        m.RANK_THROUGHPUT_EXAMPLES_PER_S: rank_throughput,
        m.THROUGHPUT_EXAMPLES_PER_S: sum(rank_throughput),
        m.STRAGGLER: bool(slow),
        m.STRAGGLER_RANKS: slow,
    }
