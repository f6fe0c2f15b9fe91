"""One ACP connection of the server: its agent, its streams, its sessions.

The pump reads the agent's lines and puts each on the outbox of the stream
that carries it (:mod:`acp_http._routing`); POSTs (or WebSocket messages)
are checked against what the connection owns and written to the agent, one
whole line at a time.  Everything a connection holds is bounded by
:class:`~acp_http.HttpLimits`.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass

import anyio
import anyio.abc
import msgspec
from acp_core import INVALID_REQUEST, encode_error, encode_id

from ._agents import AgentHandle, AgentLauncher
from ._limits import HttpLimits
from ._lines import read_lines
from ._outbox import Budget, Outbox
from ._routing import (
    ESTABLISHING,
    REATTACHING,
    Envelope,
    MessageError,
    PostRule,
    Scope,
    decode_envelope,
    id_key,
)
from ._signal import Signal

__all__ = ["FLUSH_SECONDS", "Connection", "Refusal", "Registry"]

log = logging.getLogger("acp_http")

#: Methods whose answer makes a new session (its id unknown until then): each
#: one pending holds a room of ``max_sessions_per_connection``.
_MAKING = ESTABLISHING - REATTACHING

#: how long a closed connection's streams may take to send what was queued
FLUSH_SECONDS = 1.0


class Refusal(Exception):
    """A message the connection does not take: HTTP status, JSON-RPC code, text."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(slots=True)
class _Session:
    outbox: Outbox
    owned: bool  # False: reserved by a GET or a session/load|resume not answered yet


@dataclass(frozen=True, slots=True)
class _Pending:
    method: str
    session: str | None


