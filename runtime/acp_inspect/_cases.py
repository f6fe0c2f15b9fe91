"""The conformance suite: one :class:`Case` per behaviour, each naming its spec line.

A case runs against a fresh agent process (so a hung or crashed agent fails
that case only) through a :class:`CaseContext`; it ends by returning (pass),
raising :class:`CaseFailed` or :class:`NotApplicable` (the agent did not
advertise what the case needs), or by its timeout (fail).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from ._driver import AgentUnderTest, permission_outcome
from ._message import Message, as_list, as_obj
from ._spec import REFS, Level, SpecRef

__all__ = [
    "CASES",
    "AuthRequired",
    "Case",
    "CaseContext",
    "CaseFailed",
    "NotApplicable",
]

#: JSON-RPC error code of "authentication required" (ACP).
AUTH_REQUIRED = -32000


class CaseFailed(Exception):
    """The agent did not do what the case's spec line asks; ``step``: the
    setup step (``initialize``, ``session/new``) that failed, if it was one."""

    def __init__(self, text: str, step: str = "") -> None:
        super().__init__(text)
        self.step = step


class NotApplicable(Exception):
    """The agent did not advertise what the case needs."""


class AuthRequired(NotApplicable):
    """``session/new`` answered "authentication required" and no ``--auth``
    was given: the session cases do not apply (the spec allows it)."""


@dataclass(slots=True)
class CaseContext:
    """What a case works with."""

    agent: AgentUnderTest
    protocol: int
    cwd: str
    settle: float  # seconds to wait for things that may not come
    oversized_bytes: int
    wait_prompt: str
    init_result: dict[str, Any] = field(default_factory=dict[str, Any])
    #: ``--auth``: the authentication method to run after initialize
    auth: str | None = None
    #: seconds the agent has to exit after its stdin closed
    eof_grace: float = 2.0
    #: seconds of streaming before the mid-turn cancel
    streaming: float = 1.0
    #: the setup step under way (``initialize``, ``session/new``), else ""
    step: str = ""
    #: ``--auth`` named a ``terminal`` method (not run: no authenticate sent)
    terminal_login: bool = False
    #: the prompt that makes the agent elicit (the echo agent's convention)
    elicit_prompt: str = "elicit"

    def expect(self, ok: bool, why: str) -> None:
        if not ok:
            raise CaseFailed(why)

    # -- protocol steps ------------------------------------------------------

    def initialize_params(
        self, version: int | None = None, **caps: Any
    ) -> dict[str, Any]:
        v = version or self.protocol
        key = "capabilities" if v >= 2 else "clientCapabilities"
        return {
            "protocolVersion": v,
            key: caps,
            "clientInfo": {"name": "acp-inspect", "version": "1"},
        }

    async def initialize(self, **caps: Any) -> dict[str, Any]:
        """initialize (and ``--auth``'s authenticate): the agent's answer."""
        self.step = "initialize"
        answer = await self.agent.call("initialize", self.initialize_params(**caps))
        if answer.error is not None:
            raise CaseFailed(f"initialize failed: {answer.error}", "initialize")
        self.init_result = as_obj(answer.result)
        if not isinstance(self.init_result.get("protocolVersion"), int):
            raise CaseFailed(
                "the initialize answer has no protocolVersion", "initialize"
            )
        if self.auth is not None:
            await self.authenticate(self.auth)
        self.step = ""
        return self.init_result

    def auth_methods(self) -> list[dict[str, Any]]:
        return [as_obj(m) for m in as_list(self.init_result.get("authMethods"))]

    async def authenticate(self, method_id: str) -> None:
        """As acp-client does: the method must be offered; an
        ``env_var`` method's variables must be set (the agent inherits them)."""
        self.step = "authenticate"
        method = next(
            (m for m in self.auth_methods() if m.get("id") == method_id), None
        )
        if method is None:
            offered = ", ".join(str(m.get("id")) for m in self.auth_methods()) or "none"
            raise CaseFailed(
                f"--auth {method_id}: not a method of the agent (it offers: {offered})",
                "authenticate",
            )
        if method.get("type") == "terminal":
            # authentication.mdx: a terminal method is a login the client runs
            # on the user's terminal, never an authenticate request (MUST NOT)
            self.terminal_login = True
            self.agent.note(
                f"--auth {method_id}: a terminal method: no authenticate is sent "
                "(its login runs on a user's terminal, which the check has not)"
            )
            return
        missing = [
            str(v.get("name"))
            for v in map(as_obj, as_list(method.get("vars")))
            if v.get("optional") is not True
            and not self.agent.getenv(str(v.get("name")))
        ]
        if missing:
            raise CaseFailed(
                f"--auth {method_id} needs {', '.join(missing)} set in the environment",
                "authenticate",
            )
        answer = await self.agent.call("authenticate", {"methodId": method_id})
        if answer.error is not None:
            raise CaseFailed(f"authenticate failed: {answer.error}", "authenticate")

    @property
    def version(self) -> int:
        v = self.init_result.get("protocolVersion")
        return v if isinstance(v, int) else self.protocol

    def advertises(self, method: str) -> bool:
        return method in self.agent.inspector.state.agent.methods

    def session_params(self, **extra: Any) -> dict[str, Any]:
        return {"cwd": self.cwd, "mcpServers": [], **extra}

    async def new_session(self) -> str:
        self.step = "session/new"
        answer = await self.agent.call("session/new", self.session_params())
        error = answer.error
        if (
            error is not None
            and error.get("code") == AUTH_REQUIRED
            and (self.auth is None or self.terminal_login)
        ):
            ids = ", ".join(str(m.get("id")) for m in self.auth_methods())
            given = (
                f"--auth {self.auth} is a terminal login, which the check cannot run"
                if self.terminal_login
                else "no --auth was given"
            )
            raise AuthRequired(
                f"the agent requires authentication (session/new: {AUTH_REQUIRED}) and {given}"
                + (f" (its methods: {ids})" if ids else "")
            )
        if error is not None:
            raise CaseFailed(f"session/new failed: {error}", "session/new")
        sid = as_obj(answer.result).get("sessionId")
        if not isinstance(sid, str) or not sid:
            raise CaseFailed("session/new answered without a sessionId", "session/new")
        self.step = ""
        return sid

    def prompt_params(self, sid: str, text: str) -> dict[str, Any]:
        return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}

    async def ready(self, **caps: Any) -> str:
        """initialize + session/new: the session id."""
        await self.initialize(**caps)
        return await self.new_session()

    async def quiet(self) -> None:
        """Let late messages arrive (and their requests be answered)."""
        with trio.move_on_after(self.settle):
            await self.agent.wait_for(lambda m: False)


