"""The history page's charts as plotly JSON: run ids as categories, a step's line at its first run's place."""

import pandas as pd

from tfscale.htmlreport.history import series_figure


def test_a_step_line_sits_at_its_first_run_on_a_category_axis():
    points = pd.DataFrame(
        {
            "run_id": ["20261201", "20261202", "20261203"],  # read as numbers, plotly would draw x = 20 million
            "value": [12222.123456, 12100.0, 9820.0],
            "low": [12000.0, None, 9700.0],
            "high": [12400.0, None, 9900.0],
        }
    )
    steps = pd.DataFrame({"first_run": ["20261203"], "worse": [True]})
    figure = series_figure(points, steps, "mlp · throughput")
    trace, layout = figure["data"][0], figure["layout"]
    assert layout["xaxis"] == {"type": "category"} and trace["x"] == ["20261201", "20261202", "20261203"]
    assert trace["y"] == [12222.1, 12100.0, 9820.0]  # six significant digits
    assert trace["error_y"]["array"] == [177.9, None, 80.0] and trace["error_y"]["arrayminus"] == [222.1, None, 120.0]
    (line,) = layout["shapes"]
    assert (line["x0"], line["x1"], line["line"]["color"]) == (2, 2, "#d62728")
