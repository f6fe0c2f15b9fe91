"""Calling the agent: ``AgentCalls``, whatever the protocol version, over the
generated ``Agent`` Protocols (``AgentV1``, ``AgentV2``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol, TypeAlias, cast

import msgspec
from acp_schema import v1
from acp_schema import v2_alpha0 as v2

from acp_client.text import Failure


@dataclass(frozen=True)
class McpSpec:
    """An ``--mcp NAME=COMMAND|URL`` value."""

    name: str
    url: str | None = None
    command: str = ""
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Setup:
    """What a session is opened with."""

    cwd: str
    additional_directories: list[str]
    mcp: list[McpSpec]


class AgentCalls(Protocol):
    """The calls the app makes, whatever the protocol version."""

    opened: Json  # the last session/new or session/load answer, as wire JSON

    async def new_session(self, setup: Setup) -> str: ...
    async def load_session(self, session_id: str, setup: Setup) -> None: ...
    async def authenticate(self, method_id: str) -> None: ...
    async def prompt(self, session_id: str, text: str) -> str: ...
    async def cancel(self, session_id: str) -> None: ...
    async def call(self, method: str, params: dict[str, object]) -> Json: ...


Json: TypeAlias = dict[str, object]


async def call_by_table(
    schema: ModuleType, agent: object, method: str, params: Json
) -> Json:
    """Any agent method by its wire name, through the version's generated method
    table (``AGENT_METHODS``): params and result as wire JSON.  A method the
    version does not have is a :class:`Failure`."""
    table = cast("dict[str, Any]", schema.AGENT_METHODS)
    spec = table.get(method)
    if spec is None:
        raise Failure(f"{method}: not a method of this protocol version")
    handler = cast(
        "Callable[[object], Awaitable[object]]", getattr(agent, spec.handler)
    )
    return wire_json(await handler(schema.convert(params, spec.params)))


def wire_json(answer: object) -> Json:
    """An answer as wire JSON (``{}`` if it is not an object)."""
    value: object = msgspec.to_builtins(answer)
    return cast("Json", value) if isinstance(value, dict) else {}


def command_path(command: str) -> str:
    return shutil.which(command) or os.path.abspath(command)


def session_fields(schema: ModuleType, setup: Setup) -> dict[str, Any]:
    """The fields of ``session/new`` and ``session/load`` that ``setup`` gives,
    as ``schema``'s types (v1 and v2 name them alike): ``cwd``, ``mcp_servers``
    (``--mcp``: HTTP by URL, else stdio by command) and
    ``additional_directories``."""
    servers: list[Any] = []
    for spec in setup.mcp:
        if spec.url is not None:
            servers.append(
                schema.McpServerHttp(name=spec.name, url=spec.url, headers=[])
            )
        else:
            servers.append(
                schema.McpServerStdio(
                    name=spec.name,
                    command=command_path(spec.command),
                    args=list(spec.args),
                    env=[],
                )
            )
    return {
        "cwd": setup.cwd,
        "mcp_servers": servers,
        "additional_directories": setup.additional_directories or msgspec.UNSET,
    }


class AgentV1:
    def __init__(self, agent: v1.Agent) -> None:
        self.agent = agent
        self.opened: Json = {}  # the last session/new or session/load answer

    async def call(self, method: str, params: Json) -> Json:
        return await call_by_table(v1, self.agent, method, params)

    async def new_session(self, setup: Setup) -> str:
        fields = session_fields(v1, setup)
        new = await self.agent.session_new(v1.NewSessionRequest(**fields))
        self.opened = wire_json(new)
        return new.session_id

    async def load_session(self, session_id: str, setup: Setup) -> None:
        fields = session_fields(v1, setup)
        request = v1.LoadSessionRequest(session_id=session_id, **fields)
        self.opened = wire_json(await self.agent.session_load(request))

    async def authenticate(self, method_id: str) -> None:
        await self.agent.authenticate(v1.AuthenticateRequest(method_id=method_id))

    async def prompt(self, session_id: str, text: str) -> str:
        result = await self.agent.session_prompt(
            v1.PromptRequest(session_id=session_id, prompt=[v1.TextContent(text=text)])
        )
        return result.stop_reason

    async def cancel(self, session_id: str) -> None:
        await self.agent.session_cancel(v1.CancelNotification(session_id=session_id))


class AgentV2:
    def __init__(self, agent: v2.Agent) -> None:
        self.agent = agent
        self.opened: Json = {}  # the last session/new or session/load answer

    async def call(self, method: str, params: Json) -> Json:
        return await call_by_table(v2, self.agent, method, params)

    async def new_session(self, setup: Setup) -> str:
        fields = session_fields(v2, setup)
        new = await self.agent.session_new(v2.NewSessionRequest(**fields))
        self.opened = wire_json(new)
        return new.session_id

    async def load_session(self, session_id: str, setup: Setup) -> None:
        if not hasattr(v2, "LoadSessionRequest"):  # gone in 2.0.0-alpha.3
            raise Failure("--load: this draft of protocol v2 has no session/load")
        fields = session_fields(v2, setup)
        request = v2.LoadSessionRequest(session_id=session_id, **fields)
        self.opened = wire_json(await self.agent.session_load(request))

    async def authenticate(self, method_id: str) -> None:
        if not hasattr(v2, "AuthenticateRequest"):  # auth/login in 2.0.0-alpha.3
            raise Failure("--auth: this draft of protocol v2 has no authenticate")
        await self.agent.authenticate(v2.AuthenticateRequest(method_id=method_id))

    async def prompt(self, session_id: str, text: str) -> str:
        result = await self.agent.session_prompt(
            v2.PromptRequest(session_id=session_id, prompt=[v2.TextContent(text=text)])
        )
        # 2.0.0-alpha.3 reports the stop reason in a state update instead
        stop_reason: object = getattr(result, "stop_reason", None)
        return stop_reason if isinstance(stop_reason, str) else "(not in the answer)"

    async def cancel(self, session_id: str) -> None:
        # by the method table: 2.0.0-alpha.3 renames CancelNotification
        cancel = v2.AGENT_METHODS["session/cancel"].params
        await self.agent.session_cancel(cancel(session_id=session_id))
