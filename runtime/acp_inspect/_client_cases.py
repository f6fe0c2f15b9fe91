"""``check-client``'s cases: the check is the agent, one case per behaviour
of a client, each naming the spec line (or the reported bug) it checks.

A case runs against a fresh client process (so a client that hangs or
crashes fails that case only) through a :class:`ClientCaseContext`.  The
client initializes and opens its session on its own; the check answers
(:func:`agent_responder`: ``initialize`` with protocol version 1, no agent
capability, ``session/new`` with a fresh id), then the case waits for the
client's ``session/prompt`` and plays its turn.  A case ends by returning
(pass), raising :class:`~acp_inspect._cases.CaseFailed` or
:class:`~acp_inspect._cases.NotApplicable` (the client did not advertise
what the case needs, or has no way the check can use to ask for it), or by
its bound (fail).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from ._cases import CaseFailed, NotApplicable
from ._client_driver import ClientUnderTest
from ._driver import AgentExited, PeerUnderTest
from ._message import Message, as_obj
from ._spec import REFS, Level, SpecRef

__all__ = ["CLIENT_CASES", "ClientCase", "ClientCaseContext", "agent_responder"]

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


def _option(kind: str) -> dict[str, Any]:
    """A permission option with an id no client can guess."""
    name = kind.replace("_", " ").capitalize()
    return {"optionId": f"{kind}-{secrets.token_hex(3)}", "name": name, "kind": kind}


def _selected(answer: Message) -> str | None:
    """The optionId an answer selected; ``None`` for ``cancelled``; else CaseFailed."""
    if answer.error is not None:
        raise CaseFailed(
            f"session/request_permission answered an error: {answer.error}"
        )
    outcome = as_obj(as_obj(answer.result).get("outcome"))
    if outcome.get("outcome") == "cancelled":
        return None
    if outcome.get("outcome") != "selected":
        raise CaseFailed(f"not an outcome: {outcome}")
    return str(outcome.get("optionId"))


async def _ask(
    ctx: ClientCaseContext, options: list[dict[str, Any]], call: str = "call-1"
) -> Message:
    await ctx.tool_call(call, "Read the project's notes")
    return await ctx.call(
        "session/request_permission",
        {
            "toolCall": {"toolCallId": call, "title": "Read the project's notes"},
            "options": options,
        },
    )


# -- the setup ----------------------------------------------------------------


async def prompt_turn(ctx: ClientCaseContext) -> None:
    """initialize, session/new, a prompt; a turn answered end_turn, after
    which the client goes on or exits 0 (its exit status is what the other
    cases compare with)."""
    prompt = await ctx.turn()
    ctx.expect(bool(ctx.session_id), "session/prompt names no sessionId")
    await ctx.say("hello from acp-inspect")
    await ctx.answer(prompt)
    code = await ctx.exits(ctx.grace)
    ctx.expect(
        code is None or code == 0,
        f"the client exited ({code}) after a turn that ended end_turn",
    )


# -- permissions --------------------------------------------------------------


async def permission_offered(ctx: ClientCaseContext) -> None:
    prompt = await ctx.turn()
    options = [
        _option(k)
        for k in ("reject_once", "allow_once", "allow_always", "reject_always")
    ]
    chosen = _selected(await _ask(ctx, options))
    ids = [o["optionId"] for o in options]
    ctx.expect(
        chosen is None or chosen in ids,
        f"selected {chosen!r}, not one of the options offered {ids}",
    )
    await ctx.answer(prompt)


async def permission_reject_only(ctx: ClientCaseContext) -> None:
    prompt = await ctx.turn()
    options = [_option(k) for k in ("reject_once", "reject_always")]
    chosen = _selected(await _ask(ctx, options))
    ids = [o["optionId"] for o in options]
    ctx.expect(
        chosen is None or chosen in ids,
        f"only reject options were offered ({ids}) and the answer selected {chosen!r}: taken as allow",
    )
    await ctx.answer(prompt)


async def permission_cancelled(ctx: ClientCaseContext) -> None:
    """A permission pending when the user cancels is answered cancelled;
    one the client answered at once is followed by another, asked after the
    client's session/cancel, in the cancelled turn."""
    prompt = await ctx.turn()
    options = [_option(k) for k in ("allow_once", "reject_once")]
    await ctx.tool_call("call-1", "Read the project's notes")
    rid = await ctx.client.request(
        "session/request_permission",
        {
            "sessionId": ctx.session_id,
            "toolCall": {"toolCallId": "call-1", "title": "Read the project's notes"},
            "options": options,
        },
    )
    early = await ctx.within(ctx.settle, rid)
    await ctx.cancelled_by_user()
    if early is None:
        what = "the permission pending at session/cancel"
        pending = await ctx.within(ctx.grace, rid)
        if pending is None:
            raise CaseFailed(f"{what} was not answered {ctx.grace:g} s after it")
        answer = pending
    else:
        ctx.client.note(
            "the first permission was answered at once: a second one, in the cancelled turn"
        )
        await ctx.tool_call("call-2", "Read the project's notes again")
        answer = await _ask_only(ctx, options, "call-2")
        what = "a permission asked in the turn the client cancelled"
    chosen = _selected(answer)
    ctx.expect(chosen is None, f"{what} was answered {chosen!r}, not cancelled")
    await ctx.answer(prompt, "cancelled")


