"""One way to write a figure, for the terminal and the report (tfscale.formatting): exact strings."""

import math

from tfscale import formatting as f


def test_digits_follow_the_ci():
    assert [f.decimals_for(x) for x in (0.041, 1.7, 230.0, 0.0)] == [3, 1, 0, 0]
    assert f.with_ci(2.6153, 2.5741, 2.6571) == "2.615 (2.574 to 2.657)"
    assert f.with_ci(87.34, 81.9, 91.2) == "87.3 (81.9 to 91.2)"
    assert f.with_ci(1234.5, 1100, 1400) == "1,234 (1,100 to 1,400)"
    assert f.with_ci(5.0, 5.0, 5.0) == "5 (5 to 5)"  # a point interval: no digits to support


def test_units():
    assert f.ms(0.0026153) == "2.62 ms" and f.ms(12.345) == "12,345 ms"
    assert f.ms(0.0026153, 0.0025741, 0.0026571) == "2.615 ms (2.574 to 2.657)"
    assert (f.rate(24470.3), f.rate(312.46), f.rate(4.567)) == ("24,470", "312", "4.57")
    assert (f.size(100), f.size(512 * 1024), f.size(703971328), f.size(1.25 * 2**30)) == (
        "100 B",
        "512.0 KiB",
        "671.4 MiB",
        "1.25 GiB",
    )
    assert f.percent(0.873) == "87 %" and f.percent(0.8734, 0.819, 0.912) == "87.3 % (81.9 to 91.2)"
    assert (f.change(-0.167), f.change(0.002)) == ("-16.7 %", "+0.2 %")
    assert (f.significant(0.000123), f.significant(1234.5)) == ("0.000123", "1,234")


def test_missing_is_empty_never_zero():
    for write in (f.ms, f.rate, f.size, f.percent, f.change):
        assert write(None) == "" and write(math.nan) == ""


def test_table_cells_by_column():
    cases = [
        ("step_time_median_s", 0.002615, "2.62 ms"),
        ("throughput_examples_per_s", 24470.2, "24,470"),
        ("peak_memory_bytes", 703971328, "671.4 MiB"),
        ("busbw_bytes_per_s", 1.2e9, "1.12 GiB/s"),
        ("net_bytes_per_s", 12345.0, "12.1 KiB/s"),
        ("scaling_efficiency", 0.873, "87.3 %"),
        ("ci_half_width_rel", 0.0213, "2.1 %"),
        ("speedup", 1.448, "1.45x"),
        ("params", 123456, "123,456"),
        ("rank_throughput_examples_per_s", [100.5, 2000.2], "100, 2,000"),
        ("gpu_power_mean_w", 245.33, "245.3"),
        ("model", "mlp", "mlp"),
        ("step_time_median_s", None, ""),
        ("straggler", True, "True"),
    ]
    assert [f.cell(column, value) for column, value, _ in cases] == [text for *_, text in cases]
