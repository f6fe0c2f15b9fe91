"""The named records the engine hands to an adapter and takes back.

No I/O here either: where an adapter must be told something happened (a
call was answered, a running request was cancelled), the record holds an
object of the adapter's with one method, called by the engine:

- :attr:`Call.waiter` has ``set()`` (``trio.Event``, ``asyncio.Event``):
  called once the call's answer (or failure) is there;
- :attr:`Running.handle` has ``cancel()`` (``trio.CancelScope``,
  ``asyncio.Task``): called when the request is cancelled while its handler
  runs (``session/cancel``, ``$/cancel_request``, ``session/close``).

The records built once per message are ``msgspec.Struct`` records with
``eq=False`` (compared and hashed by identity, like plain objects): built
in C, they cost about half a Python ``__init__``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, Protocol

import msgspec

from ._jsonrpc import Envelope, Id
from ._schema import MethodSpec

__all__ = [
    "END_OF_INPUT",
    "NEED_DATA",
    "ORIGIN_NOTIFICATION",
    "ORIGIN_REQUEST",
    "ORIGIN_USER",
    "PAUSED",
    "Call",
    "Cancellable",
    "CloseConnection",
    "ExtMethod",
    "HeldResponse",
    "IncomingRequest",
    "QueuedNotification",
    "Running",
    "Settable",
    "VersionChosen",
]

Handler = Callable[[Any], Awaitable[Any]]


async def resolve_at_start(params: object) -> object:
    """The handler of a request accepted before its handler object was set
    (held behind ``initialize``): found when it starts (``_requests.started``)."""
    raise AssertionError("resolved before the request starts")


class Settable(Protocol):
    """What waits for an answer: the engine calls ``set()`` once."""

    def set(self) -> None: ...


class Cancellable(Protocol):
    """What runs a handler: the engine calls ``cancel()`` to cancel it."""

    def cancel(self) -> Any: ...


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: :meth:`Engine.next_event`: no complete line is buffered; read more.
NEED_DATA: Final = _Sentinel("NEED_DATA")
#: :meth:`Engine.next_event`: a bound is reached; see ``Engine.pause_reason``.
PAUSED: Final = _Sentinel("PAUSED")
#: :meth:`Engine.next_event`: the input ended and every line was handled.
END_OF_INPUT: Final = _Sentinel("END_OF_INPUT")

#: Who makes an outgoing call (:meth:`Engine.start_call`): user code, the
#: handler of an incoming request, or the notification handler.  A call made
#: by a handler keeps reading going past the bound that handler holds
#: (``ReadGate``); one made by the notification handler is not held behind
#: the notifications (it is their handler: it would wait for itself).
ORIGIN_USER: Final = 0
ORIGIN_REQUEST: Final = 1
ORIGIN_NOTIFICATION: Final = 2


class ExtMethod:
    """A stand-in :class:`MethodSpec` for ``_``-prefixed extension methods."""

    __slots__ = ("name",)
    params: Any = None
    result: Any = object
    handler = "ext_method"
    notification: Any = None

    def __init__(self, name: str) -> None:
        self.name = name


class Call:
    """An outgoing request: its id and frame, then its answer.

    ``value`` / ``failure`` are filled before ``waiter.set()`` is called;
    :meth:`result` returns the one or raises the other.
    """

    __slots__ = (
        "answered",
        "exempt",
        "failure",
        "held",
        "id",
        "in_request",
        "line",
        "method",
        "params",
        "value",
        "waiter",
        "waiting",
    )

    def __init__(
        self,
        ident: int,
        method: MethodSpec,
        params: Any,
        line: bytes,
        waiter: Settable,
        origin: int,
    ) -> None:
        self.id = ident
        self.method = method
        self.params = params
        self.line = line
        self.waiter = waiter
        #: made by the notification handler: not held behind notifications
        self.exempt = origin == ORIGIN_NOTIFICATION
        self.in_request = origin == ORIGIN_REQUEST
        self.value: Any = None
        self.failure: BaseException | None = None
        self.answered = False  # value or failure is final, waiter was set
        self.waiting = True  # its caller still waits
        self.held = False  # released, its caller has not resumed yet

    def respoken(self, method: MethodSpec) -> None:
        """The version changed while it waited: ``method`` in the version spoken now."""
        self.method = method

    def settle(self, value: Any, failure: BaseException | None) -> None:
        """Its answer is final (``value``, or ``failure``); :meth:`wake` next."""
        self.value, self.failure = value, failure
        self.answered = True

    def wake(self) -> bool:
        """Wake its caller; whether what came after must wait for it to resume
        (it still waits, and is not the notification handler: ``ResumeOrder``)."""
        self.waiter.set()
        if self.waiting and not self.exempt:
            self.held = True
            return True
        return False

    def resumed(self) -> bool:
        """Its caller resumed or left; whether it was held (``ResumeOrder.resume``)."""
        self.waiting = False
        held, self.held = self.held, False
        return held

    def fail(self, error: BaseException) -> None:
        """Fail the call (unless answered already) and wake its caller."""
        if not self.answered:
            self.answered = True
            self.failure = error
            self.waiter.set()

    def result(self) -> Any:
        """The decoded result; raises the failure instead if the call failed."""
        if self.failure is not None:
            raise self.failure
        return self.value


class Running(msgspec.Struct, eq=False):
    """An incoming request accepted by the engine, until it is answered.

    ``cancel_reason`` tells how it was cancelled: ``"request"`` for
    ``$/cancel_request`` (answered -32800), ``"session"`` for a session-level
    cancel (answered with the method's "cancelled" result).  ``handle`` is
    the adapter's while the handler runs (``None`` before and after): a
    request cancelled before it started never starts, one cancelled after
    its handler returned keeps its answer.
    """

    method: MethodSpec
    session_id: str | None
    handle: Cancellable | None = None
    cancel_reason: str | None = None

    @property
    def session_cancelled(self) -> bool:
        """Cancelled by a session-level cancel (its handler may have returned)."""
        return self.cancel_reason == "session"

    def cancel(self, reason: str) -> None:
        """Mark it cancelled (the first reason wins) and cancel its handler if it runs."""
        if self.cancel_reason is None:
            self.cancel_reason = reason
        if self.handle is not None:
            self.handle.cancel()


class Batch:
    """Answers to the members of one incoming batch, sent as one array."""

    __slots__ = ("expected", "lines", "sealed")

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.expected = 0
        self.sealed = False

    def expect(self) -> None:
        """One more member will be answered."""
        self.expected += 1

    def seal(self) -> bytes | None:
        """Every member was read; the whole array if all are answered already."""
        self.sealed = True
        return self.complete()

    def add(self, line: bytes) -> bytes | None:
        """Take one member's answer; the whole array once complete."""
        self.lines.append(line.rstrip(b"\n"))
        return self.complete()

    def complete(self) -> bytes | None:
        if self.sealed and self.expected and len(self.lines) == self.expected:
            self.expected = 0
            return b"[" + b",".join(self.lines) + b"]\n"
        return None


class IncomingRequest(msgspec.Struct, eq=False):
    """An incoming request to run: ``await handler(params)``, then answer it.

    Answer with :meth:`Engine.answer` / :meth:`Engine.answer_exception` /
    :meth:`Engine.answer_cancelled`, then :meth:`Engine.request_done`.
    ``size``: bytes of its params, while it waits in the queue.
    """

    id: Id
    running: Running
    handler: Handler
    params: Any
    batch: Batch | None
    size: int = 0


class QueuedNotification(msgspec.Struct, eq=False):
    """A notification waiting for (or being handled by) its handler."""

    name: str
    handler: Handler
    params: Any
    size: int


class HeldResponse(msgspec.Struct, eq=False):
    """A response held behind notifications received before it."""

    call: Call
    envelope: Envelope
    size: int


class VersionChosen:
    """The initialize step: the connection now speaks ``version``.

    The adapter builds the handler object for that version (the user's
    factory takes the adapter's connection) and gives it to
    :meth:`Engine.set_handler` before it handles the next event.
    """

    __slots__ = ("version",)

    def __init__(self, version: int) -> None:
        self.version = version

    def __repr__(self) -> str:
        return f"VersionChosen({self.version})"


class CloseConnection:
    """The engine asks the adapter to close the connection (``reason`` says why)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"CloseConnection({self.reason!r})"
