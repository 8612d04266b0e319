"""JUnit XML and Markdown outputs of compare, on hand-made rows: exact values, and the XML read back."""

import xml.etree.ElementTree as ET

import pandas as pd

from tfscale.analysis.compare import LOST_MISSING, Lost, _verdicts
from tfscale.analysis.gate import junit_xml, markdown_table, shift_text, summary_line


def rows():
    frame = pd.DataFrame(
        [
            {
                "config_id": "aaa111",
                "model": "mlp tiny",
                "mode": "mirrored",
                "layout": "1x2",
                "base_throughput": 1000.0,
                "new_throughput": 800.0,
                "throughput_change": -0.2,
                "throughput_change_ci95_low": -0.24,
                "throughput_change_ci95_high": -0.16,
                "no_verdict": None,
                "shift_rel": 0.25,
                "shift_ci95_low_rel": 0.2,
                "shift_ci95_high_rel": 0.3,
                "tested_on": "process medians",
                "p_value": 0.0001,
            },
            {
                "config_id": "bbb222",
                "model": "cnn | odd",
                "mode": "one device",
                "layout": "1x1",
                "base_throughput": 500.0,
                "new_throughput": 501.0,
                "throughput_change": 0.002,
                "throughput_change_ci95_low": None,
                "throughput_change_ci95_high": None,
                "no_verdict": "1 and 1 process(es): a verdict needs 5 or more on each side (repeats: 5 in both runs)",
                "shift_rel": -0.002,
                "shift_ci95_low_rel": None,
                "shift_ci95_high_rel": None,
                "tested_on": "windows of one process per side",
                "p_value": 0.6,
            },
        ]
    )
    return _verdicts(frame, 0.05)


LOST = [
    Lost("ccc333", "mlp tiny", "ps", "2x1", "failed", "out of memory: OOM"),
    Lost("ddd444", "mlp tiny", "mwms", "2x1", LOST_MISSING, None),
]


def test_shift_and_summary_text():
    frame = rows()
    assert [shift_text(r) for _, r in frame.iterrows()] == ["+25.0 % (+20.0 to +30.0)", "-0.2 %"]
    assert summary_line(frame, LOST, 0.05) == (
        "2 configs compared, 1 significant regression(s) beyond 5 %, 1 newly failed, 1 missing in NEW, "
        "1 without a verdict"
    )
    assert [r["verdict"] for _, r in frame.iterrows()] == ["REGRESSION", "no verdict"]


def test_junit_read_back():
    root = ET.fromstring(junit_xml(rows(), LOST, 0.05, "runs/base", "runs/new"))
    suite = root.find("testsuite")
    assert root.tag == "testsuites" and root.get("tests") == "4" and root.get("failures") == "3"
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped"), suite.get("errors")) == (
        "4",
        "3",
        "1",
        "0",
    )
    assert {p.get("name"): p.get("value") for p in suite.find("properties")} == {
        "base": "runs/base",
        "new": "runs/new",
        "threshold": "0.05",
    }
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [
        "aaa111 mlp tiny mirrored 1x2",
        "bbb222 cnn | odd one device 1x1",
        "ccc333 mlp tiny ps 2x1",
        "ddd444 mlp tiny mwms 2x1",
    ]
    failure = cases[0].find("failure")
    assert failure.get("type") == "REGRESSION"
    assert failure.get("message") == (
        "REGRESSION: throughput -20.0 % (95 % CI -24.0 to -16.0; 1,000 -> 800 examples/s), step time shift +25.0 % "
        "(95 % CI +20.0 to +30.0), p <0.001, q <0.001, tested on process medians; beyond the 5 % threshold"
    )
    assert cases[1].find("failure") is None
    assert cases[1].find("skipped").get("message") == (
        "no verdict: throughput +0.2 % (500 -> 501 examples/s), step time shift -0.2 %, p 0.600, q 0.600, "
        "tested on windows of one process per side; no verdict: 1 and 1 process(es): a verdict needs 5 or more on "
        "each side (repeats: 5 in both runs)"
    )
    assert cases[2].find("failure").get("message") == "NEWLY FAILED: ccc333 mlp tiny ps 2x1: out of memory: OOM"
    assert cases[3].find("failure").get("message") == "MISSING in NEW: ddd444 mlp tiny mwms 2x1"


def test_junit_with_allow_missing_skips_the_missing_config():
    suite = ET.fromstring(junit_xml(rows(), LOST, 0.05, "b", "n", allow_missing=True)).find("testsuite")
    assert (suite.get("failures"), suite.get("skipped")) == ("2", "2")
    assert suite.findall("testcase")[3].find("skipped").get("message").endswith("(--allow-missing)")


def test_markdown_table():
    text = markdown_table(rows(), LOST, 0.05)
    lines = text.splitlines()
    assert lines[0] == (
        "**tfscale compare**: 2 configs compared, 1 significant regression(s) beyond 5 %, 1 newly failed, "
        "1 missing in NEW, 1 without a verdict."
    )
    regression = (
        "| **REGRESSION** | `aaa111` | mlp tiny | mirrored | 1x2 | -20.0 % (-24.0 to -16.0) | +25.0 % (+20.0 to +30.0) "
        "| <0.001 |"
    )
    assert lines[2:5] == [
        "| verdict | config | model | mode | layout | throughput (95 % CI) | step shift (95 % CI) | q |",
        "|---|---|---|---|---|---|---|---|",
        regression,
    ]
    assert "- NEWLY FAILED: ccc333 mlp tiny ps 2x1: out of memory: OOM" in lines
    assert "| no verdict | `bbb222` | cnn \\| odd | one device | 1x1 | +0.2 % | -0.2 % | 0.600 |" in lines
    assert "- 1 config(s) without a verdict: a verdict needs 5 or more fresh processes per side, because the" in text
    assert lines.count(regression) == 2  # first among what fails the gate, then in the full table
    assert "<details><summary>All 2 compared configs</summary>" in lines


def test_markdown_when_nothing_changed():
    frame = rows().iloc[1:].reset_index(drop=True)
    text = markdown_table(frame, [], 0.05)
    assert text.splitlines()[:2] == [
        "**tfscale compare**: 1 configs compared, 0 significant regression(s) beyond 5 %, 0 newly failed, "
        "0 missing in NEW, 1 without a verdict.",
        "",
    ]
    assert text.splitlines()[2] == "<details><summary>All 1 compared configs</summary>"
