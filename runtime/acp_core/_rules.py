"""The ACP rules of each side, as objects: what the engine asks, at which step.

:class:`AgentRules` and :class:`ClientRules` hold one side's state and
answer the engine's questions at fixed steps (a request arrived, is about to
run, was answered; a call is sent, its answer arrived).  Each is made of
small rules, each a record testable on its own:

- :class:`InitializeGate` (agent): nothing but ``initialize`` until it was
  answered successfully; a second ``initialize`` refused; a failed one may be
  retried.  The client's gate is ``ClientRules.initialized``: nothing of the
  agent's is served before its ``initialize`` answer.
- :class:`VersionOffer`: which version to speak (the agent picks the
  requested version if offered, else its latest; the client accepts the
  answered version only if it offered it).
- :class:`SessionCancel`: the table's ``cancel="session"`` requests by
  session (the agent's prompts, the client's permission requests), cancelled
  by what the rows say cancels them (``cancels``: ``session/cancel`` and
  ``session/close`` received; ``SentRule.cancels``: the client's own
  ``session/cancel`` sent) and answered as their row's ``cancelled`` says
  (``stopReason: "cancelled"``, the ``cancelled`` outcome).
- capability and path rules (:mod:`acp_core._capabilities`): calls the peer
  did not advertise are refused before they are sent; requests for what
  this side did not advertise are refused at receipt.

A rule a version's schema cannot serve is skipped with one WARNING
(:mod:`acp_core._support`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final, Literal, cast

import msgspec

from . import _handlers
from ._capabilities import (
    CLIENT_CHECKED,
    AgentCallChecks,
    ReceivedCallChecks,
    agent_capabilities,
    check_client_call,
    check_elicitation_received,
    check_incoming,
    client_capabilities,
)
from ._errors import (
    INVALID_REQUEST,
    ProtocolVersionError,
    RequestError,
    not_initialized,
)
from ._records import Call, Running
from ._schema import MethodSpec, Schema, draft_of, other_draft, protocol_module
from ._support import support
from ._table import (
    AGENT_SENT,
    AGENT_TABLE,
    CLIENT_SENT,
    CLIENT_TABLE,
    DEFAULT_RULE,
    MethodRule,
    SentRule,
)

__all__ = [
    "AgentRules",
    "ClientRules",
    "InitializeGate",
    "SessionCancel",
    "VersionOffer",
    "peek_protocol_version",
]

INITIALIZE: Final = "initialize"


def _handlers_where(table: Mapping[str, MethodRule], field: str) -> frozenset[str]:
    """The handler names of ``table`` whose rule has ``field`` true."""
    return frozenset(handler for handler, rule in table.items() if getattr(rule, field))


#: The sets of the default tables (never changed), built once per process
#: rather than by each connection's rules object.
_DEFAULT_WHERE: Final = {
    (id(table), field): _handlers_where(table, field)
    for table in (AGENT_TABLE, CLIENT_TABLE)
    for field in ("check", "watched")
}


def _handlers_of(table: Mapping[str, MethodRule], field: str) -> frozenset[str]:
    """:func:`_handlers_where`, the default tables' built once."""
    if table is AGENT_TABLE or table is CLIENT_TABLE:
        return _DEFAULT_WHERE[id(table), field]
    return _handlers_where(table, field)


class _VersionPeek(msgspec.Struct, rename="camel"):
    protocol_version: Any = None


_peek_decoder = msgspec.json.Decoder(_VersionPeek)


def peek_protocol_version(raw: bytes | msgspec.Raw) -> Any:
    """``protocolVersion`` of an initialize request or response, if readable."""
    try:
        return _peek_decoder.decode(raw).protocol_version
    except msgspec.MsgspecError:
        return None