CaseFn = Callable[[CaseContext], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Case:
    """One conformance case: ``key``, a ``title``, the ``spec`` line it
    checks and the ``level`` a failure has (the spec line's unless the case
    checks what an agent is only recommended to do); ``needs``: the setup
    step whose failure makes it pointless (it is then skipped)."""

    key: str
    title: str
    spec: SpecRef
    run: CaseFn
    level: Level | None = None
    #: what it needs to get going: ``none``, ``initialize``, ``session``
    needs: str = "session"

    @property
    def severity(self) -> Level:
        return self.level or self.spec.level


def _is_error(msg: Message, code: int | None = None) -> bool:
    return msg.error is not None and (code is None or msg.error.get("code") == code)


def _answer_text(msg: Message) -> str:
    """An answer as a failure says it (an error without an id member: so)."""
    said = f"{msg.error or msg.result}"
    return f"{said} without an id member" if msg.id_absent else said


# -- JSON-RPC hygiene ---------------------------------------------------------


async def malformed_line(ctx: CaseContext) -> None:
    await ctx.initialize()
    await ctx.agent.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": ')
    answer = await ctx.agent.wait_for(lambda m: m.kind == "response")
    ctx.expect(
        _is_error(answer, -32700) and answer.id is None and not answer.id_absent,
        f"expected -32700 with id null, got {_answer_text(answer)}",
    )
    sid = await ctx.new_session()
    ctx.expect(bool(sid), "the connection did not go on after the malformed line")


async def batch(ctx: CaseContext) -> None:
    await ctx.initialize()
    ids = [ctx.agent.new_id(), ctx.agent.new_id()]
    members = [
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "session/new",
            "params": ctx.session_params(),
        }
        for i in ids
    ]
    from ._driver import _encode  # pyright: ignore[reportPrivateUsage]

    await ctx.agent.send_raw(
        _encode(members), f"a batch of session/new #{ids[0]}, #{ids[1]}"
    )
    got = {m.id for m in [await ctx.agent.response(i) for i in ids]}
    ctx.expect(got == set(ids), "not every batch member was answered")
    batched = [
        e
        for e in ctx.agent.timeline
        if e.dir == "from_agent" and e.text.lstrip().startswith("[")
    ]
    ctx.expect(
        bool(batched), "the batch was answered with separate messages, not an array"
    )


