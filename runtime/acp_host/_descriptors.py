"""What the host says about a file descriptor, without an event loop.

Two questions every adapter that reads and writes descriptors directly
(stdio, a subprocess's pipes) must ask, answered the same way whatever
waits on them:

- :func:`pollable`: can an event loop wait on it?  Pipes, sockets and most
  terminals: yes; a regular file or ``/dev/null`` (``agent < requests.jsonl``)
  is always ready and epoll refuses it, so it is read and written directly;
- :func:`reader_gone`: has every reader of a pipe we write closed its end?
  Its write end reports ``POLLERR`` / ``POLLHUP`` then (the peer exited);
  on other descriptors a dead reader shows only when a write fails.
"""

from __future__ import annotations

import os
import select
import selectors
import stat

__all__ = ["pollable", "reader_gone"]


def pollable(fd: int) -> bool:
    """Whether an event loop can wait on ``fd`` (pipes, sockets, most ttys)."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return True
    if not stat.S_ISCHR(mode):
        return False  # a regular file: always "ready", epoll refuses it
    selector = selectors.DefaultSelector()
    try:
        selector.register(fd, selectors.EVENT_READ | selectors.EVENT_WRITE)
    except (OSError, ValueError):  # /dev/null under epoll: EPERM
        return False
    finally:
        selector.close()
    return True


def reader_gone(fd: int) -> bool:
    """Whether nobody reads what is written to ``fd`` any more, as far as can
    be told (``False`` when it cannot be: not a pipe, no ``poll``)."""
    if fd < 0:
        return True
    if not hasattr(select, "poll"):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    try:
        events = poller.poll(0)
    except OSError:
        return True
    return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in events)