class VersionOffer:
    """The protocol versions one side offers, and the draft spoken for each
    version that has several (`draft_of` of its handler factory)."""

    __slots__ = ("drafts", "versions")

    def __init__(self, versions: Collection[int]) -> None:
        if not versions:
            raise ValueError("offer at least one protocol version")
        self.versions = frozenset(versions)
        #: version -> module name (``"v2_alpha0"``) where the factory says one
        self.drafts: dict[int, str] = {}
        if isinstance(versions, Mapping):
            offered = cast("Mapping[int, object]", versions)
            for version, factory in offered.items():
                draft = draft_of(factory)
                if draft is not None:
                    self.drafts[version] = draft

    @property
    def latest(self) -> int:
        return max(self.versions)

    def choose(self, requested: Any) -> int:
        """The agent's rule: the requested version if offered, else our latest."""
        if (
            isinstance(requested, int)
            and not isinstance(requested, bool)
            and requested in self.versions
        ):
            return requested
        return self.latest

    def accept(self, answered: Any) -> int:
        """The client's rule: the agent's answered version, if offered."""
        if (
            isinstance(answered, int)
            and not isinstance(answered, bool)
            and answered in self.versions
        ):
            return answered
        raise ProtocolVersionError(
            f"the agent answered protocol version {answered!r}; "
            f"this client speaks {sorted(self.versions)}"
        )


class InitializeGate:
    """The agent's initialization state: ``waiting``, ``running`` or ``done``.

    Requests that arrive while ``initialize`` runs (a client that pipelines)
    are accepted and wait for its answer (:meth:`holds`); if it fails they
    are refused when their turn comes (:meth:`refuse_start`).
    """

    __slots__ = ("state",)

    def __init__(self) -> None:
        self.state: Literal["waiting", "running", "done"] = "waiting"

    def refuse(self, name: str, request: bool) -> RequestError | None:
        """The error answering (or dropping, for a notification) ``name`` now."""
        state = self.state
        if name == INITIALIZE and request:
            if state == "waiting":
                return None
            reason = (
                "already initialized" if state == "done" else "initialize in progress"
            )
            return RequestError(INVALID_REQUEST, f"Invalid request: {reason}")
        if state != "waiting":
            return None  # running: a request waits for the answer (holds)
        return not_initialized(name, "send initialize first")

    def holds(self, handler: str) -> bool:
        """Whether a request accepted now must wait before it runs."""
        return self.state == "running" and handler != INITIALIZE

    def refuse_start(self, name: str, handler: str) -> RequestError | None:
        """The error answering an accepted request about to run, if any."""
        if self.state == "done" or handler == INITIALIZE:
            return None
        return not_initialized(name, "initialize failed")


class SessionCancel:
    """Running requests of the table's ``cancel="session"`` rows, by session,
    cancelled together.

    The agent's prompts (``session/cancel`` and ``session/close`` cancel
    them); the client's permission requests (its own ``session/cancel``
    answers them ``cancelled``, and those arriving until that session's turn
    is answered too: ``cancelled_sessions``).
    """

    __slots__ = ("cancelled_sessions", "running")

    def __init__(self) -> None:
        self.running: dict[str, set[Running]] = {}
        self.cancelled_sessions: set[str] = set()

    def add(self, running: Running) -> None:
        session_id = running.session_id
        if session_id is not None:
            self.running.setdefault(session_id, set()).add(running)
            if session_id in self.cancelled_sessions:
                running.cancel("session")

    def discard(self, running: Running) -> None:
        if running.session_id is not None:
            live = self.running.get(running.session_id)
            if live is not None:
                live.discard(running)
                if not live:
                    del self.running[running.session_id]

    def cancel(self, session_id: str) -> None:
        """Cancel every request of ``session_id`` running now."""
        for running in list(self.running.get(session_id, ())):
            running.cancel("session")


