"""`tfscale schema [-o FILE]`: the JSON Schema of the suite file, for editors and CI checks."""

from __future__ import annotations

import click


@click.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="File to write (default: standard output).")
def schema(output: str | None) -> None:
    """Write the JSON Schema of the suite file. Editors with the YAML language server validate and complete a suite
    whose first line is `# yaml-language-server: $schema=FILE` (FILE relative to the suite)."""
    from tfscale.store.records import check_output, write_atomic
    from tfscale.suite.schema import schema_text

    text = schema_text()
    if output is None:
        click.echo(text, nl=False)
        return
    write_atomic(check_output(output), text)
    click.echo(f"schema: {output}", err=True)
