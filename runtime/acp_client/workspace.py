"""The session's directories as the agent may read and write them (``fs/*``)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from typing import BinaryIO

import acp_trio
import trio
from acp_schema import v1

from acp_client.grants import Grants
from acp_client.questions import Asker

#: Bytes ``fs/read_text_file`` answers at most (the whole file, or the lines asked).
MAX_READ = 16 * 1024 * 1024
#: Bytes ``fs/write_text_file`` writes at most.
MAX_WRITE = 16 * 1024 * 1024
#: Bytes read at a time while looking for the lines asked.
CHUNK = 64 * 1024


def refused(message: str, path: str) -> acp_trio.RequestError:
    return acp_trio.RequestError(acp_trio.INVALID_PARAMS, message, {"path": path})


class Workspace:
    """The directories of the session (its cwd and ``--add-dir``s): files the
    agent reads or writes, and terminal cwds, must resolve inside one.

    Symlinks are resolved before the check, so a link inside pointing outside
    is outside.  Reads take regular files only (no FIFO, device), in a worker
    thread: the whole file up to ``MAX_READ`` bytes, or with ``line`` /
    ``limit`` only the lines asked (the file is read up to the last of them,
    never whole).  Writes, up to ``MAX_WRITE`` bytes, ask the user first
    unless a permission the user gave for the tool call covers them.
    """

    def __init__(self, roots: Sequence[str], asker: Asker, grants: Grants) -> None:
        self.roots = [os.path.realpath(r) for r in roots]
        self.asker = asker
        self.grants = grants

    def inside(self, path: str) -> str:
        """``path`` resolved, if inside a root; else refused (-32602)."""
        if not os.path.isabs(path):
            raise refused("Invalid params: the path must be absolute", path)
        real = os.path.realpath(path)
        for root in self.roots:
            if os.path.commonpath([real, root]) == root:
                return real
        raise refused("Invalid params: outside the session's directories", path)

    async def read(self, path: str, line: int | None, limit: int | None) -> str:
        real = self.inside(path)
        if line is None and limit is None:
            data = await trio.to_thread.run_sync(read_regular, real, path)
        else:
            start = max((line or 1) - 1, 0)
            data = await trio.to_thread.run_sync(read_lines, real, path, start, limit)
        return data.decode("utf-8", errors="replace")

    async def write(self, session_id: str, path: str, content: str) -> None:
        real = self.inside(path)
        data = content.encode()
        if len(data) > MAX_WRITE:
            raise refused(f"Invalid params: larger than {MAX_WRITE} bytes", path)
        what = f"write {path} ({len(data)} bytes)"
        covered = self.grants.write(session_id, path)
        if covered is not None:
            self.asker.screen.line(f"{what}: allowed for {covered}")
        elif not await self.asker.confirm(what):
            raise acp_trio.RequestError(
                acp_trio.INVALID_REQUEST,
                "Permission denied by the user",
                {"path": path},
            )
        await trio.to_thread.run_sync(write_regular, real, path, data)


def open_regular(real: str, path: str) -> BinaryIO:
    """``real`` open for reading, if a regular file (no FIFO wait)."""
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise acp_trio.RequestError(
            v1.ERROR_CODE_RESOURCE_NOT_FOUND, "Resource not found", {"path": path}
        ) from None
    except OSError as exc:
        raise refused(f"Invalid params: {exc.strerror}", path) from None
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        f.close()
        raise refused("Invalid params: not a regular file", path)
    return f


def read_regular(real: str, path: str) -> bytes:
    with open_regular(real, path) as f:
        if os.fstat(f.fileno()).st_size > MAX_READ:
            raise refused(f"Invalid params: larger than {MAX_READ} bytes", path)
        return f.read(MAX_READ)


def read_lines(real: str, path: str, start: int, limit: int | None) -> bytes:
    """Lines ``start`` (0-based) to ``start + limit`` of the file, read up to
    the last of them, in ``CHUNK``-byte pieces: memory stays ``MAX_READ``."""
    kept = bytearray()
    number = 0  # the line the next piece belongs to
    end = None if limit is None else start + max(limit, 0)
    with open_regular(real, path) as f:
        while end is None or number < end:
            piece = f.readline(CHUNK)
            if not piece:
                break
            if number >= start:
                kept += piece
                if len(kept) > MAX_READ:
                    raise refused(
                        f"Invalid params: the lines asked exceed {MAX_READ} bytes",
                        path,
                    )
            if piece.endswith(b"\n"):
                number += 1
    return bytes(kept)


def write_regular(real: str, path: str, data: bytes) -> None:
    try:
        os.makedirs(os.path.dirname(real), exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(real, flags | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise refused(f"Invalid params: {exc.strerror}", path) from None
    with os.fdopen(fd, "wb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise refused("Invalid params: not a regular file", path)
        f.write(data)