async def empty_batch(ctx: CaseContext) -> None:
    await ctx.initialize()
    await ctx.agent.send_raw(b"[]")
    answer = await ctx.agent.wait_for(lambda m: m.kind == "response")
    ctx.expect(
        _is_error(answer, -32600) and answer.id is None and not answer.id_absent,
        f"expected one -32600 with id null, got {_answer_text(answer)}",
    )


async def oversized_line(ctx: CaseContext) -> None:
    await ctx.initialize()
    rid = ctx.agent.new_id()
    params = ctx.session_params(_meta={"padding": "x" * ctx.oversized_bytes})
    from ._driver import _encode  # pyright: ignore[reportPrivateUsage]

    line = _encode(
        {"jsonrpc": "2.0", "id": rid, "method": "session/new", "params": params}
    )
    await ctx.agent.send_raw(line, f"session/new #{rid} ({len(line)} bytes)")
    await ctx.agent.response(rid)  # any answer: a result or an error
    ctx.expect(
        bool(await ctx.new_session()),
        "the connection did not go on after the long line",
    )


async def unknown_method(ctx: CaseContext) -> None:
    await ctx.initialize()
    await ctx.agent.notify("_acp_inspect/unknown_notification", {})
    answer = await ctx.agent.call("_acp_inspect/unknown_method", {})
    ctx.expect(
        _is_error(answer, -32601),
        f"expected -32601, got {answer.error or answer.result}",
    )


# -- initialize ---------------------------------------------------------------


async def request_before_initialize(ctx: CaseContext) -> None:
    answer = await ctx.agent.call("session/new", ctx.session_params())
    ctx.expect(answer.error is not None, "session/new before initialize was served")


async def negotiation(ctx: CaseContext) -> None:
    result = await ctx.initialize()  # fails without a protocolVersion
    chosen = result.get("protocolVersion")
    assert isinstance(chosen, int)
    ctx.expect(
        chosen <= ctx.protocol or ctx.protocol == 1,
        f"asked for {ctx.protocol}, answered {chosen}",
    )


async def negotiation_unknown_version(ctx: CaseContext) -> None:
    answer = await ctx.agent.call(
        "initialize",
        ctx.initialize_params(version=ctx.protocol) | {"protocolVersion": 99},
    )
    ctx.expect(
        answer.error is None,
        f"initialize with an unknown version failed: {answer.error}",
    )
    chosen = as_obj(answer.result).get("protocolVersion")
    ctx.expect(
        isinstance(chosen, int) and chosen != 99, f"answered {chosen!r} to version 99"
    )


# -- sessions -----------------------------------------------------------------


