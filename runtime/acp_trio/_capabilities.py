"""Capability checks: refuse locally what the peer did not advertise.

The client refuses, before sending, calls the agent's ``initialize`` response
did not advertise (``session/load``, ``session/resume``, ``session/close``,
``session/list``, ``session/delete``, ``additionalDirectories``, MCP servers
of an unsupported transport, prompt content beyond the prompt
capabilities); the agent refuses ``fs/*``, ``terminal/*`` and
``elicitation/create`` towards a client that did not advertise them (v1).
Both sides require absolute ``cwd``, ``additionalDirectories`` entries and
stdio MCP ``command``: refused at the sender, answered -32602 at the
receiver::

    await conn.agent.session_load(...)   # raises CapabilityError if not advertised

Checks read the typed objects of the negotiated version; capabilities
absent, ``null`` or ``false`` mean unsupported (the spec's rule).
"""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

import msgspec

from ._errors import INVALID_PARAMS, CapabilityError, RequestError

__all__ = [
    "CLIENT_CHECKED",
    "AgentCallChecks",
    "agent_capabilities",
    "check_agent_call",
    "check_client_call",
    "check_elicitation_received",
    "check_incoming",
    "client_capabilities",
]

_UNSET: Any = msgspec.UNSET


def _get(obj: Any, *path: str) -> Any:
    for name in path:
        if obj is None or obj is _UNSET:
            return None
        obj = getattr(obj, name, None)
    return None if obj is _UNSET else obj


def _on(obj: Any, *path: str) -> bool:
    value = _get(obj, *path)
    return value is not None and value is not False


class _NoneAdvertised:
    """Capabilities of a peer that advertised none (every check fails)."""

    def __repr__(self) -> str:
        return "<no capabilities advertised>"


NONE_ADVERTISED: Any = _NoneAdvertised()


def agent_capabilities(response: Any) -> Any:
    """The agent capabilities of an ``initialize`` response (v1 or v2)."""
    caps = _get(response, "agent_capabilities")
    if caps is None:
        caps = _get(response, "capabilities")
    return NONE_ADVERTISED if caps is None else caps


def client_capabilities(request: Any) -> Any:
    """The client capabilities of an ``initialize`` request (v1 or v2)."""
    caps = _get(request, "client_capabilities")
    if caps is None:
        caps = _get(request, "capabilities")
    return NONE_ADVERTISED if caps is None else caps


_TYPE_TAGS: dict[type, str] = {}


def _tag(variant: Any) -> str | None:
    cls = type(variant)
    tag = _TYPE_TAGS.get(cls)
    if tag is not None:
        return tag
    tag = getattr(variant, "tag", None)  # OtherVariant (unknown/custom)
    if isinstance(tag, str):
        return tag
    config = getattr(cls, "__struct_config__", None)
    tag = getattr(config, "tag", None)
    if not isinstance(tag, str):
        return None
    if "tag" not in getattr(cls, "__struct_fields__", ("tag",)):
        _TYPE_TAGS[cls] = tag  # a tagged Struct without a ``tag`` field: fixed per type
    return tag


def _is_absolute(path: Any) -> bool:
    return isinstance(path, str) and (
        PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute()
    )


#: Session lifecycle requests whose paths must be absolute (``session/fork``:
#: the unstable surface).
_PATH_CHECKED = frozenset(
    ("session_new", "session_load", "session_resume", "session_list", "session_fork")
)


def _path_problems(handler: str, params: Any) -> dict[str, str] | None:
    """The first non-absolute path of a session lifecycle request, if any."""
    if handler not in _PATH_CHECKED:
        return None
    cwd = _get(params, "cwd")
    if cwd is not None and not _is_absolute(cwd):
        return {"path": "$.params.cwd", "message": "cwd must be an absolute path"}
    for i, d in enumerate(_get(params, "additional_directories") or ()):
        if not _is_absolute(d):
            return {
                "path": f"$.params.additionalDirectories[{i}]",
                "message": "must be an absolute path",
            }
    for i, server in enumerate(_get(params, "mcp_servers") or ()):
        if _tag(server) in (None, "stdio") and not _is_absolute(
            _get(server, "command")
        ):
            return {
                "path": f"$.params.mcpServers[{i}].command",
                "message": "must be an absolute path",
            }
    return None


