"""The session's directories as the agent may read and write them (``fs/*``)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

import acp_trio
import trio
from acp_schema import v1

from acp_client.questions import Asker

#: Bytes of a file ``fs/read_text_file`` reads at most.
MAX_READ = 16 * 1024 * 1024


def refused(message: str, path: str) -> acp_trio.RequestError:
    return acp_trio.RequestError(acp_trio.INVALID_PARAMS, message, {"path": path})


class Workspace:
    """The directories of the session (its cwd and ``--add-dir``s): files the
    agent reads or writes, and terminal cwds, must resolve inside one.

    Symlinks are resolved before the check, so a link inside pointing outside
    is outside.  Reads take regular files only (no FIFO, device) up to
    ``MAX_READ`` bytes; writes ask the user first.
    """

    def __init__(self, roots: Sequence[str], asker: Asker) -> None:
        self.roots = [os.path.realpath(r) for r in roots]
        self.asker = asker

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
        data = await trio.to_thread.run_sync(read_regular, real, path)
        text = data.decode("utf-8", errors="replace")
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        end = len(lines) if limit is None else start + max(limit, 0)
        return "".join(lines[start:end])

    async def write(self, path: str, content: str) -> None:
        real = self.inside(path)
        data = content.encode()
        if not await self.asker.confirm(f"write {path} ({len(data)} bytes)"):
            raise acp_trio.RequestError(
                acp_trio.INVALID_REQUEST,
                "Permission denied by the user",
                {"path": path},
            )
        await trio.to_thread.run_sync(write_regular, real, path, data)


def read_regular(real: str, path: str) -> bytes:
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise acp_trio.RequestError(
            v1.ERROR_CODE_RESOURCE_NOT_FOUND, "Resource not found", {"path": path}
        ) from None
    except OSError as exc:
        raise refused(f"Invalid params: {exc.strerror}", path) from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refused("Invalid params: not a regular file", path)
        if info.st_size > MAX_READ:
            raise refused(f"Invalid params: larger than {MAX_READ} bytes", path)
        return f.read(MAX_READ)


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
