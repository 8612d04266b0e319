"""The report's figures from the committed quickstart records: one colour per strategy across every plot."""

from pathlib import Path

from tfscale.analysis import add_scaling, layout_comparison
from tfscale.htmlreport import figures
from tfscale.store.records import load_results

DATA = Path(__file__).resolve().parents[2] / "data"


def colour(trace) -> str:
    line = getattr(trace, "line", None)
    return line.color if line is not None and line.color else trace.marker.color


def test_each_strategy_has_one_colour_in_every_plot():
    frame = add_scaling(load_results(DATA / "quickstart-run"))
    built = [
        figures.throughput_figure(frame),
        figures.efficiency_figure(frame),
        figures.memory_figure(frame),
        figures.layout_figure(layout_comparison(frame)),
    ]
    seen: dict[str, set[str]] = {}
    for fig in built:
        for trace in (t for t in fig.data if t.name != figures.IDEAL):  # the ideal line: grey, not a strategy
            seen.setdefault(trace.name.split(" ")[0], set()).add(colour(trace))  # "multi_worker_mirrored 2 nodes"
    assert {name: colours for name, colours in seen.items()} == {name: {figures.FAMILY_COLORS[name]} for name in seen}
    assert set(seen) == {"one_device", "mirrored", "central_storage", "multi_worker_mirrored", "parameter_server"}
    assert len({figures.FAMILY_COLORS[name] for name in seen}) == 5  # and no two strategies share one


def test_the_throughput_plot_draws_linear_scaling_from_each_baseline():
    frame = add_scaling(load_results(DATA / "quickstart-run"))
    fig = figures.throughput_figure(frame)
    ideal = [t for t in fig.data if t.name == figures.IDEAL]
    assert len(ideal) == 3 and all(t.line.dash == "dot" for t in ideal)  # one per workload
    one = frame[(frame["strategy"] == "one_device") & (frame["model"] == "mlp")].iloc[0]
    mlp = next(t for t in ideal if round(t.y[0]) == round(one["throughput_examples_per_s"]))
    assert list(mlp.x) == [1, 2, 4] and [y / mlp.y[0] for y in mlp.y] == [1, 2, 4]


def test_device_ticks_are_the_counts_run_and_long_titles_wrap():
    import json
    import re

    from tfscale.htmlreport import TITLE_WIDTH, figure_html

    frame = add_scaling(load_results(DATA / "quickstart-run"))
    html = figure_html(figures.efficiency_figure(frame))
    layout = json.loads(re.search(r">(\{.*\})</script>", html).group(1).replace("<\\/", "</"))["layout"]
    assert layout["xaxis"]["tickvals"] == [1, 2, 4]  # not 1, 2, 3, 4
    lines = layout["title"]["text"].split("<br>")
    assert len(lines) == 2 and all(len(line) <= TITLE_WIDTH for line in lines)
