"""tfscale.untrusted: names, escapes for each sink, confined paths and capped reads, with exact values."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest

from tfscale.untrusted import (
    UntrustedFile,
    confined,
    is_name,
    markdown_text,
    plot_text,
    read_capped,
    terminal_text,
    unsafe_character,
    valid_text,
    visible,
    xml_text,
)


@pytest.mark.parametrize("name", ["a", "mlp", "my-model_2.v1", "0", "x" * 64, "a..b"])
def test_names(name):
    assert is_name(name)


@pytest.mark.parametrize(
    "name", ["", ".", "..", "../x", "/abs", "-x", "_x", "a b", "a\n", "a/b", "x" * 65, "é", "$(x)", 3, None]
)
def test_not_names(name):
    assert not is_name(name)


def test_unsafe_character_names_the_first():
    assert unsafe_character("ok text, é and 中文") is None
    assert unsafe_character("evil\ntouch x") == "\\n (U+000A)"
    assert unsafe_character("a\x1b[31m") == "\\x1b (U+001B)"
    assert unsafe_character("a\u202eb") == "\\u202e (U+202E)"
    assert unsafe_character("a\ud800") == "\\ud800 (U+D800)"
    assert unsafe_character("tab\there") == "\\t (U+0009)"


def test_visible_and_terminal_text():
    assert visible("evil\ntouch /tmp/x\n#") == "evil\\ntouch /tmp/x\\n#"
    assert visible("a\r\x00\x7f\x85\u2028b") == "a\\r\\x00\\x7f\\x85\\u2028b"
    assert terminal_text("line 1\n\tline 2\x1b[2J\rover") == "line 1\n\tline 2\\x1b[2J\\rover"
    assert visible("plain é") == "plain é"


def test_valid_text_replaces_lone_surrogates_only():
    assert valid_text("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert valid_text("😀") == "😀"


def test_xml_text_parses_back():
    hostile = "a\x00b\x1b\x0c\ud800\ufffe\uffff<x>&]]></testcase>\n\tz"
    text = xml_text(hostile)
    assert text == "a\\x00b\\x1b\\x0c\\ud800\\ufffe\\uffff<x>&]]></testcase>\n\tz"
    element = ET.Element("case", name=text)
    element.text = text
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert parsed.text == text and parsed.get("name") == text


def test_markdown_text():
    assert markdown_text("a|b") == "a\\|b"
    assert markdown_text("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    # the escapes' own backslashes escaped too: rendered, the cell shows \r\n
    assert markdown_text("</details>\r\n# head") == "&lt;/details&gt;\\\\r\\\\n# head"
    assert markdown_text("[link](http://x) `code` *em* _em_ ~~s~~") == (
        "\\[link\\](http://x) \\`code\\` \\*em\\* \\_em\\_ \\~\\~s\\~\\~"
    )
    assert markdown_text("mirrored x4 (2 nodes) +5.0%") == "mirrored x4 (2 nodes) +5.0%"


def test_plot_text():
    assert plot_text('<a href="javascript:alert(1)">x</a>') == '&lt;a href="javascript:alert(1)"&gt;x&lt;/a&gt;'
    assert plot_text("a & b\nc") == "a &amp; b\\nc"


def test_confined(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "t.csv").write_text("x")
    (tmp_path / "secret").write_text("s")
    (tmp_path / "run" / "link").symlink_to(tmp_path / "secret")
    assert confined(tmp_path / "run", "t.csv") == (tmp_path / "run" / "t.csv").resolve()
    assert confined(tmp_path / "run", "sub/../t.csv") == (tmp_path / "run" / "t.csv").resolve()
    for bad in ("../secret", "/etc/passwd", "link", "", "a\0b", "sub/../../secret"):
        with pytest.raises(UntrustedFile):
            confined(tmp_path / "run", bad)
    with pytest.raises(UntrustedFile):
        confined(tmp_path / "run", None)


def test_read_capped(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    assert read_capped(path, 5) == b"12345"
    with pytest.raises(UntrustedFile, match="over 4 bytes"):
        read_capped(path, 4)
    with pytest.raises(UntrustedFile, match="not a regular file"):
        read_capped("/dev/zero", 10)
    with pytest.raises(UntrustedFile, match="not a regular file"):
        read_capped(tmp_path, 10)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UntrustedFile, match="not a regular file"):  # refused at once, without a writer
        read_capped(fifo, 10)
    with pytest.raises(FileNotFoundError):
        read_capped(tmp_path / "missing", 10)


def test_read_capped_reads_a_pipe_when_asked(tmp_path):
    read_end, write_end = os.pipe()
    os.write(write_end, b"name: x\n")
    os.close(write_end)
    try:
        assert read_capped(f"/dev/fd/{read_end}", 100, pipes=True) == b"name: x\n"
    finally:
        os.close(read_end)
    read_end, write_end = os.pipe()
    os.write(write_end, b"x" * 11)
    os.close(write_end)
    try:
        with pytest.raises(UntrustedFile, match="over 10 bytes"):
            read_capped(f"/dev/fd/{read_end}", 10, pipes=True)
    finally:
        os.close(read_end)