def check_incoming(version: int, handler: str, params: Any) -> None:
    """Receiver-side checks; raises :class:`RequestError` (-32602)."""
    problem = _path_problems(handler, params)
    if problem is not None:
        raise RequestError(INVALID_PARAMS, "Invalid params", problem)


_CONTENT_CAPS = {"image": "image", "audio": "audio", "resource": "embedded_context"}


#: Handlers :class:`AgentCallChecks` looks at; every other call passes untouched.
_AGENT_CHECKED = frozenset(
    (
        "session_new",
        "session_load",
        "session_resume",
        "session_list",
        "session_close",
        "session_delete",
        "session_prompt",
        "session_fork",
    )
)


class AgentCallChecks:
    """What an agent's capabilities allow, read once (per ``initialize`` answer).

    ``caps`` is the agent's capabilities object (``None`` before
    ``initialize``: nothing is refused then but the path rules).
    """

    __slots__ = (
        "additional_directories",
        "caps",
        "content",
        "mcp_ok",
        "needs",
        "version",
    )

    def __init__(self, version: int, caps: Any) -> None:
        self.version = version
        self.caps = caps
        self.needs: dict[str, bool] = {}
        self.mcp_ok: dict[str, bool] = {}
        self.content: dict[str, bool] = {}  # prompt content tag -> advertised
        self.additional_directories = True
        if caps is None:
            return
        if version == 1:
            session = _get(caps, "session_capabilities")
            load_ok = _on(caps, "load_session")
            prompt = _get(caps, "prompt_capabilities")
            mcp = _get(caps, "mcp_capabilities")
            self.mcp_ok = {
                "stdio": True,
                "http": _on(mcp, "http"),
                "sse": _on(mcp, "sse"),
            }
        else:
            session = _get(caps, "session")
            load_ok = _on(session, "load")
            prompt = _get(session, "prompt")
            mcp = _get(session, "mcp")
            self.mcp_ok = {"stdio": _on(mcp, "stdio"), "http": _on(mcp, "http")}
        self.needs = {
            "session_load": load_ok,
            "session_resume": _on(session, "resume"),
            "session_close": _on(session, "close"),
            "session_list": _on(session, "list"),
            "session_delete": _on(session, "delete"),
            "session_fork": _on(session, "fork"),  # the unstable surface only
        }
        self.additional_directories = _on(session, "additional_directories")
        self.content = {tag: _on(prompt, cap) for tag, cap in _CONTENT_CAPS.items()}

    def check(self, handler: str, params: Any) -> None:
        """Raise :class:`CapabilityError` (or -32602 for a path) if ``params`` may not be sent."""
        if handler not in _AGENT_CHECKED:
            return
        problem = _path_problems(handler, params)
        if problem is not None:
            raise RequestError(INVALID_PARAMS, "Invalid params", problem)
        if self.caps is None:
            return
        if not self.needs.get(handler, True):
            raise CapabilityError(
                f"the agent did not advertise support for {handler.replace('_', '/', 1)}"
            )
        if handler in ("session_new", "session_load", "session_resume", "session_fork"):
            if not self.additional_directories and _get(
                params, "additional_directories"
            ):
                raise CapabilityError(
                    "the agent did not advertise support for additionalDirectories"
                )
            for server in _get(params, "mcp_servers") or ():
                tag = _tag(server) or "stdio"
                if tag.startswith("_"):
                    continue  # custom transports are advertised through extensions
                if not self.mcp_ok.get(tag, False):
                    raise CapabilityError(
                        f"the agent did not advertise support for {tag} MCP servers"
                    )
        elif handler == "session_prompt":
            content = self.content
            for block in _get(params, "prompt") or ():
                kind = _tag(block)
                if not content.get(kind or "", True):
                    raise CapabilityError(
                        f"the agent did not advertise support for {kind} prompt content"
                    )


