import pytest

from tfscale.measures.comm import (
    AlphaBeta,
    algbw,
    bus_factor,
    busbw,
    comm_figures,
    fit_alpha_beta,
    overlap,
    sweep_sizes,
    union_length,
)


def test_nccl_tests_bandwidth_definitions():
    assert bus_factor(2) == 1.0
    assert bus_factor(4) == 1.5
    assert algbw(8_000_000, 0.5) == 16_000_000
    assert busbw(8_000_000, 0.5, 4) == 24_000_000


def test_overlap_is_clamped_and_the_raw_value_kept():
    assert overlap(fused_s=0.10, compute_s=0.06, split_s=0.04) == (0.0, 0.0)  # fully exposed
    assert overlap(fused_s=0.06, compute_s=0.06, split_s=0.04) == pytest.approx((1.0, 1.0))  # fully hidden
    assert overlap(fused_s=0.08, compute_s=0.06, split_s=0.04) == pytest.approx((0.5, 0.5))
    assert overlap(fused_s=0.12, compute_s=0.06, split_s=0.04) == pytest.approx((0.0, -0.5))


def test_comm_figures():
    figures = comm_figures(
        fused_s=0.05, compute_s=0.03, split_s=0.025, isolated_s=0.02, grad_bytes=4_000_000, replicas=4
    )
    assert figures["compute_time_s"] == 0.03
    assert figures["comm_time_exposed_s"] == pytest.approx(0.02)
    assert figures["comm_time_split_s"] == 0.025
    assert figures["comm_time_isolated_s"] == 0.02
    assert figures["overlap_fraction"] == pytest.approx(0.2)
    assert figures["overlap_fraction_raw"] == pytest.approx(0.2)
    assert figures["overlap_out_of_range"] is False
    assert figures["algbw_bytes_per_s"] == pytest.approx(200_000_000)
    assert figures["busbw_bytes_per_s"] == pytest.approx(300_000_000)


def test_alpha_beta_fit_recovers_known_parameters_exactly():
    truth = AlphaBeta(alpha_s=50e-6, beta_s_per_byte=1 / 5e9, replicas=4)
    sizes = sweep_sizes(1 << 10, 1 << 20)
    fitted = fit_alpha_beta(sizes, [truth.predict(s) for s in sizes], replicas=4)
    assert fitted.alpha_s == pytest.approx(50e-6, rel=1e-9)
    assert fitted.beta_s_per_byte == pytest.approx(1 / 5e9, rel=1e-9)
    assert fitted.predict(4_000_000) == pytest.approx(50e-6 + 4_000_000 * 1.5 / 5e9)


def test_alpha_beta_needs_two_distinct_sizes():
    with pytest.raises(ValueError):
        fit_alpha_beta([1024], [0.1], replicas=2)
    with pytest.raises(ValueError):
        fit_alpha_beta([1024, 1024], [0.1, 0.2], replicas=2)


def test_sweep_sizes_are_powers_of_two_from_1_kib_to_64_mib():
    sizes = sweep_sizes()
    assert (sizes[0], sizes[-1], len(sizes)) == (1024, 64 * 1024 * 1024, 17)
    assert all(b == 2 * a for a, b in zip(sizes, sizes[1:], strict=False))


def test_union_length_counts_overlaps_once():
    assert union_length([]) == 0.0
    assert union_length([(0, 2), (1, 3), (5, 6)]) == 4
    assert union_length([(5, 6), (0, 10)]) == 10
    assert union_length([(0, 1), (1, 2)]) == 2
