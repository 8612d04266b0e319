"""Where the CLI writes the lines of library calls (tfscale.runner.sweep.Echo)."""

from __future__ import annotations

import click

from tfscale.runner.sweep import Echo


def click_echo() -> Echo:
    """Results and progress on standard output, notes and warnings on standard error."""
    return Echo(click.echo, lambda line: click.echo(line, err=True))