class _SessionRules:
    """What both sides do by their tables (``_table``): the session-cancel
    rule at receipt, at the end of a request, when sending; the answer of a
    cancelled request.  No method is named here: the rows say."""

    def __init__(
        self, table: Mapping[str, MethodRule], sent: Mapping[str, SentRule]
    ) -> None:
        #: The rules of each method this side receives (``_table``).
        self.table = table
        #: What sending each method does (``_table.SentRule``).
        self.sent_table = sent
        #: Handlers :meth:`check_received` looks at (``check``), and those
        #: :meth:`notification_received` sees (``watched``).
        self.checked = _handlers_of(table, "check")
        self.watched_notifications = _handlers_of(table, "watched")
        self.session_cancel = SessionCancel()

    def rule(self, handler: str) -> MethodRule:
        """The row of ``handler``'s method (the default when not listed)."""
        return self.table.get(handler, DEFAULT_RULE)

    def request_received(self, running: Running) -> None:
        rule = self.rule(running.method.handler)
        if rule.cancel == "session":
            self.session_cancel.add(running)
        elif rule.cancels and running.session_id is not None:  # session/close
            self.session_cancel.cancel(running.session_id)

    def _request_ended(self, running: Running) -> None:
        rule = self.rule(running.method.handler)
        if rule.cancel == "session":
            self.session_cancel.discard(running)
        elif rule.cancels and running.session_id is not None:  # session/close
            self.session_cancel.running.pop(running.session_id, None)

    def notification_received(self, method: MethodSpec, params: Any) -> None:
        """A ``watched`` notification of the table, at receipt (``session/cancel``)."""
        if self.rule(method.handler).cancels:
            self.session_cancel.cancel(params.session_id)

    def cancelled_result(
        self, schema: Schema, running: Running, result: Any = None
    ) -> bytes | None:
        """The answer of a session-cancelled request (its row's ``cancelled``),
        ``None``: answered as any cancelled request.

        A result its handler returned after the cancel keeps its other
        fields (``_meta``, usage): the row's ``field`` set to ``"cancelled"``,
        or only its ``_meta`` kept.
        """
        answer = self.rule(running.method.handler).cancelled
        if answer is None:
            return None
        known = support(schema.module)
        if not getattr(known, answer.support):
            known.warn(
                f"a cancelled {running.method.name} is answered like any "
                "cancelled request",
                answer.why,
            )
            return None
        if answer.field is not None:
            if isinstance(result, msgspec.Struct) and hasattr(result, answer.field):
                return schema.encode(
                    msgspec.structs.replace(result, **{answer.field: "cancelled"})
                )
            return answer.result
        meta = getattr(result, "meta", None)
        if isinstance(meta, dict):  # returned normally after the cancel: keep its _meta
            return b'%b,"_meta":%b}' % (answer.result[:-1], msgspec.json.encode(meta))
        return answer.result

    def _sent(self, method: MethodSpec, params: Any) -> None:
        rule = self.sent_table.get(method.handler)
        if rule is None:
            return
        cancel = self.session_cancel
        if rule.cancels:
            cancel.cancelled_sessions.add(params.session_id)
            cancel.cancel(params.session_id)
        elif rule.turn:
            cancel.cancelled_sessions.discard(params.session_id)

    def call_finished(self, call: Call) -> None:
        rule = self.sent_table.get(call.method.handler)
        if rule is not None and rule.turn:
            self.session_cancel.cancelled_sessions.discard(call.params.session_id)