async def _ask_only(
    ctx: ClientCaseContext, options: list[dict[str, Any]], call: str
) -> Message:
    return await ctx.call(
        "session/request_permission",
        {
            "toolCall": {"toolCallId": call, "title": "Read the project's notes"},
            "options": options,
        },
    )


# -- cancellation ---------------------------------------------------------------


async def cancel_updates_after(ctx: ClientCaseContext) -> None:
    """SIGINT: the client sends session/cancel for its session, then waits
    for the turn's answer, taking the updates sent meanwhile."""
    prompt = await ctx.turn()
    await ctx.say("working")
    await ctx.update(
        {"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Run the tests",
         "kind": "execute", "status": "in_progress"}
    )  # fmt: skip
    cancel = await ctx.cancelled_by_user()
    sid = as_obj(cancel.params).get("sessionId")
    ctx.expect(
        sid == ctx.session_id,
        f"session/cancel named {sid!r}, not the session {ctx.session_id!r}",
    )
    await trio.sleep(ctx.settle)
    ctx.expect(
        not ctx.client.exited.is_set() and not ctx.client.received_eof,
        "the client left before the cancelled turn's answer (the agent may still send updates)",
    )
    await ctx.update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call-1",
            "status": "failed",
        }
    )
    await ctx.say("stopped")
    await ctx.answer(prompt, "cancelled")


# -- files --------------------------------------------------------------------


async def fs_write(ctx: ClientCaseContext) -> None:
    prompt = await ctx.turn()
    ctx.needs("fs.writeTextFile")
    target = Path(ctx.cwd) / "acp-inspect-new.txt"
    answer = await ctx.call(
        "fs/write_text_file",
        {"path": str(target), "content": "written by acp-inspect\n"},
    )
    ctx.expect(
        answer.error is None,
        f"fs/write_text_file of a new file in the session's directory failed: {answer.error}",
    )
    ctx.expect(target.is_file(), f"{target} was not created")
    ctx.expect(
        target.read_text() == "written by acp-inspect\n",
        f"{target} does not hold what was written",
    )
    await ctx.answer(prompt)


