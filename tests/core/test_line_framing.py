"""Line framing rules of acp_core.LineBuffer: bytes in, lines out, no I/O."""

from __future__ import annotations

from acp_core import LineBuffer, Oversized, sniff_oversized


def test_a_line_split_across_chunks_is_returned_once_whole() -> None:
    buffer = LineBuffer(max_message_size=100)
    assert buffer.feed(b'{"a":') == []
    assert buffer.feed(b'1}\n{"b"') == [b'{"a":1}']
    assert buffer.feed(b":2}\n") == [b'{"b":2}']


def test_crlf_is_dropped_and_blank_lines_are_skipped() -> None:
    buffer = LineBuffer(max_message_size=100)
    assert buffer.feed(b"one\r\n\n  \r\ntwo\n") == [b"one", b"two"]


def test_a_last_line_without_newline_is_returned_at_eof() -> None:
    buffer = LineBuffer(max_message_size=100)
    assert buffer.feed(b"one\ntw") == [b"one"]
    assert buffer.feed_eof() == [b"tw"]
    assert buffer.eof


def test_an_oversized_line_is_discarded_while_it_streams_keeping_both_ends() -> None:
    buffer = LineBuffer(max_message_size=1024)
    head = b'{"jsonrpc":"2.0","id":7,"method":"m","params":{"x":"'
    assert buffer.feed(head) == []
    for _ in range(1000):  # 10 MB in 10 KB chunks, never held
        assert buffer.feed(b"y" * 10_000) == []
        assert buffer.buffered <= 1024
    (line, after) = buffer.feed(b'"}}\n{"ok":1}\n')
    assert isinstance(line, Oversized)
    assert line.size == len(head) + 10_000_000 + 3
    assert line.head.startswith(head) and line.tail.endswith(b'"}}')
    assert after == b'{"ok":1}'
    assert sniff_oversized(line) == (7, "m", False)


def test_an_oversized_line_within_one_chunk_is_reported_not_returned() -> None:
    buffer = LineBuffer(max_message_size=8)
    (line, small) = buffer.feed(b'{"id":"abcdefgh"}\n{"a":1}\n')
    assert isinstance(line, Oversized) and line.size == 17
    assert small == b'{"a":1}'


def test_an_oversized_line_cut_by_eof_is_reported() -> None:
    buffer = LineBuffer(max_message_size=4)
    assert buffer.feed(b"0123456789") == []
    (line,) = buffer.feed_eof()
    assert isinstance(line, Oversized) and line.size == 10


def test_a_verbatim_buffer_gives_every_line_as_it_came_within_the_same_bound() -> None:
    buffer = LineBuffer(max_message_size=8, verbatim=True)
    assert buffer.feed(b"a\r\n\n  \nb") == [b"a\r", b"", b"  "]
    assert buffer.feed(b"c" * 20) == []
    assert buffer.discarding and buffer.buffered == 0
    [oversized, last] = buffer.feed(b"\nok\n")
    assert isinstance(oversized, Oversized) and oversized.size == 21
    assert last == b"ok"
    assert buffer.feed(b"  ") == [] and buffer.feed_eof() == [b"  "]