async def session_new(ctx: CaseContext) -> None:
    await ctx.initialize()
    first, second = await ctx.new_session(), await ctx.new_session()
    ctx.expect(first != second, "two session/new calls got the same sessionId")


async def turn(ctx: CaseContext, sid: str, text: str) -> Message:
    rid = await ctx.agent.request("session/prompt", ctx.prompt_params(sid, text))
    return await ctx.agent.response(rid)


async def session_load(ctx: CaseContext) -> None:
    sid = await ctx.ready()
    if not ctx.advertises("session/load"):
        raise NotApplicable("the agent does not advertise session/load")
    await turn(ctx, sid, "hello")
    await ctx.quiet()
    rid = await ctx.agent.request("session/load", ctx.session_params(sessionId=sid))
    updates: list[Message] = []

    def answered(m: Message) -> bool:
        if m.method == "session/update":
            updates.append(m)
        return m.kind == "response" and m.id == rid

    answer = await ctx.agent.wait_for(answered)
    ctx.expect(answer.error is None, f"session/load failed: {answer.error}")
    ctx.expect(
        any(m.session_id == sid for m in updates),
        "no session/update replayed the conversation before the answer",
    )


async def session_resume(ctx: CaseContext) -> None:
    sid = await ctx.ready()
    if not ctx.advertises("session/resume"):
        raise NotApplicable("the agent does not advertise session/resume")
    await turn(ctx, sid, "hello")
    await ctx.quiet()
    answer = await ctx.agent.call("session/resume", {"sessionId": sid, "cwd": ctx.cwd})
    ctx.expect(answer.error is None, f"session/resume failed: {answer.error}")


async def session_close(ctx: CaseContext) -> None:
    sid = await ctx.ready()
    if not ctx.advertises("session/close"):
        raise NotApplicable("the agent does not advertise session/close")
    rid = await ctx.agent.request(
        "session/prompt", ctx.prompt_params(sid, ctx.wait_prompt)
    )
    await _first_update(ctx, sid)
    close = await ctx.agent.call("session/close", {"sessionId": sid})
    ctx.expect(close.error is None, f"session/close failed: {close.error}")
    answer = await ctx.agent.response(rid)
    reason = as_obj(answer.result).get("stopReason")
    ctx.expect(
        reason == "cancelled",
        f"the prompt running at session/close ended {reason or answer.error}, not cancelled",
    )


async def session_list(ctx: CaseContext) -> None:
    sid = await ctx.ready()
    if not ctx.advertises("session/list"):
        raise NotApplicable("the agent does not advertise session/list")
    answer = await ctx.agent.call("session/list", {})
    ctx.expect(answer.error is None, f"session/list failed: {answer.error}")
    sessions = as_obj(answer.result).get("sessions")
    # the cited line asks for a list; which sessions it holds (a session
    # without a turn, filtered by cwd) it leaves to the agent
    ctx.expect(
        isinstance(sessions, list), "session/list answered without a sessions list"
    )
    listed = any(as_obj(s).get("sessionId") == sid for s in as_list(sessions))
    ctx.agent.note(f"the new session {'is' if listed else 'is not'} listed")


# -- prompt turn, permission, cancellation -----------------------------------


async def prompt_turn(ctx: CaseContext) -> None:
    sid = await ctx.ready()
    answer = await turn(ctx, sid, "hello")
    ctx.expect(answer.error is None, f"session/prompt failed: {answer.error}")
    reason = as_obj(answer.result).get("stopReason")
    ctx.expect(isinstance(reason, str), "the prompt's answer has no stopReason")
    await ctx.quiet()


