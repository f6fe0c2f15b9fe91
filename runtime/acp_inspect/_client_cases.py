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
from pathlib import Path
from typing import Any

import trio

from ._cases import CaseFailed, NotApplicable
from ._client_context import POLL, ClientCase, ClientCaseContext
from ._message import Message, as_obj
from ._spec import REFS

__all__ = ["CLIENT_CASES"]


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
