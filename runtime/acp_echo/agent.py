"""The echo agent's protocol classes: ``EchoCore`` (sessions and the turn's
script, whatever the version) under ``EchoAgentV1(v1.Agent)`` (and
``EchoAgentV2(v2.Agent)`` in :mod:`acp_echo.agent_v2`)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Literal

import acp_trio
import msgspec
import trio
from acp_schema import v1

from acp_echo.content import (
    PLAN_STEPS,
    chunks_of,
    describe_setup,
    new_id,
    not_found,
    prompt_text,
    setup_meta,
    to_json,
)
from acp_echo.elicit import (
    ELICIT,
    LINK,
    form_request,
    greeting,
    outcome_text,
    url_request,
)
from acp_echo.options import config_options, listed, modes, set_option, shaped
from acp_echo.store import (
    SETTINGS,
    HistoryItem,
    Json,
    Message,
    PlanItem,
    PlanRecord,
    Session,
    ToolCallRecord,
    UsageRecord,
    optional,
)

log = logging.getLogger("echo_agent")

AGENT_NAME = "acp-msgspec-echo-agent"
AGENT_VERSION = "0.1.0"
CONTEXT_SIZE = 200_000
PRICE_PER_TOKEN = 0.000003  # USD
WAIT = re.compile(r"\bwait\b", re.IGNORECASE)


# -- the agent: what both versions share ---------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionSetup:
    """What a session request sets up, read from its version's params: the
    session's ``cwd``, its additional directories and its MCP servers (JSON,
    each with its ``type``)."""

    cwd: str
    directories: list[str]
    servers: list[Json]


class EchoCore:
    """Sessions and the turn's script, whatever the protocol version.

    The version classes below (``EchoAgentV1``, ``EchoAgentV2``) serve the
    protocol: each handler, typed with its version's generated types, turns
    the request into a call here, and each ``send_*`` method here is
    implemented there with the version's types (through the ``acp_trio``
    builders, which follow each version's shape: a v2 tool call is a first
    ``tool_call_update``, a v2 plan a ``plan_update`` with an id).
    """

    #: Serve the unstable surface too (``session/fork``): ``--unstable``.
    unstable = False

    def __init__(self) -> None:
        self.active: set[str] = set()  # sessions opened on this connection
        #: the elicitation modes the client advertised (v1's ``elicitation``)
        self.elicitation_modes: set[str] = set()

    # what each version sends -------------------------------------------------------

    async def send_text(self, session_id: str, text: str, message_id: str) -> None:
        raise NotImplementedError

    async def send_message(self, session_id: str, message: Message) -> None:
        """A whole message of the history (``session/load``)."""
        raise NotImplementedError

    async def send_plan(self, session_id: str, plan: PlanRecord) -> None:
        raise NotImplementedError

    async def send_tool_call(self, session_id: str, call: ToolCallRecord) -> None:
        """The tool call as first reported (its state so far)."""
        raise NotImplementedError

    async def send_tool_status(self, session_id: str, call: ToolCallRecord) -> None:
        """A ``tool_call_update``: the status, and the output once there is one."""
        raise NotImplementedError

    async def send_usage(self, session_id: str, usage: UsageRecord) -> None:
        raise NotImplementedError

    async def ask_permission(self, session_id: str, call: ToolCallRecord) -> str | None:
        """The option the user picked (``None``: the turn was cancelled)."""
        raise NotImplementedError

    async def elicit(self, params: Json) -> Json | None:
        """``elicitation/create``: the answer, or ``None`` when the client did
        not advertise the mode (or the version has no elicitation)."""
        raise NotImplementedError

    async def elicitation_done(self, elicitation_id: str) -> None:
        """``elicitation/complete`` (a URL elicitation's page was visited)."""
        raise NotImplementedError

    async def send_mode(self, session_id: str, mode_id: str) -> None:
        """The session's mode changed (v1: ``current_mode_update``; v2 has no modes)."""
        raise NotImplementedError

    async def send_options(self, session_id: str, options: list[Json]) -> None:
        """The session's config options changed (``config_option_update``)."""
        raise NotImplementedError

    # sessions ----------------------------------------------------------------------

    def setup(
        self, session: Session, setup: SessionSetup, *, new: bool = False
    ) -> None:
        """Record the session's setup (saved when it changed) and open it here."""
        before = (session.cwd, session.additional_directories, session.mcp_servers)
        session.cwd = setup.cwd
        session.additional_directories = setup.directories
        session.mcp_servers = list[object](setup.servers)
        self.active.add(session.session_id)
        after = (session.cwd, session.additional_directories, session.mcp_servers)
        if new or after != before:
            SETTINGS.store.save_setup(session)
        log.info("session %s: %s", session.session_id, describe_setup(session))

    def open_new(self, setup: SessionSetup) -> Session:
        """``session/new``: a new session, opened here."""
        session = SETTINGS.store.new(setup.cwd)
        self.setup(session, setup, new=True)
        return session

    async def open_loaded(self, session_id: str, setup: SessionSetup) -> Session:
        """``session/load``: a stored session, opened here, its history replayed."""
        session = self.stored(session_id)
        self.setup(session, setup)
        await self.replay(session)
        return session

    def open_resumed(self, session_id: str, setup: SessionSetup) -> Session:
        """``session/resume``: a stored session, opened here (no replay)."""
        session = self.stored(session_id)
        self.setup(session, setup)
        return session

    def open_forked(self, session_id: str, setup: SessionSetup) -> Session:
        """``session/fork`` (unstable only, else -32601): a new session with a
        copy of ``session_id``'s history, saved and opened here."""
        if not self.unstable:
            raise acp_trio.RequestError(acp_trio.METHOD_NOT_FOUND, "Method not found")
        session = self.copy_of(session_id)
        self.setup(session, setup, new=True)
        SETTINGS.store.save_turn(session, session.history, session.used_tokens)
        return session

    def stored(self, session_id: str) -> Session:
        """A session by id, read again from disk (another agent may have added
        turns), or -32002."""
        session = SETTINGS.store.get(session_id, reread=True)
        if session is None:
            raise not_found(session_id)
        return session

    def copy_of(self, session_id: str) -> Session:
        """A new session with a copy of ``session_id``'s history."""
        source = self.stored(session_id)
        session = SETTINGS.store.new(source.cwd)
        session.history = msgspec.convert(
            msgspec.to_builtins(source.history), list[HistoryItem]
        )
        session.used_tokens = source.used_tokens
        log.info("session %s: forked from %s", session.session_id, source.session_id)
        return session

    def opened(self, session_id: str) -> Session:
        """A session opened on this connection, or -32002."""
        session = SETTINGS.store.get(session_id)
        if session is None or session_id not in self.active:
            raise not_found(session_id)
        return session

    async def set_config(
        self, session_id: str, config_id: str, value: object
    ) -> Session:
        """``session/set_config_option``: set, saved; the mode's change said
        as v1 says it (``current_mode_update``)."""
        session = self.opened(session_id)
        mode = session.mode
        set_option(session, config_id, value)
        SETTINGS.store.save_setup(session)
        if session.mode != mode:
            await self.send_mode(session_id, session.mode)
        return session

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        """``session/set_mode`` (v1): the mode, and the config option that
        mirrors it (``config_option_update``)."""
        session = self.opened(session_id)
        set_option(session, "mode", mode_id)
        SETTINGS.store.save_setup(session)
        await self.send_options(session_id, config_options(session))

    def listing(self, cwd: str | None, cursor: str | None) -> Json:
        """``session/list``: one page of the stored sessions, as wire JSON."""
        sessions, after = listed(SETTINGS.store, cwd, cursor)
        answer: Json = {"sessions": sessions}
        if after is not None:
            answer["nextCursor"] = after
        return answer

    def delete(self, session_id: str) -> None:
        """``session/delete``: gone from memory and disk; an unknown session
        succeeds silently (session-delete.mdx)."""
        self.active.discard(session_id)
        SETTINGS.store.delete(session_id)
        log.info("session %s: deleted", session_id)

    def forget(self, session_id: str) -> None:
        # The runtime already cancelled a running prompt of this session.
        if session_id not in self.active:
            raise not_found(session_id)
        self.active.discard(session_id)

    async def replay(self, session: Session) -> None:
        """The history, as updates (``session/load``)."""
        sid = session.session_id
        for item in session.history:
            if isinstance(item, Message):
                await self.send_message(sid, item)
            elif isinstance(item, ToolCallRecord):
                await self.send_tool_call(sid, item)
            elif isinstance(item, PlanRecord):
                await self.send_plan(sid, item)
            else:
                await self.send_usage(sid, item)

    # the prompt turn ---------------------------------------------------------------

    async def run_turn(self, session_id: str, blocks: list[Json]) -> str:
        """Run one turn; its stop reason (a cancellation is the runtime's)."""
        session = SETTINGS.store.get(session_id)
        if session is None or session_id not in self.active:
            raise not_found(session_id)
        session.turns += 1
        start, tokens = len(session.history), session.used_tokens
        session.history.append(
            Message(role="user", message_id=new_id("msg"), content=blocks)
        )
        text = prompt_text(blocks)
        tool_calls: list[ToolCallRecord] = []
        try:
            if WAIT.search(text):
                return await self.wait_turn(session, tool_calls)
            if ELICIT.search(text) or LINK.search(text):
                return await self.elicit_turn(session, url=not ELICIT.search(text))
            return await self.echo_turn(session, text, tool_calls)
        finally:
            # Runs on cancellation too (no await here): a tool call left running
            # is remembered as failed.
            for record in tool_calls:
                if record.status not in ("completed", "failed"):
                    record.status = "failed"
            # the turn's items only: saving costs the turn, not the history
            SETTINGS.store.save_turn(
                session, session.history[start:], session.used_tokens - tokens
            )

    async def stream_text(self, session: Session, text: str) -> None:
        """Stream ``text`` as chunks of one agent message, and record it."""
        message = Message(role="agent", message_id=new_id("msg"), content=[])
        session.history.append(message)
        for piece in chunks_of(text):
            message.content.append({"type": "text", "text": piece})
            await self.send_text(session.session_id, piece, message.message_id)
            await trio.sleep(SETTINGS.chunk_delay)

    async def echo_turn(
        self, session: Session, text: str, tool_calls: list[ToolCallRecord]
    ) -> str:
        sid, turn = session.session_id, session.turns
        plan = PlanRecord(plan_id=f"plan_{turn}", entries=[])

        async def progress(
            *statuses: Literal["pending", "in_progress", "completed"],
        ) -> None:
            plan.entries = [
                PlanItem(content=content, priority=priority, status=status)
                for (content, priority), status in zip(
                    PLAN_STEPS, statuses, strict=True
                )
            ]
            await self.send_plan(sid, plan)

        session.history.append(plan)
        await progress("in_progress", "pending", "pending")
        said = text.upper() if session.model == "shout" else text
        reply = f"You said: {said or '(nothing)'}\n{describe_setup(session)}"
        await self.stream_text(session, reply)
        await progress("completed", "in_progress", "pending")

        call = ToolCallRecord(
            tool_call_id=f"call_{turn}",
            title=f"Echo {len(text)} characters",
            locations=[session.cwd],
            raw_input={"text": text},
        )
        tool_calls.append(call)
        session.history.append(call)
        await self.send_tool_call(sid, call)
        choice = await self.ask_permission(sid, call)
        if choice is None:
            return "cancelled"
        if choice == "allow":
            call.status = "in_progress"
            await self.send_tool_status(sid, call)
            await progress("completed", "completed", "in_progress")
            call.status, call.output = "completed", text
            await self.send_tool_status(sid, call)
            await progress("completed", "completed", "completed")
            await self.stream_text(session, f"Echoed {len(text)} characters.")
        else:
            call.status, call.output = "failed", "Permission denied"
            await self.send_tool_status(sid, call)
            await self.stream_text(session, "Okay, I did not run the echo tool.")

        session.used_tokens += len(text.split()) + len(reply.split()) + 8
        usage = UsageRecord(
            used=session.used_tokens,
            size=CONTEXT_SIZE,
            cost=round(session.used_tokens * PRICE_PER_TOKEN, 6),
        )
        session.history.append(usage)
        await self.send_usage(sid, usage)
        return "end_turn"

    async def elicit_turn(self, session: Session, *, url: bool) -> str:
        """Ask a form (or, ``url``, a page to open) and say what came of it."""
        sid, ident = session.session_id, new_id("elicit")
        if url:
            answer = await self.elicit(url_request(sid, ident))
        else:
            answer = await self.elicit(form_request(sid))
        if answer is None:
            mode = "url" if url else "form"
            await self.stream_text(
                session, f"Your client takes no {mode} elicitation, so I do not ask."
            )
            return "end_turn"
        action = answer.get("action")
        if action != "accept":
            text = outcome_text(action, "page" if url else "greeting")
        elif url:
            text = "You opened the page."
            await self.elicitation_done(ident)
        else:
            text = greeting(answer.get("content"))
        await self.stream_text(session, text)
        return "end_turn"

    async def wait_turn(
        self, session: Session, tool_calls: list[ToolCallRecord]
    ) -> str:
        await self.stream_text(session, "Waiting until you cancel this turn.")
        call = ToolCallRecord(
            tool_call_id=f"call_{session.turns}",
            title="Wait for session/cancel",
            status="in_progress",
        )
        tool_calls.append(call)
        session.history.append(call)
        await self.send_tool_call(session.session_id, call)
        await trio.sleep_forever()  # session/cancel cancels this; answered "cancelled"
        raise AssertionError("unreachable")


PERMISSION_OPTIONS: list[Json] = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


# -- protocol v1 -------------------------------------------------------------------------


class EchoAgentV1(EchoCore, v1.Agent):
    """The echo agent over protocol v1: typed handlers of ``v1.Agent``."""

    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        super().__init__()
        self.client = conn.client

    async def send(self, session_id: str, update: v1.SessionUpdate) -> None:
        await self.client.session_update(acp_trio.notification(session_id, update))

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        caps = optional(params.client_capabilities)
        offered = optional(caps.elicitation) if caps is not None else None
        if offered is not None:
            self.elicitation_modes = {
                mode
                for mode, given in (("form", offered.form), ("url", offered.url))
                if optional(given) is not None
            }
        fork = v1.SessionForkCapabilities() if self.unstable else msgspec.UNSET
        return v1.InitializeResponse(
            protocol_version=1,
            agent_capabilities=v1.AgentCapabilities(
                load_session=True,
                prompt_capabilities=v1.PromptCapabilities(embedded_context=True),
                mcp_capabilities=v1.McpCapabilities(http=True),
                session_capabilities=v1.SessionCapabilities(
                    additional_directories=v1.SessionAdditionalDirectoriesCapabilities(),
                    resume=v1.SessionResumeCapabilities(),
                    close=v1.SessionCloseCapabilities(),
                    list=v1.SessionListCapabilities(),
                    delete=v1.SessionDeleteCapabilities(),
                    fork=fork,
                ),
            ),
            agent_info=v1.Implementation(
                name=AGENT_NAME, title="Echo agent", version=AGENT_VERSION
            ),
        )

    @staticmethod
    def setup_of(
        params: v1.NewSessionRequest
        | v1.LoadSessionRequest
        | v1.ResumeSessionRequest
        | v1.ForkSessionRequest,
    ) -> SessionSetup:
        servers = to_json(optional(params.mcp_servers) or [])
        for raw in servers:  # v1's stdio server has no "type" field
            raw.setdefault("type", "stdio")
        directories = list(optional(params.additional_directories) or [])
        return SessionSetup(params.cwd, directories, servers)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        session = self.open_new(self.setup_of(params))
        return v1.NewSessionResponse(
            session_id=session.session_id,
            modes=modes_v1(session),
            config_options=options_v1(session),
            meta=setup_meta(session),
        )

    async def session_load(
        self, params: v1.LoadSessionRequest
    ) -> v1.LoadSessionResponse:
        session = await self.open_loaded(params.session_id, self.setup_of(params))
        return v1.LoadSessionResponse(
            modes=modes_v1(session),
            config_options=options_v1(session),
            meta=setup_meta(session),
        )

    async def session_resume(
        self, params: v1.ResumeSessionRequest
    ) -> v1.ResumeSessionResponse:
        session = self.open_resumed(params.session_id, self.setup_of(params))
        return v1.ResumeSessionResponse(
            modes=modes_v1(session),
            config_options=options_v1(session),
            meta=setup_meta(session),
        )

    async def session_fork(
        self, params: v1.ForkSessionRequest
    ) -> v1.ForkSessionResponse:
        session = self.open_forked(params.session_id, self.setup_of(params))
        return v1.ForkSessionResponse(
            session_id=session.session_id, meta=setup_meta(session)
        )

    async def session_close(
        self, params: v1.CloseSessionRequest
    ) -> v1.CloseSessionResponse:
        self.forget(params.session_id)
        return v1.CloseSessionResponse()

    async def session_list(
        self, params: v1.ListSessionsRequest
    ) -> v1.ListSessionsResponse:
        answer = self.listing(optional(params.cwd), optional(params.cursor))
        return v1.convert(answer, v1.ListSessionsResponse)

    async def session_delete(
        self, params: v1.DeleteSessionRequest
    ) -> v1.DeleteSessionResponse:
        self.delete(params.session_id)
        return v1.DeleteSessionResponse()

    async def session_set_mode(
        self, params: v1.SetSessionModeRequest
    ) -> v1.SetSessionModeResponse:
        await self.set_mode(params.session_id, params.mode_id)
        return v1.SetSessionModeResponse()

    async def session_set_config_option(
        self, params: v1.SetSessionConfigOptionRequest
    ) -> v1.SetSessionConfigOptionResponse:
        raw = msgspec.convert(msgspec.to_builtins(params), Json)
        session = await self.set_config(
            str(raw.get("sessionId")), str(raw.get("configId")), raw.get("value")
        )
        return v1.SetSessionConfigOptionResponse(config_options=options_v1(session))

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        # The runtime cancels the running session/prompt itself (its trio cancel
        # scope) and answers it with stopReason "cancelled"; nothing to do here.
        log.info("session %s: cancel requested", params.session_id)

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        stop_reason = await self.run_turn(params.session_id, to_json(params.prompt))
        return v1.PromptResponse(stop_reason=stop_reason_v1(stop_reason))

    # updates ---------------------------------------------------------------------

    async def send_text(self, session_id: str, text: str, message_id: str) -> None:
        await self.send(session_id, acp_trio.agent_text(text, message_id=message_id))

    async def send_message(self, session_id: str, message: Message) -> None:
        # v1 has no whole-message update: one chunk per content block.
        for raw in message.content:
            block = content_block_v1(raw)
            if message.role == "user":
                update: v1.SessionUpdate = v1.UserMessageChunk(
                    content=block, message_id=message.message_id
                )
            else:
                update = v1.AgentMessageChunk(
                    content=block, message_id=message.message_id
                )
            await self.send(session_id, update)

    async def send_plan(self, session_id: str, plan: PlanRecord) -> None:
        entries = [
            acp_trio.plan_entry(e.content, priority=e.priority, status=e.status)
            for e in plan.entries
        ]
        await self.send(session_id, acp_trio.plan(entries))

    async def send_tool_call(self, session_id: str, call: ToolCallRecord) -> None:
        output = [acp_trio.tool_content(call.output)] if call.output is not None else []
        await self.send(
            session_id,
            acp_trio.tool_call(
                call.tool_call_id,
                call.title,
                kind="other",
                status=call.status,
                content=output or msgspec.UNSET,
                locations=call.locations or msgspec.UNSET,
                raw_input=msgspec.UNSET if call.raw_input is None else call.raw_input,
            ),
        )

    async def send_tool_status(self, session_id: str, call: ToolCallRecord) -> None:
        output = [acp_trio.tool_content(call.output)] if call.output is not None else []
        await self.send(
            session_id,
            acp_trio.tool_call_update(
                call.tool_call_id, status=call.status, content=output or msgspec.UNSET
            ),
        )

    async def send_usage(self, session_id: str, usage: UsageRecord) -> None:
        await self.send(
            session_id, acp_trio.usage_update(usage.used, usage.size, cost=usage.cost)
        )

    async def ask_permission(self, session_id: str, call: ToolCallRecord) -> str | None:
        answer = await self.client.session_request_permission(
            v1.RequestPermissionRequest(
                session_id=session_id,
                tool_call=v1.ToolCallUpdate(
                    tool_call_id=call.tool_call_id, title=call.title, kind="other"
                ),
                options=msgspec.convert(PERMISSION_OPTIONS, list[v1.PermissionOption]),
            )
        )
        outcome = answer.outcome
        if isinstance(outcome, v1.SelectedPermissionOutcome):
            return outcome.option_id
        return None

    async def send_mode(self, session_id: str, mode_id: str) -> None:
        await self.send(session_id, v1.CurrentModeUpdate(current_mode_id=mode_id))

    async def elicit(self, params: Json) -> Json | None:
        if params.get("mode") not in self.elicitation_modes:
            return None  # elicitation.mdx: never a mode the client has not advertised
        request: v1.CreateElicitationRequest = v1.convert(
            params, v1.CreateElicitationRequest
        )
        answer = await self.client.elicitation_create(request)
        return msgspec.convert(msgspec.to_builtins(answer), Json)

    async def elicitation_done(self, elicitation_id: str) -> None:
        await self.client.elicitation_complete(
            v1.CompleteElicitationNotification(elicitation_id=elicitation_id)
        )

    async def send_options(self, session_id: str, options: list[Json]) -> None:
        update = v1.ConfigOptionUpdate(
            config_options=v1.convert(
                shaped(options, v1.SessionConfigOptionSelect),
                list[v1.SessionConfigOption],
            )
        )
        await self.send(session_id, update)


def modes_v1(session: Session) -> v1.SessionModeState:
    return v1.convert(modes(session), v1.SessionModeState)


def options_v1(session: Session) -> list[v1.SessionConfigOption]:
    return v1.convert(
        shaped(config_options(session), v1.SessionConfigOptionSelect),
        list[v1.SessionConfigOption],
    )


def content_block_v1(raw: Json) -> v1.ContentBlock:
    """A stored content block in v1 (one v1 cannot read, as text)."""
    try:
        block: v1.ContentBlock = v1.convert(raw, v1.ContentBlock)
    except msgspec.ValidationError:
        block = v1.TextContent(text=f"[{raw.get('type')} content]")
    return block


def stop_reason_v1(stop_reason: str) -> v1.StopReason:
    return "cancelled" if stop_reason == "cancelled" else "end_turn"


class EchoAgentV1Unstable(EchoAgentV1):
    unstable = True
