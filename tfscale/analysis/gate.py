"""What a CI system reads of `tfscale compare`: JUnit XML (one test case per config, shown natively by GitLab,
Jenkins, Azure Pipelines and GitHub test-report actions) and a short Markdown table for a pull-request comment.
Pure: the rows of `tfscale.analysis.compare.compare` and its `lost_configs` in, text out.

A test case fails exactly where `--fail-on-regression` would fail the gate: a significant regression beyond the
threshold, a config ok in BASE that failed or timed out in NEW, or one missing in NEW (skipped instead with
`--allow-missing`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pandas as pd

from tfscale import formatting
from tfscale.analysis.compare import LOST_MISSING, NO_VERDICT_NOTE, VERDICT_NONE, VERDICT_REGRESSION, Lost, p_text
from tfscale.untrusted import is_name, markdown_text, visible, xml_text

JUNIT_SUITE = "tfscale compare"


def shift_text(row, ci_label: str = "") -> str:
    """Hodges-Lehmann step-time shift relative to BASE, with its CI where there is one: '+10.2 % (+9.8 to +10.6)',
    or with `ci_label` '95 % CI ' before the CI: '+10.2 % (95 % CI +9.8 to +10.6)'."""
    text = formatting.change(row["shift_rel"])
    low, high = row["shift_ci95_low_rel"], row["shift_ci95_high_rel"]
    if not (formatting.given(low) and formatting.given(high)):
        return text
    return f"{text} {formatting.interval(f'{low * 100:+.1f}', f'{high * 100:+.1f}', ci_label)}"


def _change_ends(row) -> tuple[str, str] | None:
    """The ends of the throughput change's 95 % CI in percent ('-20.1', '-13.0'); None without a verdict."""
    low, high = row.get("throughput_change_ci95_low"), row.get("throughput_change_ci95_high")
    if not (formatting.given(low) and formatting.given(high)):
        return None
    return f"{low * 100:+.1f}", f"{high * 100:+.1f}"


def change_text(row) -> str:
    """The throughput change, with its 95 % CI where the config has a verdict: '-16.7 % (-20.1 to -13.0)'."""
    text, ends = formatting.change(row["throughput_change"]), _change_ends(row)
    return text if ends is None else f"{text} {formatting.interval(*ends)}"


def without_verdict(rows: pd.DataFrame) -> int:
    """How many compared configs have no verdict (too few processes per side)."""
    return 0 if rows.empty else int((rows["verdict"] == VERDICT_NONE).sum())


def lost_fails(config: Lost, allow_missing: bool) -> bool:
    """A config ok in BASE and not in NEW fails the gate, unless it is only missing and missing is allowed."""
    return config.status != LOST_MISSING or not allow_missing


def gate_fails(rows: pd.DataFrame, lost: list[Lost], allow_missing: bool) -> bool:
    """What `--fail-on-regression` exits 1 on, and the JUnit file marks failed: a significant regression beyond the
    threshold, or a lost config (lost_fails)."""
    regression = not rows.empty and bool(rows["regression"].any())
    return regression or any(lost_fails(config, allow_missing) for config in lost)


def summary_line(rows: pd.DataFrame, lost: list[Lost], threshold: float) -> str:
    """'17 configs compared, 1 significant regression(s) beyond 5 %, 0 newly failed, 0 missing in NEW', then
    ', 3 without a verdict' where some have none."""
    regressions = int(rows["regression"].sum()) if not rows.empty else 0
    missing = sum(1 for c in lost if c.status == LOST_MISSING)
    unjudged = without_verdict(rows)
    return (
        f"{len(rows)} configs compared, {regressions} significant regression(s) beyond {threshold * 100:g} %, "
        f"{len(lost) - missing} newly failed, {missing} missing in NEW"
        + (f", {unjudged} without a verdict" if unjudged else "")
    )


def _figures(row) -> str:
    """One config's comparison in one line: verdict, throughput change with its CI, step shift with CI, p and q,
    and why there is no verdict where there is none."""
    shift = shift_text(row, ci_label="95 % CI ")
    why = row.get("no_verdict")
    ends = _change_ends(row)
    ci = "" if ends is None else f"95 % CI {ends[0]} to {ends[1]}; "
    return (
        f"{row['verdict']}: throughput {formatting.change(row['throughput_change'])} "
        f"({ci}{formatting.rate(row['base_throughput'])} -> {formatting.rate(row['new_throughput'])} examples/s), "
        f"step time shift {shift}, p {p_text(row['p_value'])}, q {p_text(row['q_value'])}, "
        f"tested on {row['tested_on']}" + (f"; no verdict: {why}" if formatting.given(why) else "")
    )