class AgentRules(_SessionRules):
    """The agent side: serves ``AGENT_METHODS``, calls the client.

    ``table`` / ``sent``: the rules of what it receives and sends (the
    module's ``AGENT_TABLE`` / ``AGENT_SENT`` by default).
    """

    side: Final = "agent"

    def __init__(
        self,
        versions: Collection[int],
        *,
        table: Mapping[str, MethodRule] = AGENT_TABLE,
        sent: Mapping[str, SentRule] = AGENT_SENT,
    ) -> None:
        super().__init__(table, sent)
        self.offer = VersionOffer(versions)
        self.gate = InitializeGate()
        #: Notifications are handled (``initialize`` received; the engine
        #: asks :meth:`refuse` about notifications only while this is false).
        self.serving = False
        #: Methods refused whatever the state (none on this side).
        self.refusals: dict[str, RequestError] = {}
        self.protocol_version: int | None = None
        self.client_capabilities: Any = None

    @property
    def init_state(self) -> Literal["waiting", "running", "done"]:
        return self.gate.state

    # -- incoming --------------------------------------------------------------

    def refuse(self, name: str, request: bool) -> RequestError | None:
        return self.gate.refuse(name, request)

    def negotiate(
        self, method: MethodSpec, raw: msgspec.Raw | msgspec.UnsetType
    ) -> int | None:
        """The version this request picks, if it is the ``initialize`` step
        (the requested version if offered, else the latest: :class:`VersionOffer`)."""
        if method.handler != INITIALIZE or self.gate.state != "waiting":
            return None
        return self.offer.choose(
            None if raw is msgspec.UNSET else peek_protocol_version(raw)
        )

    def begin_initialize(self, version: int, params: Any) -> None:
        """``initialize`` (params decoded in ``version``) goes to its handler."""
        self.protocol_version = version
        self.client_capabilities = client_capabilities(params)
        self.gate.state = "running"
        self.serving = True

    def advertised(self, schema: Schema) -> None:
        """The version spoken changed to ``schema``'s (chosen here: nothing to read)."""

    def reset(self) -> None:
        """Back to waiting for ``initialize`` (the last one failed)."""
        self.gate.state = "waiting"
        self.serving = False
        self.protocol_version = None
        self.client_capabilities = None

    def check_received(self, schema: Schema, method: MethodSpec, params: Any) -> None:
        """Receiver rules beyond the params' type (both sides: absolute paths)."""
        check_incoming(schema.version, method.handler, params, schema.module)

    def holds(self, method: MethodSpec) -> bool:
        """Whether a request accepted now waits before it runs (``initialize`` runs)."""
        return self.gate.holds(method.handler)

    def request_started(self, running: Running) -> None:
        """Raises the :class:`RequestError` answering it if it may not run."""
        method = running.method
        refusal = self.gate.refuse_start(method.name, method.handler)
        if refusal is not None:
            raise refusal

    def request_finished(self, running: Running) -> None:
        if self.rule(running.method.handler).gate == "opens":
            if self.gate.state != "done":
                self.reset()  # failed or cancelled: initialize may be sent again
            return
        self._request_ended(running)

    def answer(self, method: MethodSpec, result: Any) -> Any:
        """A handler's result, checked (``HandlerResultError``), as it is sent.

        ``initialize``: its ``protocolVersion`` is the negotiated one, and
        once its answer is checked the connection is initialized.
        """
        result = _handlers.checked_result(method, result)
        if method.handler == INITIALIZE and self.gate.state == "running":
            if getattr(result, "protocol_version", None) != self.protocol_version:
                result = msgspec.structs.replace(
                    result, protocol_version=self.protocol_version
                )
            self.gate.state = "done"
        return result

    # -- outgoing --------------------------------------------------------------

    def check_outgoing(self, schema: Schema, method: MethodSpec, params: Any) -> None:
        """Refuse (``CapabilityError``) a call the client did not advertise."""
        if method.handler in CLIENT_CHECKED:
            check_client_call(
                schema.version,
                method.handler,
                params,
                self.client_capabilities,
                schema.module,
            )

    def sent(self, schema: Schema, method: MethodSpec, params: Any) -> None:
        self._sent(method, params)

    def response_received(self, schema: Schema, call: Call, result: Any) -> int | None:
        return None

    def call_released(self, call: Call) -> None:
        pass


