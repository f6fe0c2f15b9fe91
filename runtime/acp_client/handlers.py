"""What the client serves the agent: one class per protocol version, each
subclassing the generated ``Client`` Protocol so the type checker checks
every handler (``fs/read_text_file`` -> ``fs_read_text_file``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import acp_trio
import msgspec
from acp_schema import v1
from acp_schema import v2_alpha0 as v2

from acp_client.calls import Json
from acp_client.text import optional

if TYPE_CHECKING:
    from acp_client.app import App


class ClientV1(v1.Client):
    """Serves a v1 agent: updates, permissions, elicitations, files and terminals."""

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent], app: App):
        self.app = app

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.app.screen.update(params)

    async def unknown_variant(self, message: acp_trio.UnknownVariant) -> None:
        """A message of an agent on a newer spec (an update kind we do not
        know): shown as one line, not dropped silently."""
        self.app.screen.unknown(message)

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        title = self.app.tool_title(
            params.tool_call.tool_call_id, params.tool_call.title
        )
        option = await self.app.asker.choose(title, params.options)
        self.app.remember(params.session_id, params.tool_call, option)
        if option is None:
            return v1.RequestPermissionResponse(
                outcome=v1.RequestPermissionOutcomeCancelled()
            )
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=option.option_id)
        )

    async def elicitation_create(
        self, params: v1.CreateElicitationRequest
    ) -> v1.CreateElicitationResponse:
        raw = msgspec.convert(msgspec.to_builtins(params), Json)
        outcome = await self.app.elicitor.answer(raw)
        answer: v1.CreateElicitationResponse = v1.convert(
            outcome.wire(), v1.CreateElicitationResponse
        )
        return answer

    async def elicitation_complete(
        self, params: v1.CompleteElicitationNotification
    ) -> None:
        self.app.elicitor.complete(params.elicitation_id)

    async def fs_read_text_file(
        self, params: v1.ReadTextFileRequest
    ) -> v1.ReadTextFileResponse:
        content = await self.app.workspace.read(
            params.path, optional(params.line), optional(params.limit)
        )
        return v1.ReadTextFileResponse(content=content)

    async def fs_write_text_file(
        self, params: v1.WriteTextFileRequest
    ) -> v1.WriteTextFileResponse:
        await self.app.workspace.write(params.session_id, params.path, params.content)
        return v1.WriteTextFileResponse()

    async def terminal_create(
        self, params: v1.CreateTerminalRequest
    ) -> v1.CreateTerminalResponse:
        env = optional(params.env) or []
        terminal_id = await self.app.terminals.create(
            params.session_id,
            params.command,
            list(optional(params.args) or []),
            {e.name: e.value for e in env},
            optional(params.cwd),
            optional(params.output_byte_limit),
        )
        return v1.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, params: v1.TerminalOutputRequest
    ) -> v1.TerminalOutputResponse:
        terminal = self.app.terminals.get(params.session_id, params.terminal_id)
        status = None
        if terminal.exited.is_set():
            status = v1.TerminalExitStatus(
                exit_code=terminal.exit_code, signal=terminal.signal_name
            )
        return v1.TerminalOutputResponse(
            output=terminal.output.decode("utf-8", errors="replace"),
            truncated=terminal.truncated,
            exit_status=status,
        )

    async def terminal_wait_for_exit(
        self, params: v1.WaitForTerminalExitRequest
    ) -> v1.WaitForTerminalExitResponse:
        terminal = self.app.terminals.get(params.session_id, params.terminal_id)
        await terminal.exited.wait()
        return v1.WaitForTerminalExitResponse(
            exit_code=terminal.exit_code, signal=terminal.signal_name
        )

    async def terminal_kill(
        self, params: v1.KillTerminalRequest
    ) -> v1.KillTerminalResponse:
        terminal = self.app.terminals.get(params.session_id, params.terminal_id)
        await self.app.terminals.kill(terminal)
        return v1.KillTerminalResponse()

    async def terminal_release(
        self, params: v1.ReleaseTerminalRequest
    ) -> v1.ReleaseTerminalResponse:
        await self.app.terminals.release(params.session_id, params.terminal_id)
        return v1.ReleaseTerminalResponse()


class ClientV2(v2.Client):
    """Serves a v2 agent: updates and permissions (v2 has no fs or terminal)."""

    def __init__(self, conn: acp_trio.ClientSideConnection[v2.Agent], app: App):
        self.app = app

    async def unknown_variant(self, message: acp_trio.UnknownVariant) -> None:
        """A message of an agent on a newer spec (an update kind we do not
        know): shown as one line, not dropped silently."""
        self.app.screen.unknown(message)

    async def session_update(self, params: v2.SessionNotification) -> None:
        self.app.screen.update(params)

    async def session_request_permission(
        self, params: v2.RequestPermissionRequest
    ) -> v2.RequestPermissionResponse:
        # 2.0.0-alpha.3 moves the tool call under ``subject`` and adds a title
        call: object = getattr(params, "tool_call", None) or getattr(
            getattr(params, "subject", None), "tool_call", None
        )
        tool_call_id: object = getattr(call, "tool_call_id", None)
        given: object = getattr(params, "title", None) or getattr(call, "title", None)
        title = self.app.tool_title(
            tool_call_id if isinstance(tool_call_id, str) else "?",
            given if isinstance(given, str) else None,
        )
        option = await self.app.asker.choose(title, params.options)
        self.app.remember(params.session_id, call, option)
        if option is None:
            return v2.RequestPermissionResponse(
                outcome=v2.RequestPermissionOutcomeCancelled()
            )
        return v2.RequestPermissionResponse(
            outcome=v2.SelectedPermissionOutcome(option_id=option.option_id)
        )
