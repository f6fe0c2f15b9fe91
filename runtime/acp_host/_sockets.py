"""A private directory for a Unix socket whose path the kernel accepts.

A Unix socket's path must fit ``sun_path``: 108 bytes on Linux, 104 on
macOS and the BSDs, the terminating NUL included. ``TMPDIR`` is often longer
than that leaves room for (macOS's ``/var/folders/...``, a CI runner's or a
test's nested temporary directory), and ``bind`` then fails with a bare
``OSError: AF_UNIX path too long``. :func:`socket_directory` makes the
directory under :func:`tempfile.gettempdir` when the socket's path fits
there, else under ``/tmp``, and says which limit was met when neither fits.
"""

from __future__ import annotations

import os
import tempfile

__all__ = ["MAX_SOCKET_PATH", "socket_directory"]

#: The longest Unix socket path accepted on every platform we run on, in bytes
#: (macOS's 104-byte ``sun_path`` less its NUL).
MAX_SOCKET_PATH = 103
#: where the directory goes when ``TMPDIR`` is too long (``mkdtemp`` adds ~8
#: characters to the prefix)
_FALLBACK = "/tmp"
_RANDOM_SUFFIX = 8


def socket_directory(prefix: str, socket_name: str) -> str:
    """A new directory (mode 0700, the caller removes it) in which
    ``socket_name`` makes a path of at most :data:`MAX_SOCKET_PATH` bytes:
    under the temporary directory if that fits, else under ``/tmp``."""
    for parent in (tempfile.gettempdir(), _FALLBACK):
        length = len(
            os.fsencode(
                os.path.join(parent, prefix + "x" * _RANDOM_SUFFIX, socket_name)
            )
        )
        if length <= MAX_SOCKET_PATH and os.path.isdir(parent):
            return tempfile.mkdtemp(prefix=prefix, dir=parent)
    raise OSError(
        f"no directory for the Unix socket {socket_name!r}: under "
        f"{tempfile.gettempdir()!r} and {_FALLBACK!r} its path would exceed "
        f"{MAX_SOCKET_PATH} bytes"
    )