async def fs_path_escape(ctx: ClientCaseContext) -> None:
    """A file in the session's directory is read; paths outside it (above
    it, through ``..``, through a symlink, relative) are refused, and
    nothing is written outside."""
    prompt = await ctx.turn()
    if not (ctx.can("fs.readTextFile") or ctx.can("fs.writeTextFile")):
        raise NotApplicable(
            "the client does not advertise fs.readTextFile or fs.writeTextFile"
        )
    work, outside = Path(ctx.cwd), Path(ctx.outside)
    (work / "notes.txt").write_text("inside\n")
    (outside / "secret.txt").write_text("outside\n")
    (work / "link").symlink_to(outside, target_is_directory=True)
    escaped: list[str] = []
    if ctx.can("fs.readTextFile"):
        inside = await ctx.call("fs/read_text_file", {"path": str(work / "notes.txt")})
        ctx.expect(
            inside.error is None and as_obj(inside.result).get("content") == "inside\n",
            f"advertised fs.readTextFile, but a file in the session's directory was not read: {inside.error or inside.result}",
        )
        for path in (
            str(outside / "secret.txt"),
            f"{work}/../{outside.name}/secret.txt",
            str(work / "link" / "secret.txt"),
            "notes.txt",
        ):
            answer = await ctx.call("fs/read_text_file", {"path": path})
            if answer.error is None:
                relative = "" if path.startswith("/") else " (a relative path)"
                escaped.append(f"read {path}{relative}")
    if ctx.can("fs.writeTextFile"):
        for target in (outside / "written.txt", work / "link" / "linked.txt"):
            answer = await ctx.call(
                "fs/write_text_file", {"path": str(target), "content": "x"}
            )
            if answer.error is None or target.exists():
                escaped.append(f"wrote {target}")
    ctx.expect(
        not escaped, f"outside the session's directory {work}: {'; '.join(escaped)}"
    )
    await ctx.answer(prompt)


async def unadvertised_refused(ctx: ClientCaseContext) -> None:
    """Each of fs/read_text_file, fs/write_text_file and terminal/create the
    client did not advertise is refused (an error), nothing done."""
    prompt = await ctx.turn()
    work = Path(ctx.cwd)
    (work / "notes.txt").write_text("inside\n")
    marker = Path(ctx.outside) / "unadvertised-ran"
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("fs.readTextFile", "fs/read_text_file", {"path": str(work / "notes.txt")}),
        ("fs.writeTextFile", "fs/write_text_file",
         {"path": str(work / "unadvertised.txt"), "content": "x"}),
        ("terminal", "terminal/create",
         {"command": "sh", "args": ["-c", f"touch {marker}"], "cwd": ctx.cwd}),
    ]  # fmt: skip
    tried = [(m, p) for cap, m, p in calls if not ctx.can(cap)]
    if not tried:
        raise NotApplicable(
            "the client advertises fs.readTextFile, fs.writeTextFile and terminal"
        )
    served: list[str] = []
    for method, params in tried:
        answer = await ctx.call(method, params)
        if answer.error is None:
            served.append(method)
    await trio.sleep(ctx.settle)  # a command started anyway has run by now
    if (work / "unadvertised.txt").exists() and "fs/write_text_file" not in served:
        served.append("fs/write_text_file (the file was written)")
    if marker.exists() and "terminal/create" not in served:
        served.append("terminal/create (the command ran)")
    ctx.expect(not served, f"served without advertising it: {', '.join(served)}")
    await ctx.answer(prompt)


# -- terminals ----------------------------------------------------------------


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


async def terminal_release(ctx: ClientCaseContext) -> None:
    prompt = await ctx.turn()
    ctx.needs("terminal")
    pidfile = Path(ctx.outside) / "terminal.pid"
    created = await ctx.call(
        "terminal/create",
        {"command": "sh", "args": ["-c", f"echo $$ > {pidfile}.tmp && mv {pidfile}.tmp {pidfile}; exec sleep 300"],
         "cwd": ctx.cwd},
    )  # fmt: skip
    ctx.expect(
        created.error is None,
        f"advertised terminal, but terminal/create failed: {created.error}",
    )
    terminal = as_obj(created.result).get("terminalId")
    pid = 0
    with trio.move_on_after(ctx.grace):
        while not pidfile.exists():  # noqa: ASYNC110 (a file: no event to wait on)
            await trio.sleep(POLL)
        pid = int(pidfile.read_text())
    ctx.expect(pid > 0, f"the command did not start within {ctx.grace:g} s")
    try:
        ctx.client.note(f"the command runs (pid {pid}): terminal/release")
        released = await ctx.call("terminal/release", {"terminalId": terminal})
        ctx.expect(released.error is None, f"terminal/release failed: {released.error}")
        with trio.move_on_after(ctx.grace):
            while _alive(pid):  # noqa: ASYNC110 (not our child: polled)
                await trio.sleep(POLL)
        ctx.expect(
            not _alive(pid),
            f"the command (pid {pid}) still ran {ctx.grace:g} s after terminal/release",
        )
    finally:
        if _alive(pid):
            os.kill(pid, 9)
    await ctx.answer(prompt)


