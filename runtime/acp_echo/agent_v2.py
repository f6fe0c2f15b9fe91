"""The echo agent over protocol v2 (the 2.0.0-alpha.0 draft):
``EchoAgentV2(v2.Agent)`` over :class:`~acp_echo.agent.EchoCore`."""

from __future__ import annotations

import logging

import acp_trio
import msgspec
from acp_schema import v2_alpha0 as v2

from acp_echo.agent import (
    AGENT_NAME,
    AGENT_VERSION,
    PERMISSION_OPTIONS,
    EchoCore,
    SessionSetup,
)
from acp_echo.content import setup_meta, to_json
from acp_echo.options import config_options, shaped
from acp_echo.store import (
    Json,
    Message,
    PlanRecord,
    Session,
    ToolCallRecord,
    UsageRecord,
    optional,
)

log = logging.getLogger("echo_agent")


# -- protocol v2 -------------------------------------------------------------------------
#
# v2 is a draft: the messages a later draft moves (initialize, capabilities, the
# permission request, the prompt's answer) are written as JSON with both
# spellings and converted by the version's types, which keep the keys they
# declare; so this class also serves a tree bumped to 2.0.0-alpha.3.


class EchoAgentV2(EchoCore, v2.Agent):
    """The echo agent over protocol v2: typed handlers of ``v2.Agent``."""

    def __init__(self, conn: acp_trio.AgentSideConnection[v2.Client]) -> None:
        super().__init__()
        self.client = conn.client

    async def send(self, session_id: str, update: v2.SessionUpdate) -> None:
        await self.client.session_update(acp_trio.notification(session_id, update))

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        session: Json = {
            "prompt": {"embeddedContext": {}},
            "mcp": {"stdio": {}, "http": {}},
            "load": {},
            "resume": {},
            "close": {},
            "list": {},
            "delete": {},
            "additionalDirectories": {},
        }
        if self.unstable:
            session["fork"] = {}
        info = {"name": AGENT_NAME, "title": "Echo agent", "version": AGENT_VERSION}
        response: v2.InitializeResponse = v2.convert(
            {
                "protocolVersion": 2,
                "capabilities": {"session": session},
                "agentInfo": info,
                "info": info,  # 2.0.0-alpha.3's name for agentInfo
            },
            v2.AGENT_METHODS["initialize"].result,
        )
        return response

    @staticmethod
    def setup_of(
        params: v2.NewSessionRequest
        | v2.LoadSessionRequest
        | v2.ResumeSessionRequest
        | v2.ForkSessionRequest,
    ) -> SessionSetup:
        servers = to_json(optional(params.mcp_servers) or [])
        directories = list(optional(params.additional_directories) or [])
        return SessionSetup(params.cwd, directories, servers)

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        session = self.open_new(self.setup_of(params))
        return v2.NewSessionResponse(
            session_id=session.session_id,
            config_options=options_v2(session),
            meta=setup_meta(session),
        )

    async def session_load(
        self, params: v2.LoadSessionRequest
    ) -> v2.LoadSessionResponse:
        session = await self.open_loaded(params.session_id, self.setup_of(params))
        return v2.LoadSessionResponse(
            config_options=options_v2(session), meta=setup_meta(session)
        )

    async def session_resume(
        self, params: v2.ResumeSessionRequest
    ) -> v2.ResumeSessionResponse:
        session = self.open_resumed(params.session_id, self.setup_of(params))
        return v2.ResumeSessionResponse(
            config_options=options_v2(session), meta=setup_meta(session)
        )

    async def session_fork(
        self, params: v2.ForkSessionRequest
    ) -> v2.ForkSessionResponse:
        session = self.open_forked(params.session_id, self.setup_of(params))
        return v2.ForkSessionResponse(
            session_id=session.session_id, meta=setup_meta(session)
        )

    async def session_close(
        self, params: v2.CloseSessionRequest
    ) -> v2.CloseSessionResponse:
        self.forget(params.session_id)
        return v2.CloseSessionResponse()

    async def session_list(
        self, params: v2.ListSessionsRequest
    ) -> v2.ListSessionsResponse:
        answer = self.listing(optional(params.cwd), optional(params.cursor))
        return v2.convert(answer, v2.ListSessionsResponse)

    async def session_delete(
        self, params: v2.DeleteSessionRequest
    ) -> v2.DeleteSessionResponse:
        self.delete(params.session_id)
        return v2.DeleteSessionResponse()

    async def session_set_config_option(
        self, params: v2.SetSessionConfigOptionRequest
    ) -> v2.SetSessionConfigOptionResponse:
        raw = msgspec.convert(msgspec.to_builtins(params), Json)
        session = await self.set_config(
            str(raw.get("sessionId")), str(raw.get("configId")), raw.get("value")
        )
        return v2.SetSessionConfigOptionResponse(config_options=options_v2(session))

    async def session_cancel(self, params: v2.CancelNotification) -> None:
        log.info("session %s: cancel requested", params.session_id)

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        stop_reason = await self.run_turn(params.session_id, to_json(params.prompt))
        # 2.0.0-alpha.3 reports the stop reason in a state update instead
        response: v2.PromptResponse = v2.convert(
            {"stopReason": stop_reason}, v2.AGENT_METHODS["session/prompt"].result
        )
        return response

    # updates ---------------------------------------------------------------------

    async def send_text(self, session_id: str, text: str, message_id: str) -> None:
        update = acp_trio.agent_text(text, message_id=message_id, version=v2)
        await self.send(session_id, update)

    async def send_message(self, session_id: str, message: Message) -> None:
        # v2 replays whole messages: upserts keyed by messageId.
        blocks = [content_block_v2(raw) for raw in message.content]
        update: v2.SessionUpdate
        if message.role == "user":
            update = v2.UserMessage(message_id=message.message_id, content=blocks)
        else:
            update = v2.AgentMessage(message_id=message.message_id, content=blocks)
        await self.send(session_id, update)

    async def send_plan(self, session_id: str, plan: PlanRecord) -> None:
        entries = [
            acp_trio.plan_entry(
                e.content, priority=e.priority, status=e.status, version=v2
            )
            for e in plan.entries
        ]
        await self.send(
            session_id, acp_trio.plan(entries, plan_id=plan.plan_id, version=v2)
        )

    async def send_tool_call(self, session_id: str, call: ToolCallRecord) -> None:
        output = (
            [acp_trio.tool_content(call.output, version=v2)]
            if call.output is not None
            else []
        )
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
                version=v2,
            ),
        )

    async def send_tool_status(self, session_id: str, call: ToolCallRecord) -> None:
        output = (
            [acp_trio.tool_content(call.output, version=v2)]
            if call.output is not None
            else []
        )
        await self.send(
            session_id,
            acp_trio.tool_call_update(
                call.tool_call_id,
                status=call.status,
                content=output or msgspec.UNSET,
                version=v2,
            ),
        )

    async def send_usage(self, session_id: str, usage: UsageRecord) -> None:
        update = acp_trio.usage_update(
            usage.used, usage.size, cost=usage.cost, version=v2
        )
        await self.send(session_id, update)

    async def ask_permission(self, session_id: str, call: ToolCallRecord) -> str | None:
        subject = {
            "toolCallId": call.tool_call_id,
            "title": call.title,
            "kind": "other",
        }
        request: v2.RequestPermissionRequest = v2.convert(
            {
                "sessionId": session_id,
                "toolCall": subject,
                # 2.0.0-alpha.3: a title and a subject instead of toolCall
                "title": call.title,
                "subject": {"type": "tool_call", "toolCall": subject},
                "options": PERMISSION_OPTIONS,
            },
            v2.CLIENT_METHODS["session/request_permission"].params,
        )
        answer = await self.client.session_request_permission(request)
        outcome = answer.outcome
        if isinstance(outcome, v2.SelectedPermissionOutcome):
            return outcome.option_id
        return None

    async def send_mode(self, session_id: str, mode_id: str) -> None:
        pass  # v2 has no modes: the config option says it

    async def elicit(self, params: Json) -> Json | None:
        return None  # the 2.0.0-alpha.0 draft has no elicitation

    async def elicitation_done(self, elicitation_id: str) -> None:
        pass

    async def send_options(self, session_id: str, options: list[Json]) -> None:
        update = v2.ConfigOptionUpdate(
            config_options=v2.convert(
                shaped(options, v2.SessionConfigOptionSelect),
                list[v2.SessionConfigOption],
            )
        )
        await self.send(session_id, update)


def options_v2(session: Session) -> list[v2.SessionConfigOption]:
    return v2.convert(
        shaped(config_options(session), v2.SessionConfigOptionSelect),
        list[v2.SessionConfigOption],
    )


def content_block_v2(raw: Json) -> v2.ContentBlock:
    """A stored content block in v2 (one v2 cannot read, as text)."""
    try:
        block: v2.ContentBlock = v2.convert(raw, v2.ContentBlock)
    except msgspec.ValidationError:
        block = v2.TextContent(text=f"[{raw.get('type')} content]")
    return block


class EchoAgentV2Unstable(EchoAgentV2):
    unstable = True
