"""The in-memory seam's rules (``acp_core.BytePipe``), without an event loop:
one direction of a seam keeps a pipe's bounds and ends."""

from __future__ import annotations

import pytest
from acp_core import DEFAULT_SEAM_CAPACITY, BytePipe, seam_ends


def test_a_pipe_holds_64_KiB_by_default_as_a_linux_pipe() -> None:
    assert DEFAULT_SEAM_CAPACITY == 64 * 1024
    assert BytePipe().capacity == DEFAULT_SEAM_CAPACITY


def test_a_write_takes_what_fits_and_says_how_much() -> None:
    pipe = BytePipe(capacity=8)
    assert pipe.write(b"12345") == 5
    assert pipe.write(b"6789ab") == 3
    assert pipe.write(b"c") == 0  # full: the writer waits
    assert pipe.buffered == 8 and pipe.room == 0


def test_a_read_takes_what_is_there_and_none_means_wait() -> None:
    pipe = BytePipe(capacity=8)
    assert pipe.read() is None
    pipe.write(b"abcdef")
    assert pipe.read(4) == b"abcd"
    assert pipe.read() == b"ef"
    assert pipe.read() is None


def test_after_the_writer_closed_the_reader_reads_what_is_left_then_the_end() -> None:
    pipe = BytePipe(capacity=8)
    pipe.write(b"abc")
    pipe.close_write()
    assert pipe.read() == b"abc"
    assert pipe.read() == b""


def test_a_write_to_a_pipe_whose_reader_closed_breaks() -> None:
    pipe = BytePipe(capacity=8)
    pipe.write(b"abc")
    pipe.close_read()
    assert pipe.buffered == 0  # what was buffered is dropped
    with pytest.raises(BrokenPipeError):
        pipe.write(b"x")


def test_a_write_after_the_writer_closed_is_refused() -> None:
    pipe = BytePipe(capacity=8)
    pipe.close_write()
    with pytest.raises(ValueError, match="closed"):
        pipe.write(b"x")


def test_a_pipe_has_room_for_at_least_one_byte() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        BytePipe(capacity=0)


def test_the_reader_is_woken_when_an_empty_pipe_gets_bytes_or_ends() -> None:
    pipe = BytePipe(capacity=8)
    woken: list[str] = []
    pipe.on_readable = lambda: woken.append("readable")
    pipe.write(b"a")
    pipe.write(b"b")  # not empty before: nobody waits
    assert woken == ["readable"]
    pipe.read()
    pipe.close_write()
    assert woken == ["readable", "readable"]


def test_the_writer_is_woken_when_a_full_pipe_is_read_or_its_reader_leaves() -> None:
    pipe = BytePipe(capacity=4)
    woken: list[str] = []
    pipe.on_writable = lambda: woken.append("writable")
    pipe.write(b"ab")
    pipe.read(1)  # was not full: no writer waits
    assert woken == []
    pipe.write(b"xyz")
    pipe.read(1)
    assert woken == ["writable"]
    pipe.close_read()
    assert woken == ["writable", "writable"]


def test_the_two_ends_of_a_seam_cross() -> None:
    left, right = seam_ends(capacity=16)
    left.outgoing.write(b"to the right")
    right.outgoing.write(b"to the left")
    assert right.incoming.read() == b"to the right"
    assert left.incoming.read() == b"to the left"
    left.close()  # as closing a socket: both directions
    assert right.incoming.read() == b""
    with pytest.raises(BrokenPipeError):
        right.outgoing.write(b"x")