async def permission_rejected(ctx: CaseContext) -> None:
    sid = await ctx.ready()
    asked: list[Message] = []

    async def reject(agent: AgentUnderTest, msg: Message) -> None:
        if msg.method != "session/request_permission":
            return await _default(agent, msg)
        asked.append(msg)
        await agent.answer(msg, permission_outcome(msg, "reject_once"))

    ctx.agent.responder = reject
    answer = await turn(ctx, sid, "hello")
    if not asked:
        raise NotApplicable("the agent asked no permission in a prompt turn")
    ctx.expect(
        answer.error is None,
        f"the turn failed after a rejected permission: {answer.error}",
    )


async def _default(agent: AgentUnderTest, msg: Message) -> None:
    from ._driver import default_responder

    await default_responder(agent, msg)


async def _first_update(ctx: CaseContext, sid: str) -> None:
    with trio.move_on_after(ctx.settle):
        await ctx.agent.wait_for(
            lambda m: m.method == "session/update" and m.session_id == sid
        )


async def _cancelled_turn(ctx: CaseContext, sid: str, streaming: float) -> bool:
    """A "wait" prompt cancelled after its first update and ``streaming``
    seconds more; whether the cancel was sent (the turn may end first)."""
    rid = await ctx.agent.request(
        "session/prompt", ctx.prompt_params(sid, ctx.wait_prompt)
    )

    def ended(m: Message) -> bool:
        return m.kind == "response" and m.id == rid

    await _first_update(ctx, sid)
    if streaming > 0:
        with trio.move_on_after(streaming):
            await ctx.agent.wait_for(ended)
            return False  # ended on its own
    if any(ended(m) for m in ctx.agent.received()):
        return False
    when = (
        "after its first update"
        if streaming == 0
        else f"after {streaming:g} s of streaming"
    )
    ctx.agent.note(f"session/cancel {when}")
    await ctx.agent.notify("session/cancel", {"sessionId": sid})
    answer = await ctx.agent.wait_for(ended)
    reason = as_obj(answer.result).get("stopReason")
    ctx.expect(
        reason == "cancelled",
        f"the prompt cancelled {when} ended {reason or answer.error}, not cancelled",
    )
    return True


async def cancel_prompt(ctx: CaseContext) -> None:
    """Cancelled at once (after the first update), then mid-turn, as a user
    does (after ``ctx.streaming`` seconds of streaming), in one session."""
    sid = await ctx.ready()
    sent = [await _cancelled_turn(ctx, sid, 0.0)]
    sent.append(await _cancelled_turn(ctx, sid, ctx.streaming))
    if not any(sent):
        raise NotApplicable("the turns ended before session/cancel could be sent")
    await ctx.quiet()


async def cancel_with_pending_permission(ctx: CaseContext) -> None:
    sid = await ctx.ready()
    rid = await ctx.agent.request("session/prompt", ctx.prompt_params(sid, "hello"))
    ask = await ctx.agent.wait_for(
        lambda m: (
            m.method == "session/request_permission"
            or (m.kind == "response" and m.id == rid)
        )
    )
    if ask.kind == "response":
        raise NotApplicable("the agent asked no permission in a prompt turn")
    await ctx.agent.notify("session/cancel", {"sessionId": sid})
    await ctx.agent.answer(ask, {"outcome": {"outcome": "cancelled"}})
    answer = await ctx.agent.response(rid)
    reason = as_obj(answer.result).get("stopReason")
    ctx.expect(
        reason == "cancelled",
        f"the cancelled prompt ended {reason or answer.error}, not cancelled",
    )
    await ctx.quiet()


async def elicitation_outcomes(ctx: CaseContext) -> None:
    """Both modes advertised; the agent's elicitations answered ``decline``
    in one turn, ``cancel`` in the next: each turn still ends."""
    sid = await ctx.ready(elicitation={"form": {}, "url": {}})
    asked: list[Message] = []
    action = "decline"

    async def refuse(agent: AgentUnderTest, msg: Message) -> None:
        if msg.method != "elicitation/create":
            return await _default(agent, msg)
        asked.append(msg)
        await agent.answer(msg, {"action": action})

    ctx.agent.responder = refuse
    for action in ("decline", "cancel"):
        answer = await turn(ctx, sid, ctx.elicit_prompt)
        if not asked:
            raise NotApplicable(
                f"the agent asked no elicitation (prompt {ctx.elicit_prompt!r})"
            )
        reason = as_obj(answer.result).get("stopReason")
        ctx.expect(
            isinstance(reason, str),
            f"the turn whose elicitation was answered {action} ended "
            f"{answer.error or 'without a stopReason'}",
        )
    await ctx.quiet()