async def terminal_output_limit(ctx: ClientCaseContext) -> None:
    """outputByteLimit 1001 on 2000 bytes of two-byte characters then
    ``END``: at most 1001 bytes kept, the end of the output, whole characters."""
    prompt = await ctx.turn()
    ctx.needs("terminal")
    limit = 1001
    created = await ctx.call(
        "terminal/create",
        {"command": "sh", "args": ["-c", "yes é | head -n 1000 | tr -d '\\n'; printf END"],
         "cwd": ctx.cwd, "outputByteLimit": limit},
    )  # fmt: skip
    ctx.expect(
        created.error is None,
        f"advertised terminal, but terminal/create failed: {created.error}",
    )
    terminal = as_obj(created.result).get("terminalId")
    await ctx.call("terminal/wait_for_exit", {"terminalId": terminal})
    got = await ctx.call("terminal/output", {"terminalId": terminal})
    await ctx.call("terminal/release", {"terminalId": terminal})
    ctx.expect(got.error is None, f"terminal/output failed: {got.error}")
    result = as_obj(got.result)
    output = str(result.get("output", ""))
    size = len(output.encode("utf-8", "surrogatepass"))
    ctx.expect(
        size <= limit, f"{size} bytes of output kept with outputByteLimit {limit}"
    )
    ctx.expect(
        output.endswith("END"), f"the output kept is not its end: ...{output[-20:]!r}"
    )
    ctx.expect(
        result.get("truncated") is True, "the output was cut and truncated is not true"
    )
    ctx.expect(
        "\ufffd" not in output, "the output was cut inside a character (U+FFFD in it)"
    )
    await ctx.answer(prompt)


# -- what an agent sends that a client must get past -----------------------------


async def updates_after_turn(ctx: ClientCaseContext) -> None:
    prompt = await ctx.turn()
    await ctx.say("done")
    await ctx.answer(prompt)
    await ctx.say(" (a late chunk, after the answer)")
    await ctx.update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "late-1",
            "title": "Late",
            "status": "completed",
        }
    )
    await ctx.goes_on()


async def unknown_update(ctx: ClientCaseContext) -> None:
    prompt = await ctx.turn()
    await ctx.update({"sessionUpdate": "_acp_inspect_custom", "value": 1})
    await ctx.update(
        {"sessionUpdate": "acp_inspect_future_kind", "value": {"nested": [1, 2]}}
    )
    await ctx.update(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "known "},
         "_meta": {"acp-inspect": True}, "futureField": {"x": 1}}
    )  # fmt: skip
    await ctx.client.notify("_acp_inspect/notice", {"sessionId": ctx.session_id})
    await ctx.say("still here")
    await ctx.answer(prompt)
    await ctx.goes_on()


async def unknown_method(ctx: ClientCaseContext) -> None:
    prompt = await ctx.turn()
    rid = await ctx.client.request("_acp_inspect/ask", {"sessionId": ctx.session_id})
    answer = await ctx.within(ctx.grace, rid)
    ctx.expect(
        answer is not None,
        f"no answer to an unknown request in {ctx.grace:g} s (an agent waiting on it hangs)",
    )
    assert answer is not None
    code = None if answer.error is None else answer.error.get("code")
    ctx.expect(code == -32601, f"expected -32601, got {answer.error or answer.result}")
    await ctx.answer(prompt)


async def oversized_line(ctx: ClientCaseContext) -> None:
    """A permission request of several MiB (its ``_meta``) is answered, and
    the connection goes on."""
    prompt = await ctx.turn()
    options = [_option(k) for k in ("allow_once", "reject_once")]
    await ctx.tool_call("call-1", "Read the project's notes")
    rid = await ctx.client.request(
        "session/request_permission",
        {
            "sessionId": ctx.session_id,
            "toolCall": {"toolCallId": "call-1", "title": "Read the project's notes"},
            "options": options,
            "_meta": {"padding": "x" * ctx.oversized_bytes},
        },
    )
    answer = await ctx.within(ctx.grace, rid)
    ctx.expect(
        answer is not None,
        f"a request of {ctx.oversized_bytes} bytes was not answered in {ctx.grace:g} s",
    )
    await ctx.say("after the long line")
    await ctx.answer(prompt)
    await ctx.goes_on()


