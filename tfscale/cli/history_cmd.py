"""`tfscale history RESULTS_DIR/<suite>`: every run of a suite on each machine as a series, with the steps found."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="HTML page to write (default: none).")
@click.option("--fail-on-change", is_flag=True, help="Exit 1 when the newest runs start a step for the worse.")
@click.option("--markdown", type=click.Path(dir_okay=False), help="Write the steps as a Markdown table to FILE.")
@click.option(
    "--junit",
    type=click.Path(dir_okay=False),
    help="Write JUnit XML to FILE: one test case per series, failed where --fail-on-change fails.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the series and the steps as JSON alone.")
def history(
    path: str, output: str | None, fail_on_change: bool, markdown: str | None, junit: str | None, as_json: bool
) -> None:
    """Every run of the suite folder PATH (results/<suite>), one series per machine, config and headline figure
    (throughput, efficiency, exposed comm, busbw, peak memory), in time order, and the steps found in each: where a
    figure moved and stayed moved, with its size and 95 % CI, and the run it starts from."""
    from tfscale.api import history as history_of  # late: pandas only for this command
    from tfscale.htmlreport.history import junit_xml, markdown_text, page, summary_lines
    from tfscale.jsonout import dumps, table
    from tfscale.store.records import check_outputs, find_records_files, write_atomic

    check_outputs([output, markdown, junit], find_records_files(path), "-o, --markdown and --junit")
    found = history_of(path)
    written = []
    for target, text in (
        (output, lambda: page(found, Path(path).name)),
        (markdown, lambda: markdown_text(found)),
        (junit, lambda: junit_xml(found)),
    ):
        if target:
            write_atomic(Path(target), text())
            written.append(target)
    failing = found.failing()
    if as_json:
        document = {"method": found.method, "runs": table(found.runs), "steps": table(found.steps)}
        document |= {"series": table(found.series), "failing": table(failing), "written": written}
        click.echo(dumps(document))
    else:
        for line in summary_lines(found):
            click.echo(line)
        for target in written:
            click.echo(f"wrote {target}")
    if fail_on_change and not failing.empty:
        raise SystemExit(1)