# -- capabilities, EOF --------------------------------------------------------


async def capabilities_honoured(ctx: CaseContext) -> None:
    sid = await ctx.ready()  # no client capability advertised
    await turn(ctx, sid, "read /etc/hostname")
    await ctx.quiet()
    # the rules (unadvertised-client-method, terminal-auth-not-advertised) judge


async def eof_exit(ctx: CaseContext) -> None:
    await ctx.ready()
    await ctx.agent.close_stdin()
    with trio.move_on_after(ctx.eof_grace):
        await ctx.agent.exited.wait()
        return
    raise CaseFailed(
        f"the agent was still running {ctx.eof_grace:g} s after its stdin closed (--eof-grace)"
    )


CASES: tuple[Case, ...] = (
    Case("jsonrpc.malformed-line", "a line that is not JSON gets -32700 (id null) and the connection goes on", REFS["jsonrpc-parse-error"], malformed_line),
    Case("jsonrpc.batch", "a batch of two requests is answered with an array", REFS["jsonrpc-batch"], batch),
    Case("jsonrpc.empty-batch", "an empty batch gets one -32600 with id null", REFS["jsonrpc-invalid-request"], empty_batch, needs="initialize"),
    Case("jsonrpc.oversized-line", "a very long request is answered and the connection goes on", REFS["jsonrpc-response-required"], oversized_line),
    Case("jsonrpc.unknown-method", "an unknown method gets -32601; an unknown notification is ignored", REFS["unknown-method"], unknown_method, needs="initialize"),
    Case("initialize.first", "a request before initialize is not served", REFS["initialize-first"], request_before_initialize, level="SHOULD", needs="none"),
    Case("initialize.negotiation", "the answer names the version chosen", REFS["initialize-response"], negotiation, needs="none"),
    Case("initialize.unknown-version", "an unknown requested version gets the agent's latest", REFS["version-negotiation"], negotiation_unknown_version, needs="none"),
    Case("session.new", "session/new answers a unique sessionId", REFS["session-id"], session_new, needs="initialize"),
    Case("session.load", "session/load replays the conversation, then answers", REFS["load-replays"], session_load),
    Case("session.resume", "session/resume answers without replaying", REFS["resume-no-replay"], session_resume),
    Case("session.close", "session/close cancels the running prompt", REFS["close-cancels"], session_close),
    Case("session.list", "session/list lists the sessions", REFS["list-response"], session_list),
    Case("prompt.turn", "a prompt turn ends with a stopReason", REFS["turn-ends-with-response"], prompt_turn),
    Case("prompt.permission-rejected", "a turn goes on after a rejected permission", REFS["turn-ends-with-response"], permission_rejected),
    Case("cancel.prompt", "session/cancel ends the prompt with stopReason cancelled", REFS["cancelled-stop-reason"], cancel_prompt),
    Case("cancel.pending-permission", "session/cancel with a permission pending ends the turn cancelled", REFS["cancelled-stop-reason"], cancel_with_pending_permission),
    Case("elicitation.outcomes", "a turn goes on after its elicitation is declined or cancelled", REFS["elicitation-outcomes-handled"], elicitation_outcomes),
    Case("capabilities.honoured", "nothing the client did not advertise is used", REFS["fs-needs-capability"], capabilities_honoured),
    Case("eof.exit", "the agent exits when its stdin closes", REFS["close-stdin-terminate"], eof_exit),
)  # fmt: skip