async def elicitation(ctx: ClientCaseContext) -> None:
    prompt = await ctx.turn()
    ctx.needs("elicitation.form")
    answer = await ctx.call(
        "elicitation/create",
        {"mode": "form", "message": "Which approach?",
         "requestedSchema": {"type": "object", "properties": {
             "approach": {"type": "string", "enum": ["small", "large"]}}, "required": ["approach"]}},
    )  # fmt: skip
    ctx.expect(answer.error is None, f"elicitation/create failed: {answer.error}")
    result = as_obj(answer.result)
    action = result.get("action")
    ctx.expect(action in ("accept", "decline", "cancel"), f"not an action: {action!r}")
    if action == "accept":
        content = as_obj(result.get("content"))
        ctx.expect(
            content.get("approach") in ("small", "large"),
            f"accepted content {content} does not fit the schema",
        )
    await ctx.answer(prompt)


async def agent_exits(ctx: ClientCaseContext) -> None:
    """The agent's pipes close and the relay exits mid-turn: the client,
    whose turn can no longer end, ends within ``grace`` (a client that
    waits on is what the cited bug reports)."""
    await ctx.turn()
    await ctx.say("working")
    await ctx.client.agent_exits()
    code = await ctx.exits(ctx.grace)
    ctx.expect(
        code is not None,
        f"the client still ran {ctx.grace:g} s after its agent exited mid-turn",
    )


CLIENT_CASES: tuple[ClientCase, ...] = (
    ClientCase("prompt.turn", "initialize, session/new, then a prompt; the turn's answer taken", REFS["prompt-after-setup"], prompt_turn, needs="none"),
    ClientCase("permission.offered-option", "the answer names an option that was offered (or cancelled)", REFS["permission-option-offered"], permission_offered),
    ClientCase("permission.reject-only", "with only reject options, nothing is taken as allow", REFS["permission-option-offered"], permission_reject_only),
    ClientCase("permission.cancelled", "a cancelled turn answers its permission requests cancelled", REFS["permission-cancelled-outcome"], permission_cancelled),
    ClientCase("cancel.updates-after", "session/cancel sent; the updates until the cancelled answer taken", REFS["accept-updates-after-cancel"], cancel_updates_after),
    ClientCase("fs.write", "fs/write_text_file creates a new file in the session's directory", REFS["fs-write-creates"], fs_write),
    ClientCase("capabilities.unadvertised", "fs/* and terminal/create not advertised are refused", REFS["bug-fs-outside-workspace"], unadvertised_refused),
    ClientCase("fs.path-escape", "fs/* outside the session's directories (.., symlink, relative) refused", REFS["bug-fs-outside-workspace"], fs_path_escape),
    ClientCase("terminal.release-kills", "terminal/release kills the command still running", REFS["terminal-release-kills"], terminal_release),
    ClientCase("terminal.output-limit", "outputByteLimit keeps the output's end, whole characters", REFS["terminal-truncate-boundary"], terminal_output_limit),
    ClientCase("updates.after-turn", "updates after the turn's answer do not break the client", REFS["updates-before-response"], updates_after_turn, level="SHOULD"),
    ClientCase("extensibility.unknown-update", "unknown and _ update variants and notifications are passed over", REFS["bug-unknown-update-variant"], unknown_update),
    ClientCase("extensibility.unknown-method", "an unknown agent request gets -32601", REFS["unknown-method"], unknown_method),
    ClientCase("jsonrpc.oversized-line", "a request of several MiB is answered and the connection goes on", REFS["jsonrpc-response-required"], oversized_line),
    ClientCase("elicitation.form", "a form elicitation is answered with an action (content fits the schema)", REFS["elicitation-content-schema"], elicitation),
    ClientCase("agent.exits-mid-turn", "the agent exiting mid-turn ends the turn (no hang)", REFS["bug-agent-died-mid-turn"], agent_exits),
)  # fmt: skip
