"""What a ``check-client`` case works with: :class:`ClientCaseContext` (the
client under test, the case's directories and bounds, the agent's steps),
the scripted agent's answers to what a case does not wait for
(:func:`agent_responder`), and :class:`ClientCase`, one case."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from ._cases import CaseFailed, NotApplicable
from ._client_driver import ClientUnderTest
from ._driver import AgentExited, PeerUnderTest
from ._message import Message, as_obj
from ._spec import Level, SpecRef

__all__ = ["POLL", "CaseFn", "ClientCase", "ClientCaseContext", "agent_responder"]

#: How often a case looks at a process or a file it waits for (seconds).
POLL = 0.05


@dataclass(slots=True)
class ClientCaseContext:
    """What a case works with."""

    client: ClientUnderTest
    #: the client's working directory (the session's, for most clients)
    cwd: str
    #: a directory beside it, outside the session
    outside: str
    #: seconds to wait for what may not come
    settle: float
    #: seconds the client has to act (exit once its agent is gone, cancel
    #: after SIGINT, end a command after terminal/release)
    grace: float
    oversized_bytes: int
    #: the client's exit status after a normal turn (the ``prompt.turn`` case)
    baseline: int | None = None
    #: the client's initialize params
    init: dict[str, Any] = field(default_factory=dict[str, Any])
    session_id: str = ""
    session_cwd: str = ""
    step: str = ""
    #: the client's exit status, when the case saw it exit
    exit_code: int | None = None
    sessions: int = 0

    def expect(self, ok: bool, why: str) -> None:
        if not ok:
            raise CaseFailed(why)

    # -- what the client advertised ------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        return as_obj(self.init.get("clientCapabilities"))

    def can(self, what: str) -> bool:
        """``fs.readTextFile``, ``fs.writeTextFile``, ``terminal``, ``elicitation.form``."""
        value: Any = self.capabilities()
        for part in what.split("."):
            value = as_obj(value).get(part)
        return value is True or isinstance(value, dict)

    def needs(self, what: str) -> None:
        if not self.can(what):
            raise NotApplicable(f"the client does not advertise {what}")

    # -- the agent's steps ---------------------------------------------------

    async def turn(self) -> Message:
        """The client's ``session/prompt`` (initialize and session/new
        answered on the way)."""
        self.step = "session/prompt"
        prompt = await self.client.wait_for(
            lambda m: m.kind == "request" and m.method == "session/prompt"
        )
        self.session_id = str(as_obj(prompt.params).get("sessionId", ""))
        self.step = ""
        return prompt

    async def update(self, update: dict[str, Any]) -> None:
        await self.client.notify(
            "session/update", {"sessionId": self.session_id, "update": update}
        )

    async def say(self, text: str) -> None:
        await self.update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text},
            }
        )

    async def tool_call(self, call_id: str, title: str, kind: str = "read") -> None:
        await self.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": title,
                "kind": kind,
                "status": "pending",
            }
        )

    async def answer(self, prompt: Message, stop_reason: str = "end_turn") -> None:
        await self.client.answer(prompt, {"stopReason": stop_reason})

    async def call(self, method: str, params: dict[str, Any]) -> Message:
        return await self.client.call(method, {"sessionId": self.session_id, **params})

    async def within(self, seconds: float, rid: int) -> Message | None:
        """The answer to ``rid`` within ``seconds``, else ``None``."""
        with trio.move_on_after(seconds):
            return await self.client.response(rid)
        return None

    async def exits(self, seconds: float) -> int | None:
        """The client's exit status if it exits within ``seconds``."""
        with trio.move_on_after(seconds):
            await self.client.exited.wait()
        self.exit_code = self.client.exit_code
        return self.exit_code

    async def goes_on(self) -> None:
        """After the turn: the client goes on as after a normal turn.  It
        exits with the status a normal turn leaves it with, or stays
        running (a client waiting for its user)."""
        code = await self.exits(self.grace)
        if code is None:
            self.client.note(
                f"the client is still running {self.grace:g} s after the turn"
            )
            return
        if self.baseline is not None:
            self.expect(
                code == self.baseline,
                f"the client exited ({code}) where a normal turn leaves it with ({self.baseline})",
            )

    async def cancelled_by_user(self) -> Message:
        """SIGINT to the client (a user's Ctrl-C); its ``session/cancel``.
        Not applicable when the client ends without sending one."""
        self.client.interrupt()
        with trio.move_on_after(self.grace):
            try:
                return await self.client.wait_for(
                    lambda m: m.method == "session/cancel"
                )
            except AgentExited as exc:  # the client went: no cancel it can be asked for
                raise NotApplicable(
                    "SIGINT (Ctrl-C) ended the client without session/cancel: no cancel the check can ask for"
                ) from exc
        raise NotApplicable(
            f"no session/cancel {self.grace:g} s after SIGINT (Ctrl-C): no cancel the check can ask for"
        )


def agent_responder(
    ctx: ClientCaseContext,
) -> Callable[[PeerUnderTest, Message], Awaitable[None]]:
    """The scripted agent's answers to what a case does not wait for."""

    async def respond(peer: PeerUnderTest, msg: Message) -> None:
        params = as_obj(msg.params)
        if msg.method == "initialize":
            ctx.init = params
            ctx.step = "initialize"
            await peer.answer(
                msg,
                {
                    "protocolVersion": 1,
                    "agentCapabilities": {},
                    "authMethods": [],
                    "agentInfo": {"name": "acp-inspect check-client", "version": "1"},
                },
            )
        elif msg.method == "session/new":
            ctx.sessions += 1
            ctx.session_cwd = str(params.get("cwd", ""))
            ctx.step = "session/new"
            await peer.answer(msg, {"sessionId": f"acp-inspect-{ctx.sessions}"})
        elif msg.method == "authenticate":
            await peer.answer(msg, {})
        else:
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": msg.id,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )

    return respond


CaseFn = Callable[[ClientCaseContext], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ClientCase:
    """One case of ``check-client``: as :class:`~acp_inspect._cases.Case`;
    ``needs``: ``none`` (the setup case) or ``turn`` (skipped when the
    setup case fails)."""

    key: str
    title: str
    spec: SpecRef
    run: CaseFn
    level: Level | None = None
    needs: str = "turn"

    @property
    def severity(self) -> Level:
        return self.level or self.spec.level
