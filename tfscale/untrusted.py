"""Text and files from outside tfscale, kept data wherever they go.

A suite file, a record, a launch folder and the command line are written by someone else as often as not (a team's
benchmark repository, a shared results folder). Nothing in them may become a command, a path outside its folder or
markup. Two rules, both here: names that become identifiers or file names (suite, model, run and config ids) are held
to NAME and refused where they are read (`is_name`); every other string is escaped for its sink: a terminal or a
script's comment (`visible`), XML 1.0 (`xml_text`), Markdown (`markdown_text`), plotly's labels (`plot_text`). Files
named by untrusted data are read only inside their folder (`confined`) and only when regular and small
(`read_capped`). Pure: the standard library only.
"""

from __future__ import annotations

import html
import os
import re
import stat
from pathlib import Path

NAME_MAX = 64
# A name is one path component whatever it holds (no "/", never "." or ".."), one shell word, one line, and short
# enough for a network namespace's name (tfscale.netsim) and a file name.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
NAME_RULE = f"1 to {NAME_MAX} letters, digits, '_', '.' or '-', starting with a letter or digit"

# Characters that change how text is read rather than what it says: C0 and C1 controls and DEL (a newline ends a
# script's comment line, ESC starts a terminal's escape sequence, NUL ends a C string), the line and paragraph
# separators (str.splitlines breaks there), the bidirectional marks and overrides (text shown in another order than
# it is read: CVE-2021-42574), and lone surrogates (no UTF-8 encoding: a writer fails half-way through a file).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# What XML 1.0 cannot hold at all (its Char production), besides the unsafe characters: U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\ufffe\uffff]")
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Markdown's punctuation that formats inside a line: emphasis, code spans, links and images, table cells, strikes.
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")


def is_name(text: object) -> bool:
    return isinstance(text, str) and NAME.fullmatch(text) is not None


def _escape(char: str) -> str:
    code = ord(char)
    return _SHORT_ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def unsafe_character(text: str) -> str | None:
    """The first unsafe character of `text` as its escape and code point ("\\n (U+000A)"), None if it has none."""
    found = _UNSAFE.search(text)
    return None if found is None else f"{_escape(found.group())} (U+{ord(found.group()):04X})"


def visible(text: str, keep: str = "") -> str:
    """`text` with every unsafe character but those in `keep` written as its escape (a newline as backslash-n,
    ESC as backslash-x1b): one line for a comment or a log prefix; with keep="\\n\\t", text for a terminal."""
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)


def terminal_text(text: str) -> str:
    """What a terminal may show: lines and tabs kept, every other control (escape sequences, carriage returns,
    bidirectional overrides) escaped."""
    return visible(text, keep="\n\t")


def valid_text(text: str) -> str:
    """`text` with each lone surrogate (JSON's "\\ud800" reads as one; UTF-8 cannot write it) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def xml_text(text: str) -> str:
    """Text every XML 1.0 parser reads back as it was shown: unsafe characters escaped but line breaks and tabs,
    U+FFFE and U+FFFF too (ElementTree escapes the markup characters)."""
    return _NOT_XML.sub(lambda m: _escape(m.group()), terminal_text(text))


def markdown_text(text: str) -> str:
    """One line of plain text inside Markdown (a table cell, a list item): unsafe characters escaped, Markdown's
    formatting characters backslash-escaped, and <, >, & as HTML entities (Markdown passes raw HTML through)."""
    return html.escape(_MARKDOWN.sub(r"\\\1", visible(text)), quote=False)


def plot_text(text: str) -> str:
    """A label plotly.js shows as it is: it reads a subset of HTML in every label (<a href>, <br>, <b>), and shows
    &lt; as "<"."""
    return html.escape(visible(text), quote=False)


class UntrustedFile(ValueError):
    """A file named by untrusted data that tfscale will not read; the message says why."""


def confined(base: str | Path, relative: str) -> Path:
    """`base / relative` when it stays inside `base` once symbolic links are followed, else UntrustedFile."""
    if not isinstance(relative, str) or not relative or "\0" in relative or Path(relative).is_absolute():
        raise UntrustedFile(f"{relative!r}: not a path relative to {base}")
    root = Path(base).resolve()
    path = (root / relative).resolve()
    if path != root and root not in path.parents:
        raise UntrustedFile(f"{relative!r}: leads outside {base}")
    return path


def read_capped(path: str | Path, max_bytes: int, pipes: bool = False) -> bytes:
    """The bytes of a regular file (with `pipes`, of a pipe too: a suite from `<(...)`), at most `max_bytes`;
    UntrustedFile for anything else (a device such as /dev/zero, a socket, a FIFO without `pipes`: opened without
    waiting for a writer) or anything longer. OSError where it cannot be opened."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | (0 if pipes else os.O_NONBLOCK))
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISREG(mode) or (pipes and stat.S_ISFIFO(mode))):
            raise UntrustedFile(f"{path}: not a regular file")
        if stat.S_ISREG(mode) and os.fstat(fd).st_size > max_bytes:
            raise UntrustedFile(f"{path}: over {max_bytes} bytes")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise UntrustedFile(f"{path}: over {max_bytes} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)