def check_agent_call(version: int, handler: str, params: Any, caps: Any) -> None:
    """Client-side refusal of a call the agent did not advertise.

    ``caps`` is the agent's capabilities object (``None`` before
    ``initialize``: nothing is refused then but the path rules).  Reads the
    capabilities on every call: a connection keeps an :class:`AgentCallChecks`.
    """
    AgentCallChecks(version, caps).check(handler, params)


_CLIENT_NEEDS = {
    "fs_read_text_file": ("fs", "read_text_file"),
    "fs_write_text_file": ("fs", "write_text_file"),
    "terminal_create": ("terminal",),
    "terminal_output": ("terminal",),
    "terminal_release": ("terminal",),
    "terminal_wait_for_exit": ("terminal",),
    "terminal_kill": ("terminal",),
    "elicitation_create": ("elicitation",),
    "elicitation_complete": ("elicitation", "url"),  # only URL elicitations complete
}

#: Handlers :func:`check_client_call` looks at; every other call passes untouched.
CLIENT_CHECKED = frozenset((*_CLIENT_NEEDS, "elicitation_create"))

_ELICITATION_MODES = ("form", "url")


def _elicitation_mode(params: Any) -> str | None:
    """The ``mode`` of an ``elicitation/create`` request (typed or kept raw)."""
    return _tag(params)


def _elicitation_problem(params: Any, caps: Any) -> str | None:
    """Why ``caps`` (client capabilities) do not allow ``params``' mode, if they don't.

    ``form`` and ``url`` need ``elicitation.form`` / ``elicitation.url``
    present and non-null (``{}`` advertises neither); a ``_``-prefixed custom
    mode needs ``elicitation`` only (its support is advertised through
    ``_meta``, which the runtime does not interpret); an unknown
    non-underscore mode is a future variant no capability here can advertise.
    """
    mode = _elicitation_mode(params)
    if not _on(caps, "elicitation"):
        return "the client did not advertise support for elicitation/create"
    if mode in _ELICITATION_MODES:
        if not _on(caps, "elicitation", mode):
            return f"the client did not advertise {mode} elicitation"
        return None
    if isinstance(mode, str) and mode.startswith("_"):
        return None
    return f"the client did not advertise {mode!r} elicitation"


def check_client_call(version: int, handler: str, params: Any, caps: Any) -> None:
    """Agent-side refusal of a call the client did not advertise.

    v1: ``fs/*``, ``terminal/*``, ``elicitation/create`` per mode
    (``clientCapabilities.elicitation.form`` / ``.url``) and
    ``elicitation/complete`` (URL mode only).
    """
    if handler == "elicitation_create":
        problem = _elicitation_problem(params, caps)
        if problem is not None:
            raise CapabilityError(problem)
        return
    path = _CLIENT_NEEDS.get(handler)
    if path is not None and not _on(caps, *path):
        what = handler.replace("_", "/", 1)
        if handler == "elicitation_complete":
            what = "URL elicitation (elicitation/complete)"
        raise CapabilityError(f"the client did not advertise support for {what}")


def check_elicitation_received(params: Any, own_caps: Any) -> None:
    """Client-side receiver check: a mode this client did not advertise is -32602.

    (v1 elicitation: "Requests using a mode the Client has not advertised
    produce JSON-RPC -32602".)
    """
    problem = _elicitation_problem(params, own_caps)
    if problem is not None:
        raise RequestError(
            INVALID_PARAMS,
            "Invalid params",
            {
                "path": "$.params.mode",
                "message": problem.replace("the client", "this client"),
            },
        )
