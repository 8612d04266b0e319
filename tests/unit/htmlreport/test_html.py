"""Pure pieces of the report's HTML: packing, long tables, warnings."""

import base64
import gzip
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from tfscale.htmlreport import INLINE_ROWS, MAX_WARNINGS, pack, records_table, warnings_html


def unpack(text: str):
    return json.loads(gzip.decompress(base64.b64decode(text)))


def test_pack_round_trips():
    assert unpack(pack({"a": [1, "x", None]})) == {"a": [1, "x", None]}


def test_long_tables_are_packed_with_text_sort_keys_and_failed_flags():
    frame = pd.DataFrame(
        {
            "config_id": [f"c{i}" for i in range(INLINE_ROWS + 1)],
            "status": ["ok"] * INLINE_ROWS + ["failed"],
            "step_time_median_s": [0.5] * (INLINE_ROWS + 1),
        }
    )
    short = records_table(frame.head(INLINE_ROWS), ("config_id", "status", "step_time_median_s"))
    assert short.count("<tr") == INLINE_ROWS + 1 and "table-data" not in short
    packed = records_table(frame, ("config_id", "status", "step_time_median_s", "absent"))
    [data] = re.findall(r'class="table-data" data-for="[^"]+">([^<]+)</script>', packed)
    table = unpack(data)
    assert table["columns"] == ["config_id", "status", "step_time_median_s", "absent"]
    # shown with its unit, sorted by the value
    assert table["rows"][0] == {"text": ["c0", "ok", "500 ms", ""], "key": ["c0", "ok", "0.5", ""], "bad": False}
    assert table["rows"][-1]["bad"] is True and len(table["rows"]) == INLINE_ROWS + 1


def test_warnings_are_counted_once_and_capped():
    assert warnings_html([]) == "<p>None.</p>"
    text = warnings_html(["a", "b", "a"])
    assert text == '<ul><li class="">a (in 2 records)</li><li class="">b</li></ul>'
    many = warnings_html([f"w{i}" for i in range(MAX_WARNINGS + 3)])
    assert many.count("<li") == MAX_WARNINGS + 1 and "... and 3 more" in many


def test_mfu_figure_only_where_mfu_was_measured():
    from tfscale import metrics as m
    from tfscale.analysis import add_scaling
    from tfscale.htmlreport.figures import MFU_TITLE, mfu_figure
    from tfscale.store.records import load_results

    frame = add_scaling(load_results(Path(__file__).resolve().parents[2] / "data" / "quickstart-run"))
    assert mfu_figure(frame) is None  # records from before the FLOPs columns: no MFU plot, not one of zeros
    frame[m.FLOPS_PER_STEP] = 1e9 * frame[m.GLOBAL_BATCH_SIZE]  # 1 GFLOP per example
    frame[m.PEAK_FLOPS_PER_S] = 200e9 / frame[m.DEVICES]
    figure = mfu_figure(add_scaling(frame))
    assert figure.layout.title.text.startswith(MFU_TITLE) and figure.layout.yaxis.tickformat == ".0%"
    mirrored = [t for t in figure.data if t.name == "mirrored" and "mlp" in t.hovertemplate]
    ok = frame[(frame[m.STATUS] == "ok") & (frame[m.STRATEGY] == "mirrored") & (frame[m.MODEL] == "mlp")]
    expected = sorted(ok[m.THROUGHPUT_EXAMPLES_PER_S] * 1e9 / 200e9)  # examples/s x FLOPs / (N x peak / N)
    assert sorted(v for t in mirrored for v in t.y) == pytest.approx(expected)