class ClientRules(_SessionRules):
    """The client side: serves ``CLIENT_METHODS``, calls the agent.

    ``table`` / ``sent``: the rules of what it receives and sends (the
    module's ``CLIENT_TABLE`` / ``CLIENT_SENT`` by default).
    """

    side: Final = "client"

    def __init__(
        self,
        versions: Collection[int],
        *,
        table: Mapping[str, MethodRule] = CLIENT_TABLE,
        sent: Mapping[str, SentRule] = CLIENT_SENT,
    ) -> None:
        super().__init__(table, sent)
        self.offer = VersionOffer(versions)
        #: Whether the agent answered ``initialize`` successfully (its calls are served).
        self.initialized = False
        self.serving = False  # as initialized (AgentRules.serving)
        self.protocol_version: int | None = None
        self.client_capabilities: Any = None
        self.agent_capabilities: Any = None
        self.init_response: Any = None
        # The initialize request(s) sent, by version; merged: by offer_initialize().
        self.init_requests: dict[int, Any] = {}
        self.merged_init = False
        self._agent_checks: AgentCallChecks | None = None
        # Agent methods the capabilities this client advertised refuse, by
        # wire name (one dict lookup per incoming message).
        self.refusals: dict[str, RequestError] = {}

    # -- incoming --------------------------------------------------------------

    def refuse(self, name: str, request: bool) -> RequestError | None:
        if not self.initialized:
            return not_initialized(name, "the client has no initialize answer yet")
        return self.refusals.get(name)  # fs/*, terminal/* not advertised

    def negotiate(
        self, method: MethodSpec, raw: msgspec.Raw | msgspec.UnsetType
    ) -> int | None:
        """The client picks no version at receipt (see :meth:`response_received`)."""
        return None

    def begin_initialize(self, version: int, params: Any) -> None:
        """Not reached: a client is sent no ``initialize``."""

    def reset(self) -> None:
        """Not reached: a client runs no ``initialize``."""

    def check_received(self, schema: Schema, method: MethodSpec, params: Any) -> None:
        check_incoming(schema.version, method.handler, params, schema.module)
        if method.handler == "elicitation_create":
            check_elicitation_received(params, self.client_capabilities, schema.module)

    def holds(self, method: MethodSpec) -> bool:
        return False

    def request_started(self, running: Running) -> None:
        pass

    def request_finished(self, running: Running) -> None:
        self._request_ended(running)

    def answer(self, method: MethodSpec, result: Any) -> Any:
        return _handlers.checked_result(method, result)

    # -- outgoing --------------------------------------------------------------

    def check_outgoing(self, schema: Schema, method: MethodSpec, params: Any) -> None:
        """Refuse (``CapabilityError``) a call the agent did not advertise."""
        checks = self._agent_checks
        if (
            checks is None
            or checks.caps is not self.agent_capabilities
            or checks.version != schema.version
        ):
            checks = self._agent_checks = AgentCallChecks(
                schema.version, self.agent_capabilities, schema.module
            )
        checks.check(method.handler, params)

    def offer_initialize(self, requests: dict[int, Any]) -> None:
        """The requests of a merged multi-version ``initialize`` (``merge_initialize``)."""
        self.init_requests = requests
        self.merged_init = True

    def sent(self, schema: Schema, method: MethodSpec, params: Any) -> None:
        handler = method.handler
        if handler == INITIALIZE:
            if not isinstance(params, msgspec.Raw):  # one request, sent as given
                self.init_requests = {schema.version: params}
                self.merged_init = False
            self.advertised(schema)
        self._sent(method, params)

    def advertised(self, schema: Schema) -> None:
        """Read what this client advertised to an agent of ``schema.version``."""
        requests = self.init_requests
        if schema.version in requests or self.merged_init:
            self.client_capabilities = client_capabilities(requests.get(schema.version))
        refusals = ReceivedCallChecks(schema, self.client_capabilities).refusals
        incoming = schema.incoming
        self.refusals = {  # the methods whose gate is "advertised" (the table)
            name: error
            for name, error in refusals.items()
            if self.rule(incoming[name].handler).gate == "advertised"
        }

    def response_received(self, schema: Schema, call: Call, result: Any) -> int | None:
        """The version the agent's ``initialize`` answer picks (raises if not offered)."""
        if call.method.handler != INITIALIZE:
            return None
        version = self.offer.accept(peek_protocol_version(result))
        ours = protocol_module(version, self.offer.drafts.get(version))
        other = other_draft(ours, "result", result)
        if other is not None:  # the same version number, another draft
            raise ProtocolVersionError(f"initialize: {other}")
        self.protocol_version = version
        return version

    def call_released(self, call: Call) -> None:
        if (
            call.method.handler == INITIALIZE
            and call.failure is None
            and call.value is not None
        ):
            self.init_response = call.value
            self.agent_capabilities = agent_capabilities(call.value)
            self.initialized = self.serving = True
