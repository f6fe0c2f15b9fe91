"""What the inspector knows of a connection, updated by every message seen.

:class:`ConnectionState` is the rules' shared memory: the negotiated version,
both sides' features, the requests each side has pending, the sessions the
agent made known, and each session's prompt turn.  Rules read it *before*
:meth:`ConnectionState.apply` records the message they are looking at.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._features import AgentFeatures, ClientFeatures, agent_features, client_features
from ._message import CLIENT, Direction, Message, as_list, as_obj, id_key

__all__ = ["ConnectionState", "Pending", "Turn"]

#: Requests whose params name a session that becomes known with the request.
_OPENS_SESSION_BY_PARAMS = frozenset({"session/load", "session/resume"})
#: Requests whose result names a new session.
_OPENS_SESSION_BY_RESULT = frozenset({"session/new", "session/fork"})


@dataclass(slots=True)
class Pending:
    """A request waiting for its response."""

    method: str
    params: dict[str, Any]
    index: int
    time: float
    #: for a permission request: whether its session was cancelled after it
    cancelled_after: bool = False


@dataclass(slots=True)
class Turn:
    """A session's current or last prompt turn."""

    request_key: str
    index: int
    cancelled: bool = False  # session/cancel (or close) sent during the turn
    ended: bool = False
    stop_reason: str | None = None
    end_index: int = 0


@dataclass(slots=True)
class ConnectionState:
    """The connection as the rules see it."""

    requested_version: int | None = None
    version: int | None = None  # negotiated: from the initialize answer
    initialize_key: str | None = None
    client: ClientFeatures = field(default_factory=ClientFeatures)
    agent: AgentFeatures = field(default_factory=AgentFeatures)
    #: pending requests by sender: "to_agent" (the client's) and "from_agent"
    pending: dict[Direction, dict[str, Pending]] = field(
        default_factory=lambda: {"to_agent": {}, "from_agent": {}}
    )
    sessions: set[str] = field(default_factory=set[str])
    turns: dict[str, Turn] = field(default_factory=dict[str, Turn])
    loading: dict[str, int] = field(default_factory=dict[str, int])  # sid -> count

    @property
    def initialized(self) -> bool:
        return self.version is not None

    @property
    def current_version(self) -> int:
        """The negotiated version, else the one the client asked for, else 1."""
        return self.version or self.requested_version or 1

    def pending_for(self, msg: Message) -> Pending | None:
        """The request a response answers (sent the other way), if any."""
        if msg.kind != "response":
            return None
        other: Direction = "from_agent" if msg.direction == CLIENT else "to_agent"
        return self.pending[other].get(id_key(msg.id))

    def apply(self, msg: Message) -> None:
        """Record ``msg`` (after the rules have looked at it)."""
        if msg.kind == "request":
            assert msg.method is not None
            self._request(msg)
        elif msg.kind == "notification":
            self._notification(msg)
        else:
            self._response(msg)

    def _request(self, msg: Message) -> None:
        method = msg.method or ""
        key = id_key(msg.id)
        self.pending[msg.direction][key] = Pending(
            method, msg.params, msg.index, msg.time
        )
        if msg.direction != CLIENT:
            return
        sid = msg.session_id
        if method == "initialize":
            version = msg.params.get("protocolVersion")
            if isinstance(version, int) and not isinstance(version, bool):
                self.requested_version = version
            self.initialize_key = key
        elif method == "session/prompt" and sid is not None:
            self.turns[sid] = Turn(key, msg.index)
        elif method in _OPENS_SESSION_BY_PARAMS and sid is not None:
            self.sessions.add(sid)
            if method == "session/load":
                self.loading[sid] = self.loading.get(sid, 0) + 1
        elif method == "session/close" and sid is not None:
            self._cancel(sid)

    def _notification(self, msg: Message) -> None:
        sid = msg.session_id
        if msg.direction == CLIENT and msg.method == "session/cancel" and sid:
            self._cancel(sid)

    def _cancel(self, sid: str) -> None:
        turn = self.turns.get(sid)
        if turn is not None and not turn.ended:
            turn.cancelled = True
        for pending in self.pending["from_agent"].values():
            if (
                pending.method == "session/request_permission"
                and pending.params.get("sessionId") == sid
            ):
                pending.cancelled_after = True

    def _response(self, msg: Message) -> None:
        other: Direction = "from_agent" if msg.direction == CLIENT else "to_agent"
        key = id_key(msg.id)
        pending = self.pending[other].pop(key, None)
        if pending is None or other != CLIENT:
            return
        sid = pending.params.get("sessionId")
        result = as_obj(msg.result)  # pyright: ignore[reportUnknownVariableType]
        ok = msg.error is None
        method = pending.method
        if method == "initialize" and ok:
            version = result.get("protocolVersion")
            if isinstance(version, int) and not isinstance(version, bool):
                self.version = version
                self.agent = agent_features(version, result)
                self.client = client_features(version, pending.params)
        elif method in _OPENS_SESSION_BY_RESULT and ok:
            new = result.get("sessionId")
            if isinstance(new, str):
                self.sessions.add(new)
        elif method == "session/prompt" and isinstance(sid, str):
            turn = self.turns.get(sid)
            if turn is not None and turn.request_key == key:
                turn.ended = True
                turn.end_index = msg.index
                reason = result.get("stopReason")
                turn.stop_reason = reason if isinstance(reason, str) else None
        elif method == "session/load" and isinstance(sid, str):
            left = self.loading.get(sid, 1) - 1
            if left:
                self.loading[sid] = left
            else:
                self.loading.pop(sid, None)
            if not ok:
                self.sessions.discard(sid)
        elif method == "session/resume" and isinstance(sid, str) and not ok:
            self.sessions.discard(sid)
        elif method == "session/list" and ok:
            for item in as_list(result.get("sessions")):
                sid = as_obj(item).get("sessionId")
                if isinstance(sid, str):
                    self.sessions.add(sid)