def _line(text: str) -> str:
    """Record text as one line of XML 1.0 (a test case's name, an attribute)."""
    return xml_text(visible(text))


def _name(config_id: str, model: str, mode: str, layout: str) -> str:
    return _line(f"{config_id} {model} {mode} {layout}")


def junit_xml(rows: pd.DataFrame, lost: list[Lost], threshold: float, base: str, new: str, allow_missing=False) -> str:
    """The comparison as JUnit XML: one <testcase> per compared or lost config, in the rows' order then BASE's."""
    suite = ET.Element("testsuite", name=JUNIT_SUITE)
    properties = ET.SubElement(suite, "properties")
    for key, value in (("base", base), ("new", new), ("threshold", f"{threshold:g}")):
        ET.SubElement(properties, "property", name=key, value=_line(value))
    failures = skipped = 0
    for _, row in rows.iterrows():
        case = ET.SubElement(
            suite,
            "testcase",
            classname=JUNIT_SUITE,
            name=_name(row["config_id"], row["model"], row["mode"], row["layout"]),
        )
        if row["regression"]:
            failures += 1
            message = _line(f"{_figures(row)}; beyond the {threshold * 100:g} % threshold")
            ET.SubElement(case, "failure", message=message, type=VERDICT_REGRESSION).text = message
        elif row["verdict"] == VERDICT_NONE:
            skipped += 1
            ET.SubElement(case, "skipped", message=_line(_figures(row)))
        else:
            ET.SubElement(case, "system-out").text = _line(_figures(row))
    for config in lost:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=JUNIT_SUITE,
            name=_name(config.config_id, config.model, config.mode, config.layout),
        )
        line = _line(config.line())
        if not lost_fails(config, allow_missing):
            skipped += 1
            ET.SubElement(case, "skipped", message=f"{line} (--allow-missing)")
        else:
            failures += 1
            ET.SubElement(case, "failure", message=line, type=_line(config.status)).text = line
    suite.set("tests", str(len(rows) + len(lost)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    root = ET.Element("testsuites", name=JUNIT_SUITE, tests=suite.get("tests"), failures=str(failures), errors="0")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _cell(text) -> str:
    """Text from the records as one line of plain Markdown (untrusted.markdown_text)."""
    return markdown_text(str(text))


def _code(config_id: str) -> str:
    """A config id as code where it is a name (a code span cannot escape a backtick), else as plain text."""
    return f"`{config_id}`" if is_name(config_id) else _cell(config_id)


def markdown_table(rows: pd.DataFrame, lost: list[Lost], threshold: float, warnings=()) -> str:
    """A pull-request comment: the summary line, what fails the gate first (regressions, newly failed, missing),
    then every compared config in a collapsed table."""
    header = "| verdict | config | model | mode | layout | throughput (95 % CI) | step shift (95 % CI) | q |\n"
    header += "|---" * 8 + "|"

    def line(row) -> str:
        verdict = _cell(row["verdict"])
        cells = (
            f"**{verdict}**" if row["regression"] else verdict,
            _code(str(row["config_id"])),
            _cell(row["model"]),
            _cell(row["mode"]),
            _cell(row["layout"]),
            change_text(row),  # tfscale's own figures: no record text in them
            shift_text(row),
            p_text(row["q_value"]),
        )
        return "| " + " | ".join(cells) + " |"

    out = [f"**tfscale compare**: {summary_line(rows, lost, threshold)}.", ""]
    out += [*(f"- warning: {_cell(line)}" for line in warnings), ""] if warnings else []
    regressions = rows[rows["regression"]] if not rows.empty else rows
    if len(regressions):
        out += [header, *(line(r) for _, r in regressions.iterrows()), ""]
    out += [f"- {_cell(config.line())}" for config in lost]
    if lost:
        out.append("")
    if not rows.empty:
        out += [f"<details><summary>All {len(rows)} compared configs</summary>", "", header]
        out += [line(r) for _, r in rows.iterrows()]
        out += ["", "</details>", ""]
    if without_verdict(rows):
        out += [f"- {without_verdict(rows)} config(s) {NO_VERDICT_NOTE}.", ""]
    out.append(
        "Verdict: the 95 % CI of the throughput change from the process medians (Hodges-Lehmann), a regression "
        "where it lies wholly beyond the threshold; q: Mann-Whitney U, Benjamini-Hochberg, for reading."
    )
    return "\n".join(out) + "\n"
