"""What an option may hold where it reaches a cluster's command line or a file `tfscale launch` writes (a `#SBATCH`
directive, a shell line, a manifest): each is checked against the syntax of its own tool, and a value that fails is
refused in one line naming the option, so that nothing from the command line becomes a second line of a script.
Values are quoted for their sink as well (shlex for shell lines, YAML serialisation for manifests): these checks are
the first of two guards. Pure."""

from __future__ import annotations

import re

from tfscale.errors import TfscaleError
from tfscale.untrusted import unsafe_character, visible

# Slurm's time formats (sbatch(1) --time): minutes, minutes:seconds, hours:minutes:seconds, days-hours,
# days-hours:minutes, days-hours:minutes:seconds; or no limit.
SLURM_TIME = re.compile(r"(?:\d{1,6}-)?\d{1,7}(?::\d{1,2}){0,2}|UNLIMITED|INFINITE", re.IGNORECASE)
# Slurm partition and account names, a comma-separated list for partitions.
SLURM_NAMES = re.compile(r"[A-Za-z0-9_.+-]{1,128}(?:,[A-Za-z0-9_.+-]{1,128}){0,31}")
# A host as a cluster spec names it: a DNS name or IPv4 address, or an IPv6 address in brackets, with a port.
HOST = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::(?P<port>\d{1,5}))?")
# An OCI image reference: [registry[:port]/]path[:tag][@digest].
IMAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}")
# A Kubernetes quantity (resource.Quantity): a number and an optional binary or decimal suffix.
QUANTITY = re.compile(r"\d{1,18}(?:\.\d{1,9})?(?:[KMGTPE]i|[kMGTPEm])?")
MAX_PORT = 65535
MAX_TEXT = 4096  # a path, an argument


def _refuse(option: str, value: str, rule: str) -> TfscaleError:
    return TfscaleError(f"{option} '{visible(value)[:80]}': {rule}")


def check_pattern(option: str, value: str | None, pattern: re.Pattern, rule: str) -> None:
    if value is not None and pattern.fullmatch(value) is None:
        raise _refuse(option, value, rule)


def check_text(option: str, value: str | None) -> None:
    """Free text (a path, an argument): one line of printable characters."""
    if value is None:
        return
    bad = unsafe_character(value)
    if bad is not None or not value or len(value) > MAX_TEXT:
        raise _refuse(option, value, f"holds {bad}" if bad else f"must be 1 to {MAX_TEXT} characters")


def check_port(option: str, port: int, count: int = 1) -> None:
    """`count` consecutive ports from `port` must be valid TCP ports."""
    if not 1 <= port <= MAX_PORT - count + 1:
        raise TfscaleError(f"{option} {port}: {count} port(s) from it must lie in 1..{MAX_PORT}")


def check_time(option: str, value: str | None) -> None:
    check_pattern(option, value, SLURM_TIME, "a Slurm time limit is minutes, H:MM:SS, D-H:MM:SS or UNLIMITED")


def check_slurm_names(option: str, value: str | None) -> None:
    check_pattern(option, value, SLURM_NAMES, "Slurm names are letters, digits, '_', '.', '+', '-', comma-separated")


def check_host(option: str, host: str) -> None:
    """A host name or address, with an optional port in 1..65535."""
    match = HOST.fullmatch(host)
    if match is None or (match["port"] is not None and not 1 <= int(match["port"]) <= MAX_PORT):
        raise _refuse(option, host, "a host is a name or address, optionally with :PORT (1..65535)")