class Connection:
    """An ACP connection: one agent, a connection stream, a stream per session.

    ``single_stream`` (WebSocket): every message goes on the connection's one
    outbox, in the agent's order.
    """

    # one per connection, idle ones held by thousands: no __dict__ each
    __slots__ = (
        "_initialize_answer",
        "_initialize_key",
        "_initialized",
        "_making",
        "_sends",
        "_writing",
        "_written",
        "agent",
        "budget",
        "close_reason",
        "closed",
        "dropped",
        "id",
        "last_active",
        "limits",
        "open_streams",
        "outbox",
        "pending",
        "sessions",
        "single_stream",
    )

    def __init__(
        self,
        connection_id: str,
        agent: AgentHandle,
        limits: HttpLimits,
        *,
        single_stream: bool,
    ) -> None:
        self.id = connection_id
        self.agent = agent
        self.limits = limits
        self.single_stream = single_stream
        #: what the connection holds for its readers, all streams together
        self.budget = Budget(limits.max_queued_bytes)
        self.outbox = Outbox(limits.max_queued_events, self.budget)
        self.sessions: dict[str, _Session] = {}
        self.pending: dict[str, _Pending] = {}
        # pending requests of _MAKING: sessions reserved, not yet named
        self._making = 0
        #: :meth:`close` was called
        self.closed = False
        self.open_streams = 0
        self.last_active = anyio.current_time()
        # a line is being written to the agent; writers waiting for it
        self._writing = False
        self._written: Signal | None = None
        self._initialize_key: str | None = None
        self._initialize_answer: bytes | None = None
        self._initialized: anyio.Event | None = None
        self.close_reason = ""
        #: closed with what it held dropped (:meth:`close`)
        self.dropped = False
        # the cancel scopes of its streams' sends (:meth:`abandoning`)
        self._sends: set[anyio.CancelScope] = set()

    # -- agent -> client ---------------------------------------------------

    async def pump(self) -> None:
        """Route the agent's lines until it ends or the connection closes.

        A line over ``max_body_bytes`` is judged as the engine judges one
        (``_lines.read_lines``): a request answered -32600 to the agent, an
        answer turned into an error answer for the client, a notification
        dropped; the connection goes on.
        """
        try:
            await read_lines(
                self.agent.stream,
                self._route_all,
                max_message_size=self.limits.max_body_bytes,
                answer_sender=self._to_agent,
            )
        except OSError:
            pass
        finally:
            await self.close(self.close_reason or "the agent ended")

    async def _route_all(self, lines: list[bytes]) -> None:
        for line in lines:
            await self._route(line)

    async def _to_agent(self, line: bytes) -> None:
        try:
            await self.write(line)
        except Refusal:
            pass  # the agent has ended: pump sees it next

    async def _route(self, line: bytes) -> None:
        try:
            envelope = decode_envelope(line, self.limits.max_nesting_depth)
        except MessageError as error:
            if error.too_deep:
                await self._refuse_deep(error)
                return
            envelope = Envelope()  # not a message: on the connection stream
        outbox = self._target(envelope, line)
        if outbox is not None:
            await self.queue(outbox, line)

    async def _refuse_deep(self, error: MessageError) -> None:
        """An agent line nested deeper than ``max_nesting_depth``, judged as
        the engine judges one: a request answered -32600 to the agent, an
        answer turned into an error answer for the client, a notification
        dropped; one bounded log line."""
        log.warning(
            "connection %s: the agent sent a message nested deeper than %d"
            " levels (id=%.64r)",
            self.id,
            self.limits.max_nesting_depth,
            error.ident,
        )
        if error.ident is None:
            return
        answer = encode_error(encode_id(error.ident), INVALID_REQUEST, error.message)
        if not error.response:
            await self._to_agent(answer.rstrip(b"\n"))
            return
        line = answer.rstrip(b"\n")
        outbox = self._target(decode_envelope(line), line)
        if outbox is not None:
            await self.queue(outbox, line)

    async def queue(self, outbox: Outbox, line: bytes) -> None:
        """Put ``line`` on ``outbox`` once the connection has room for it
        (``max_queued_bytes``, ``max_queued_events``); the sweep closes a
        connection whose readers keep it waiting (:meth:`stalled`)."""
        await outbox.put(line)

    def outboxes(self) -> list[Outbox]:
        """The connection's outboxes: its own stream's and each session's."""
        return [self.outbox, *(entry.outbox for entry in self.sessions.values())]

    def stalled(self, now: float) -> bool:
        """Whether a message waited for its reader over ``stall_seconds``."""
        limit = self.limits.stall_seconds
        for outbox in self.outboxes():
            since = outbox.waiting_since
            if since is not None and now - since > limit:
                return True
        return False

    def _target(self, envelope: Envelope, line: bytes) -> Outbox | None:
        if envelope.is_response:
            key = id_key(envelope.id)
            if key is not None and key == self._initialize_key:
                self._initialize_key = None
                self._initialize_answer = line
                if self._initialized is not None:
                    self._initialized.set()
                return None
            pending = self.pending.pop(key, None) if key is not None else None
            if pending is not None:
                return self._answer_target(pending, envelope)
            return self.outbox
        session = envelope.params_session
        if session is not None and not self.single_stream:
            entry = self.sessions.get(session)
            if entry is not None:
                return entry.outbox
        return self.outbox

    def _answer_target(self, pending: _Pending, envelope: Envelope) -> Outbox:
        if pending.method in _MAKING:
            self._making -= 1  # the room it held becomes its session, or is freed
        if pending.method in ESTABLISHING:
            if envelope.is_error:
                self._drop_unowned(pending.session)
            else:
                made = envelope.result_session
                session = pending.session if pending.method in REATTACHING else made
                if session is not None:
                    self._own(session)
            return self.outbox
        if pending.session is not None and not self.single_stream:
            entry = self.sessions.get(pending.session)
            if entry is not None:
                return entry.outbox
        return self.outbox

    def _own(self, session: str) -> None:
        entry = self.sessions.get(session)
        if entry is None:
            if len(session) > self.limits.max_id_length:
                log.warning("connection %s: agent session id too long", self.id)
                return
            limits = self.limits
            entry = _Session(Outbox(limits.max_queued_events, self.budget), True)
            self.sessions[session] = entry
        entry.owned = True

    def _drop_unowned(self, session: str | None) -> None:
        entry = self.sessions.get(session) if session is not None else None
        if entry is not None and not entry.owned:
            del self.sessions[session]  # type: ignore[arg-type]
            entry.outbox.close()

    # -- client -> agent ---------------------------------------------------

    def check(self, envelope: Envelope, rule: PostRule) -> None:
        """Refuse (:class:`Refusal`) a message the connection does not take."""
        limits = self.limits
        session = rule.session
        if session is not None and len(session) > limits.max_id_length:
            raise Refusal(400, -32600, "Acp-Session-Id is too long")
        if rule.scope is Scope.SESSION and session is not None:
            entry = self.sessions.get(session)
            if entry is None or not entry.owned:
                raise Refusal(
                    409,
                    -32600,
                    f"session {session[:64]!r} was not created or loaded on this connection",
                )
        if envelope.is_request:
            key = id_key(envelope.id)
            if key is not None and len(key) > limits.max_id_length:
                raise Refusal(400, -32600, "the request id is too long")
            if len(self.pending) >= limits.max_pending_requests:
                raise Refusal(
                    429, -32600, f"over {limits.max_pending_requests} requests pending"
                )
            if key in self.pending:
                raise Refusal(400, -32600, "a request with this id is pending")
            method = envelope.method
            if method in _MAKING or (
                method in ESTABLISHING and session not in self.sessions
            ):
                self._check_session_room()

    def _check_session_room(self) -> None:
        """Refuse one more session: those named and those reserved (a
        session-scoped GET or a ``session/load`` not answered yet, a
        ``session/new`` or ``session/fork`` pending) count alike, so
        concurrent requests never get past the bound."""
        limit = self.limits.max_sessions_per_connection
        if len(self.sessions) + self._making >= limit:
            raise Refusal(429, -32600, f"over {limit} sessions on this connection")

    def reserve(self, session: str) -> Outbox:
        """The outbox of a session stream (reserving a session not owned yet).

        A session-scoped GET may come before the ``session/load`` that attaches
        its session (the RFD's resume flow): the stream then carries nothing
        until the connection owns the session, and ends if the load fails.
        """
        if len(session) > self.limits.max_id_length:
            raise Refusal(400, -32600, "Acp-Session-Id is too long")
        entry = self.sessions.get(session)
        if entry is None:
            self._check_session_room()
            limits = self.limits
            entry = _Session(Outbox(limits.max_queued_events, self.budget), False)
            self.sessions[session] = entry
        return entry.outbox

    async def send(self, envelope: Envelope, rule: PostRule, line: bytes) -> None:
        """Check the message, then write it to the agent as one line."""
        self.check(envelope, rule)
        if envelope.is_request and isinstance(envelope.method, str):
            key = id_key(envelope.id)
            if rule.scope is Scope.REATTACH and rule.session is not None:
                self.reserve(rule.session)
            if key is not None:
                self.pending[key] = _Pending(envelope.method, rule.session)
                if envelope.method in _MAKING:
                    self._making += 1
        await self.write(line)

    async def write(self, line: bytes) -> None:
        """Write one message line to the agent (whole, never interleaved).

        One writer at a time: a flag, and a :class:`Signal` made only when a
        second writer has to wait (no lock per idle connection).
        """
        if b"\n" in line or b"\r" in line:
            line = msgspec.json.encode(msgspec.json.decode(line))
        self.last_active = anyio.current_time()
        while self._writing:
            written = self._written
            if written is None:
                written = self._written = Signal()
            await written.wait()
        self._writing = True
        try:
            await self.agent.stream.send(line + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            raise Refusal(404, -32600, "the connection's agent has ended") from None
        finally:
            self._writing = False
            written = self._written
            if written is not None:
                self._written = None
                written.wake()

    async def initialize(self, envelope: Envelope, line: bytes) -> bytes:
        """Write ``initialize`` and wait for the agent's answer (bounded)."""
        self._initialize_key = id_key(envelope.id)
        initialized = self._initialized = anyio.Event()
        try:
            await self.write(line)
            with anyio.fail_after(self.limits.initialize_seconds):
                await initialized.wait()
        finally:
            self._initialized = None
        assert self._initialize_answer is not None
        answer, self._initialize_answer = self._initialize_answer, None
        return answer

    # -- lifetime ----------------------------------------------------------

    async def close(self, reason: str, *, drop: bool = False) -> None:
        """End the agent and every stream (idempotent).

        ``drop``: what is queued or being sent is dropped and every stream's
        send abandoned at once (a reader that does not read); else the
        streams get ``FLUSH_SECONDS`` to send what is queued.
        """
        if self.closed:
            return
        self.dropped = drop
        self.closed = True
        if reason:
            log.info("connection %s closed: %s", self.id, reason[:200])
        for outbox in self.outboxes():
            if drop:
                outbox.discard()
            else:
                outbox.close()
        for scope in self._sends:
            self._abandon(scope)
        await self.agent.aclose()

    @contextmanager
    def abandoning(self, scope: anyio.CancelScope) -> Generator[None, None, None]:
        """Within it, ``scope`` (a stream's sends) is cancelled once the
        connection closes: at once when it dropped what it held (a reader that
        does not read), else ``FLUSH_SECONDS`` later (what was queued goes out
        first).  No task waits for it: :meth:`close` does it."""
        if self.closed:
            self._abandon(scope)
        self._sends.add(scope)
        try:
            yield
        finally:
            self._sends.discard(scope)

    def _abandon(self, scope: anyio.CancelScope) -> None:
        if self.dropped:
            scope.cancel()
        else:
            scope.deadline = min(scope.deadline, anyio.current_time() + FLUSH_SECONDS)


class Registry:
    """The server's connections by id, bounded by ``max_connections``."""

    def __init__(self, launcher: AgentLauncher, limits: HttpLimits) -> None:
        self.launcher = launcher
        self.limits = limits
        self.connections: dict[str, Connection] = {}
        #: connections whose agent is starting: counted against ``max_connections``
        self.launching = 0
        self.task_group: anyio.abc.TaskGroup | None = None

    def get(self, connection_id: str | None) -> Connection | None:
        """The open connection of that id, if any."""
        if connection_id is None:
            return None
        connection = self.connections.get(connection_id)
        if connection is None or connection.closed:
            return None
        return connection

    async def create(self, *, single_stream: bool) -> Connection:
        """A new connection with its agent running (:class:`Refusal` if full)."""
        task_group = self.task_group
        if task_group is None:
            raise Refusal(
                503,
                -32603,
                "the server was not started (the ASGI lifespan did not run)",
            )
        # counted when reserved: the launch awaits (a process starting), and
        # every create meanwhile sees this one
        if len(self.connections) + self.launching >= self.limits.max_connections:
            raise Refusal(
                503, -32600, f"over {self.limits.max_connections} connections"
            )
        self.launching += 1
        try:
            handle = await self.launcher.launch(
                task_group, self.limits.close_grace_seconds
            )
        finally:
            self.launching -= 1
        connection = Connection(
            secrets.token_urlsafe(18), handle, self.limits, single_stream=single_stream
        )
        self.connections[connection.id] = connection
        task_group.start_soon(self._run, connection)
        return connection

    async def _run(self, connection: Connection) -> None:
        """The connection's one task: its pump, and its agent when the agent
        runs in this process (:meth:`AgentHandle.run`)."""
        # whatever fails here ends this connection, never the server's task group
        try:
            await connection.agent.run(connection.pump)
        except Exception:
            log.exception("connection %s failed", connection.id)
        finally:
            self.connections.pop(connection.id, None)
            if not connection.closed:  # the agent failed before its pump ran
                await connection.close("its agent failed")

    async def sweep(self) -> None:
        """Close idle and stalled connections, forever (run in the server's
        task group): a stalled one (:meth:`Connection.stalled`) with what it
        holds dropped at once; and wake each SSE reader quiet for
        ``keepalive_seconds`` (:meth:`Outbox.nudge`), which sends a keepalive
        comment."""
        limits = self.limits
        idle, stall = limits.idle_seconds, limits.stall_seconds
        keepalive = limits.keepalive_seconds
        while True:
            await anyio.sleep(min(idle / 4, stall / 4, keepalive / 3, 5.0))
            now = anyio.current_time()
            for connection in list(self.connections.values()):
                if connection.closed:
                    continue
                if connection.open_streams and not connection.single_stream:
                    for outbox in connection.outboxes():
                        if outbox.has_reader and now - outbox.quiet_since >= keepalive:
                            outbox.nudge()
                if connection.stalled(now):
                    reason = f"a reader kept a message waiting over {stall} s"
                    self._close_soon(connection, reason, drop=True)
                elif (
                    connection.open_streams == 0 and now - connection.last_active > idle
                ):
                    self._close_soon(connection, f"idle for {idle} s")

    def _close_soon(
        self, connection: Connection, reason: str, *, drop: bool = False
    ) -> None:
        task_group = self.task_group
        if task_group is None:
            return
        task_group.start_soon(self._close, connection, reason, drop)

    @staticmethod
    async def _close(connection: Connection, reason: str, drop: bool) -> None:
        try:
            await connection.close(reason, drop=drop)
        except Exception:  # ends this connection only
            log.exception("connection %s failed to close", connection.id)

    async def close_all(self) -> None:
        """Close every connection at once (server shutdown): each agent is
        ended by its own ``acp_host.ShutdownPlan`` concurrently, so the whole
        takes one agent's plan (at most twice ``close_grace_seconds``), not
        the sum of them, within the server's shutdown timeout."""
        async with anyio.create_task_group() as task_group:
            for connection in list(self.connections.values()):
                task_group.start_soon(connection.close, "the server is shutting down")
