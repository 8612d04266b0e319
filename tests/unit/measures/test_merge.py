import pytest

from tfscale.measures.merge import counts_from_positions, merge_rank_parts, parameter_server_ranks, stragglers


def part(samples, median, replicas=2, peak=100, rss=200, first=1.0, cpus="0-3", gpus=(), device="process"):
    return {
        "rank_cpu_affinity": [cpus],
        "rank_gpu_uuids": [list(gpus)],
        "peak_memory_device": device,
        "step_times_s": samples,
        "step_time_median_s": median,
        "replicas": replicas,
        "peak_memory_bytes": peak,
        "host_rss_peak_bytes": rss,
        "first_step_s": first,
        "params": 10,
        "timing": "t",
        "ci_target": 0.02,
    }


def test_stragglers_are_more_than_ten_percent_above_the_median_of_ranks():
    assert stragglers([1.0, 1.0, 1.1]) == []
    assert stragglers([1.0, 1.0, 1.11]) == [2]
    assert stragglers([2.0, 1.0, 1.0, 1.0]) == [0]


def test_merge_takes_the_slowest_rank_per_sample_and_sums_rank_throughput():
    parts = [
        part([0.10, 0.20, 0.10, 0.10, 0.10, 0.10], 0.10, peak=100, rss=300, first=2.0, gpus=["GPU-a"]),
        part(
            [0.12, 0.10, 0.12, 0.12, 0.12, 0.30],
            0.13,
            peak=150,
            rss=250,
            first=1.5,
            cpus="4-7",
            gpus=["GPU-b"],
            device="GPU:0",
        ),
    ]
    merged = merge_rank_parts(parts, global_batch=64)
    assert merged["step_times_s"] == [0.12, 0.20, 0.12, 0.12, 0.12, 0.30]
    assert merged["step_time_median_s"] == pytest.approx(0.12)
    # median_ci: signs 1/2, 0, 1/2, 1/2, 1/2, 0 in batches (edges 0, 2, 3, 4, 6): s2 = 1 / 36, below the floor
    # 4 / 72; h = t_975(3) sqrt(6 x 4 / 72) ranks either side of 3.5: the high end between x_(5) 0.20 and x_(6) 0.30
    high = 0.20 + (3.5 + 3.182446 * (1 / 3) ** 0.5 - 5) * 0.10
    assert merged["step_time_ci95_low_s"] == 0.12 and merged["step_time_ci95_high_s"] == pytest.approx(high)
    # precision of the merged samples: the CI's high end around 0.12 is +95 %
    assert merged["ci_half_width_rel"] == pytest.approx(high / 0.12 - 1)
    assert (merged["ci_met"], merged["samples"]) == (False, 6)
    assert merged["rank_throughput_examples_per_s"] == pytest.approx([320.0, 32 / 0.13])
    assert merged["throughput_examples_per_s"] == pytest.approx(320.0 + 32 / 0.13)
    assert merged["throughput_per_replica_examples_per_s"] == pytest.approx((320.0 + 32 / 0.13) / 2)
    assert merged["rank_step_time_median_s"] == [0.10, 0.13]
    assert merged["rank_peak_memory_bytes"] == [100, 150]
    assert merged["peak_memory_device"] == "GPU:0"  # the device of the largest peak, rank 1's
    assert (merged["rank_cpu_affinity"], merged["rank_gpu_uuids"]) == (["0-3", "4-7"], [["GPU-a"], ["GPU-b"]])
    assert (merged["peak_memory_bytes"], merged["host_rss_peak_bytes"], merged["first_step_s"]) == (150, 300, 2.0)
    assert (merged["straggler"], merged["straggler_ranks"]) == (True, [1])  # 0.13 > 1.1 x 0.115
    assert merged["params"] == 10
    assert merged["timing"] == "t; merged over 2 ranks: each sample is the slowest rank's"


def test_a_single_part_is_kept_as_it_is():
    only = part([0.1] * 6, 0.1)
    assert merge_rank_parts([only], global_batch=32) == only


def test_parts_with_different_sample_counts_are_an_error():
    with pytest.raises(ValueError):
        merge_rank_parts([part([0.1] * 6, 0.1), part([0.1] * 5, 0.1)], global_batch=32)


def test_counts_from_positions_recovers_each_worker_total():
    # worker A completed 4 steps (positions 0-3), worker B 2 (0-1), worker C 3 (0-2), interleaved
    positions = [0, 0, 1, 0, 1, 2, 1, 3, 2]
    assert counts_from_positions(positions, workers=3) == [4, 3, 2]
    assert counts_from_positions([0, 1, 2], workers=2) == [3, 0]  # one worker did everything


def test_parameter_server_ranks():
    ranks = parameter_server_ranks([12, 10, 6], per_worker_batch=16, timed_s=2.0)
    assert ranks["rank_throughput_examples_per_s"] == [96.0, 80.0, 48.0]
    assert ranks["throughput_examples_per_s"] == 224.0
    assert (ranks["straggler"], ranks["straggler_ranks"]) == (True, [2])  # 2/6 s per step vs median 2/10


def test_communication_figures_take_the_slowest_rank_and_the_merged_step():
    parts = [part([0.10] * 6, 0.10), part([0.12] * 6, 0.12)]
    for p, (compute, split, isolated) in zip(parts, ((0.05, 0.04, 0.03), (0.06, 0.03, 0.035)), strict=True):
        p.update(
            {
                "compute_time_s": compute,
                "comm_time_split_s": split,
                "comm_time_isolated_s": isolated,
                "grad_bytes": 1_000_000,
                "comm_method": "m",
            }
        )
    merged = merge_rank_parts(parts, global_batch=64)
    assert merged["compute_time_s"] == 0.06
    assert merged["comm_time_exposed_s"] == pytest.approx(0.12 - 0.06)
    assert (merged["comm_time_split_s"], merged["comm_time_isolated_s"]) == (0.04, 0.035)
    assert merged["overlap_fraction_raw"] == pytest.approx((0.06 + 0.04 - 0.12) / 0.04)
    assert merged["overlap_fraction"] == 0.0 and merged["overlap_out_of_range"] is True
    assert merged["busbw_bytes_per_s"] == pytest.approx(1_000_000 / 0.035)
    assert merged["comm_method"] == "m; merged: the slowest rank's median of each"
