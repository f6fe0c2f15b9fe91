"""The records of a connection's task pool (:mod:`acp_trio._connection`).

A task of the pool holds a role (reading, consuming the ordered queue) or
goes on with what its role took and could not finish in one step: a
request (:class:`Started`) or a notification handler (:class:`Notifying`).
"""

from __future__ import annotations

import contextvars
import enum
from collections.abc import Generator
from typing import Any, Final, NamedTuple, TypeAlias

from acp_core.adapter import IncomingRequest, QueuedNotification

from ._framing import Wakeup

__all__ = [
    "BURST",
    "RETIRE",
    "RETURNED",
    "Notifying",
    "Role",
    "Signal",
    "Started",
    "Taken",
    "Worker",
]


class Role(enum.Enum):
    """What a task of the pool does between requests."""

    READ = "reading"  # _read: the peer's bytes into the engine
    CONSUME = "consuming"  # _consume: the ordered queue


class Started(NamedTuple):
    """A request whose first step yielded to trio: the rest is awaited."""

    job: IncomingRequest
    coro: Generator[Any, Any, Any]
    context: contextvars.Context
    trap: Any


class Notifying(NamedTuple):
    """A notification whose handler's first step yielded to trio: the task
    that ran it awaits the rest before the queue goes on."""

    item: QueuedNotification
    coro: Generator[Any, Any, Any]
    trap: Any


class Signal(enum.Enum):
    """What else taking work can end with."""

    #: A role's task must hand its role over and end: a request's first
    #: step cancelled the task's scope (``Running.cancel`` on itself).
    RETIRE = "retire"
    #: ``NOTIFICATION_BURST`` items were taken in a row: yield to trio.
    BURST = "burst"


RETIRE: Final = Signal.RETIRE
BURST: Final = Signal.BURST


class _Returned(enum.Enum):
    RETURNED = "returned"


#: What a notification handler's first step gives when the handler returned.
RETURNED: Final = _Returned.RETURNED

#: What a role's task took that it must go on with itself (``None``: nothing).
Taken: TypeAlias = Started | Notifying | Signal | None


class Worker:
    """A task of the connection's pool: ``role`` is what it does next."""

    __slots__ = ("job", "role", "wakeup")

    def __init__(self, role: Role | None) -> None:
        self.role = role
        self.job: IncomingRequest | None = None  # the request it goes on with
        self.wakeup = Wakeup()
