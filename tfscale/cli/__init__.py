"""The `tfscale` command: a click group whose commands are thin wrappers over library calls.

Importing this package imports neither TensorFlow nor pandas nor plotly (a test checks): `tfscale plan` and
`tfscale --help` answer at once, and commands import what they need when they run.
"""

from __future__ import annotations

import sys
import warnings

import click

from tfscale._version import __version__
from tfscale.cli import (
    clean_net_cmd,
    collect_cmd,
    commbench_cmd,
    compare_cmd,
    env_cmd,
    export_cmd,
    history_cmd,
    launch_cmd,
    plan_cmd,
    predict_cmd,
    report_cmd,
    run_cmd,
    schema_cmd,
)
from tfscale.errors import RecordWarning, TfscaleError
from tfscale.untrusted import terminal_text

USER_ERROR_EXIT = 2


_python_format = warnings.formatwarning


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    """tfscale's own warnings (a skipped record line) as one line, without Python's source line; others as Python
    writes them."""
    if issubclass(category, RecordWarning):
        return f"tfscale: warning: {message}\n"
    return _python_format(message, category, filename, lineno, line)


class VisibleText:
    """A text stream that passes on what it is given as untrusted.terminal_text: strings from records and suites (a
    failure's reason, a model name, a log tail) reach the terminal through many commands' lines, and an escape
    sequence in one must not clear the screen, move the cursor or retitle the window. Everything else is the
    stream's own, but `buffer`: click would write around this object through it."""

    buffer = None

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text):
        if not isinstance(text, str):  # click probes with bytes to tell text streams from binary ones
            return self._stream.write(text)
        self._stream.write(terminal_text(text))
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2: a group run without a command


def one_line(error: click.ClickException) -> str:
    """click's message, and for a usage error where to read the usage, on one line."""
    message = " ".join(error.format_message().split())
    ctx = getattr(error, "ctx", None)
    return f"{message} (see '{ctx.command_path} --help')" if isinstance(error, click.UsageError) and ctx else message


class TfscaleGroup(click.Group):
    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Every line tfscale and click write goes through VisibleText; click's own errors (a path that does not
        exist, a bad option value, a missing argument) are one line and exit 2, as tfscale's are."""
        streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = VisibleText(sys.stdout), VisibleText(sys.stderr)
        try:
            if not standalone_mode:
                return super().main(args, prog_name, complete_var, False, **extra)
            try:
                code = super().main(args, prog_name, complete_var, False, **extra)
            except NO_ARGS_IS_HELP as error:  # `tfscale` alone: its help, as click shows it
                error.show()
                sys.exit(error.exit_code)
            except click.ClickException as error:
                click.echo(f"tfscale: error: {one_line(error)}", err=True)
                sys.exit(error.exit_code)
            except click.Abort:
                click.echo("Aborted!", err=True)
                sys.exit(1)
            sys.exit(code if isinstance(code, int) else 0)
        finally:
            sys.stdout, sys.stderr = streams

    def invoke(self, ctx: click.Context):
        warnings.formatwarning = _one_line_warning
        try:
            return super().invoke(ctx)
        except TfscaleError as error:  # the user's input was wrong: one line, no traceback (unless --debug)
            if ctx.params.get("debug"):
                raise
            click.echo(f"tfscale: error: {error}", err=True)
            ctx.exit(USER_ERROR_EXIT)


@click.group(cls=TfscaleGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tfscale")
@click.option("--debug", is_flag=True, help="Show the traceback of errors in the input, not only their line.")
def cli(debug: bool) -> None:
    """Benchmark TensorFlow distributed training across devices, nodes and strategies."""


for command in (
    plan_cmd.plan,
    run_cmd.run,
    report_cmd.report,
    env_cmd.env,
    launch_cmd.launch,
    commbench_cmd.commbench,
    compare_cmd.compare,
    export_cmd.export,
    predict_cmd.predict,
    history_cmd.history,
    clean_net_cmd.clean_net,
    collect_cmd.collect,
    schema_cmd.schema,
):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="tfscale")
