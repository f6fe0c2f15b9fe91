"""Capability and path checks: refuse what the peer did not advertise, or may not ask.

The client refuses, before sending, calls the agent's ``initialize`` response
did not advertise (``session/load``, ``session/resume``, ``session/close``,
``session/list``, ``session/delete``, ``additionalDirectories``, MCP servers
of an unsupported transport, prompt content beyond the prompt
capabilities); the agent refuses ``fs/*``, ``terminal/*`` and
``elicitation/create`` towards a client that did not advertise them (v1)::

    await conn.agent.session_load(...)   # raises CapabilityError if not advertised

At the receiver, the client answers the agent's ``fs/*`` and ``terminal/*``
requests its own ``initialize`` did not advertise with -32601 before its
handlers see them (:class:`ReceivedCallChecks`), and ``elicitation/create``
in a mode it did not advertise with -32602.

Paths: ``cwd``, ``additionalDirectories`` entries and stdio MCP ``command``
of the session requests, ``fs/*``'s ``path`` and ``terminal/create``'s
``cwd`` must be absolute and contain no NUL.  The sender refuses (-32602,
raised locally) a path absolute on no platform (:func:`is_absolute_anywhere`:
it cannot know the receiver's host); the receiver answers -32602, with
``data.path``, a path that is not absolute on *its* host
(:func:`is_absolute_here`: on POSIX ``C:\\x`` and ``\\\\server\\share``
are relative).

Checks read the typed objects of the negotiated version (v1's
``clientCapabilities``, v2's ``capabilities``); capabilities absent,
``null`` or ``false`` mean unsupported (the spec's rule).

A rule the version's schema cannot serve (a later draft renamed or dropped
the capability or the path field it reads) is left out for that version,
with one WARNING per version and rule (:class:`SchemaChecks`,
:mod:`acp_core._support`): the method is then served and sent unchecked,
never refused for a capability no client could advertise.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath, PurePosixPath, PureWindowsPath
from typing import Any

import msgspec

from ._errors import INVALID_PARAMS, CapabilityError, RequestError, method_not_found
from ._support import support

__all__ = [
    "CLIENT_CHECKED",
    "AgentCallChecks",
    "ReceivedCallChecks",
    "SchemaChecks",
    "agent_capabilities",
    "check_agent_call",
    "check_client_call",
    "check_elicitation_received",
    "check_incoming",
    "client_capabilities",
    "is_absolute_anywhere",
    "is_absolute_here",
    "schema_checks",
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
    cls: Any = variant.__class__
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


def is_absolute_anywhere(path: Any) -> bool:
    """The sender's rule: absolute for POSIX or for Windows, no NUL.

    The sender cannot know the receiver's host (a client on Windows may drive
    an agent on Linux over a socket), so it only refuses what is absolute
    nowhere.
    """
    return (
        isinstance(path, str)
        and "\0" not in path
        and (PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute())
    )


def is_absolute_here(path: Any) -> bool:
    """The receiver's rule: absolute on this host, no NUL.

    On POSIX ``C:\\x``, ``c:/../../etc`` and ``\\\\server\\share`` are
    relative (they would resolve under the process's working directory); on
    Windows ``/etc`` is (no drive).
    """
    return isinstance(path, str) and "\0" not in path and PurePath(path).is_absolute()


def _bad_path(field: str, value: Any) -> dict[str, str]:
    what = field.rsplit(".", 1)[-1].split("[", 1)[0]
    if isinstance(value, str) and "\0" in value:
        return {"path": field, "message": f"{what} must not contain a NUL character"}
    return {"path": field, "message": f"{what} must be an absolute path"}


#: Session lifecycle requests whose paths must be absolute (``session/fork``:
#: the unstable surface).
_SESSION_REQUESTS = (
    "session_new",
    "session_load",
    "session_resume",
    "session_list",
    "session_fork",
)
_PATH_CHECKED = frozenset(_SESSION_REQUESTS)

#: Agent requests carrying one path that must be absolute (``terminal/create``'s
#: ``cwd`` is optional; ``command`` may be a bare name, looked up in ``PATH``).
_FILE_PATHS: dict[str, str] = {
    "fs_read_text_file": "path",
    "fs_write_text_file": "path",
    "terminal_create": "cwd",
}

#: The path fields of the session requests, as attribute paths in their
#: params (the stdio MCP server's ``command`` inside ``mcp_servers``).
_SESSION_PATHS = (("cwd",), ("additional_directories",), ("mcp_servers", "command"))

#: The path fields each path rule expects its method's params to declare: a
#: schema declaring none of them loses that rule, with a warning.  (The
#: session requests' fields are checked wherever declared; ``session/list``
#: has only a ``cwd`` filter.)
_PATH_EXPECTED: dict[str, tuple[tuple[str, ...], ...]] = {
    **{handler: ((field,),) for handler, field in _FILE_PATHS.items()},
    **{handler: _SESSION_PATHS for handler in _SESSION_REQUESTS},
    "session_list": (("cwd",),),
}


def _path_problems(
    handler: str,
    params: Any,
    absolute: Callable[[Any], bool] = is_absolute_anywhere,
    checks: SchemaChecks | None = None,
) -> dict[str, str] | None:
    """The first path of ``params`` that ``absolute`` refuses, if any (only
    the fields ``checks``' schema declares)."""
    fields = (checks or ALL_CHECKS).path_fields.get(handler)
    if fields is None:
        return None
    for field in fields:
        if field == "additional_directories":
            for i, d in enumerate(_get(params, field) or ()):
                if not absolute(d):
                    return _bad_path(f"$.params.additionalDirectories[{i}]", d)
        elif field == "mcp_servers":
            for i, server in enumerate(_get(params, field) or ()):
                command = _get(server, "command")
                if _tag(server) in (None, "stdio") and not absolute(command):
                    return _bad_path(f"$.params.mcpServers[{i}].command", command)
        else:  # path, cwd: optional in some requests
            value = _get(params, field)
            if value is not None and not absolute(value):
                return _bad_path(f"$.params.{field}", value)
    return None


#: Handlers whose params :func:`check_incoming` looks at (the others pass untouched).
INCOMING_CHECKED: frozenset[str] = frozenset((*_FILE_PATHS, *_PATH_CHECKED))


def check_incoming(version: int, handler: str, params: Any, module: Any = None) -> None:
    """Receiver-side path rules (the host's); raises :class:`RequestError` (-32602).

    ``module``: the version's generated module (its path rules only, see
    :class:`SchemaChecks`); None: every rule.
    """
    checks = None if module is None else schema_checks(module)
    problem = _path_problems(handler, params, is_absolute_here, checks)
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
        "schema_checks",
        "version",
    )

    def __init__(self, version: int, caps: Any, module: Any = None) -> None:
        self.version = version
        self.caps = caps
        self.schema_checks = None if module is None else schema_checks(module)
        self.needs: dict[str, bool] = {}
        self.mcp_ok: dict[str, bool] = {}
        self.content: dict[str, bool] = {}  # prompt content tag -> advertised
        self.additional_directories = True
        if caps is None:
            return
        if version == 1:
            session_at: tuple[str, ...] = ("session_capabilities",)
            load_at: tuple[str, ...] = ("load_session",)
            prompt = _get(caps, "prompt_capabilities")
            mcp = _get(caps, "mcp_capabilities")
            self.mcp_ok = {
                "stdio": True,
                "http": _on(mcp, "http"),
                "sse": _on(mcp, "sse"),
            }
        else:
            session_at = ("session",)
            load_at = ("session", "load")
            prompt = _get(caps, "session", "prompt")
            mcp = _get(caps, "session", "mcp")
            self.mcp_ok = {"stdio": _on(mcp, "stdio"), "http": _on(mcp, "http")}
        paths = {
            "session_load": load_at,
            "session_resume": (*session_at, "resume"),
            "session_close": (*session_at, "close"),
            "session_list": (*session_at, "list"),
            "session_delete": (*session_at, "delete"),
            "session_fork": (*session_at, "fork"),  # the unstable surface only
        }
        self.needs = {h: _on(caps, *path) for h, path in paths.items()}
        if module is not None:
            self._unchecked(module, paths)
        session = _get(caps, *session_at)
        self.additional_directories = _on(session, "additional_directories")
        self.content = {tag: _on(prompt, cap) for tag, cap in _CONTENT_CAPS.items()}

    def _unchecked(self, module: Any, paths: dict[str, tuple[str, ...]]) -> None:
        """Methods of ``module`` whose gating capability its schema does not
        declare (a later draft moved it): sent unchecked, with one warning."""
        known = support(module)
        for handler, path in paths.items():
            wire = handler.replace("_", "/", 1)
            if known.declares("agent", *path) or not known.vocab.has_method(wire):
                continue
            self.needs[handler] = True
            known.warn(
                f"{wire} is sent without a capability check",
                f"its agent capabilities declare no {'.'.join(path)}",
            )

    def check(self, handler: str, params: Any) -> None:
        """Raise :class:`CapabilityError` (or -32602 for a path) if ``params`` may not be sent."""
        if handler not in _AGENT_CHECKED:
            return
        problem = _path_problems(
            handler, params, is_absolute_anywhere, self.schema_checks
        )
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


def _elicitation_problem(
    params: Any, caps: Any, checks: SchemaChecks | None = None
) -> str | None:
    """Why ``caps`` (client capabilities) do not allow ``params``' mode, if they don't.

    ``form`` and ``url`` need ``elicitation.form`` / ``elicitation.url``
    present and non-null (``{}`` advertises neither); a ``_``-prefixed custom
    mode needs ``elicitation`` only (its support is advertised through
    ``_meta``, which the runtime does not interpret); an unknown
    non-underscore mode is a future variant no capability here can advertise.
    """
    checks = checks or ALL_CHECKS
    if "elicitation_create" not in checks.client_needs:
        return None  # the schema declares no elicitation capability (warned)
    mode = _elicitation_mode(params)
    if not _on(caps, "elicitation"):
        return "the client did not advertise support for elicitation/create"
    if mode in _ELICITATION_MODES:
        if mode in checks.elicitation_modes and not _on(caps, "elicitation", mode):
            return f"the client did not advertise {mode} elicitation"
        return None
    if isinstance(mode, str) and mode.startswith("_"):
        return None
    return f"the client did not advertise {mode!r} elicitation"


def check_client_call(
    version: int, handler: str, params: Any, caps: Any, module: Any = None
) -> None:
    """Agent-side refusal of a call the client did not advertise.

    v1: ``fs/*``, ``terminal/*``, ``elicitation/create`` per mode
    (``clientCapabilities.elicitation.form`` / ``.url``) and
    ``elicitation/complete`` (URL mode only).  ``module``: the version's
    generated module (the rules its schema can serve, :class:`SchemaChecks`);
    None: every rule.
    """
    checks = ALL_CHECKS if module is None else schema_checks(module)
    if handler == "elicitation_create":
        problem = _elicitation_problem(params, caps, checks)
        if problem is not None:
            raise CapabilityError(problem)
        return
    missing = _client_missing(handler, caps, checks)
    if missing is not None:
        raise CapabilityError(missing)
    bad = _path_problems(handler, params, is_absolute_anywhere, checks)
    if bad is not None:
        raise RequestError(INVALID_PARAMS, "Invalid params", bad)


def _client_missing(
    handler: str, caps: Any, checks: SchemaChecks | None = None
) -> str | None:
    """Why ``caps`` (client capabilities) do not allow ``handler``, if they don't."""
    path = (checks or ALL_CHECKS).client_needs.get(handler)
    if path is None or _on(caps, *path):
        return None
    what = handler.replace("_", "/", 1)
    if handler == "elicitation_complete":
        what = "URL elicitation (elicitation/complete)"
    return f"the client did not advertise support for {what}"


class SchemaChecks:
    """The capability and path rules one version's schema can serve.

    The rules read a client capability (``fs.read_text_file``, ``terminal``,
    ``elicitation.form``) or a params field (``path``, ``cwd``,
    ``mcp_servers[].command``) by its attribute name.  Where a version's
    schema does not declare it (a later draft renamed or dropped it), that
    rule is left out for that version, with one WARNING per version and rule
    (:meth:`Support.warn <acp_core._support.Support.warn>`): the methods it
    gates are sent and served unchecked, never refused for a capability no
    peer could advertise, and the path is not checked.  The other rules and
    versions keep working.  Built once per generated module
    (:func:`schema_checks`); :data:`ALL_CHECKS` keeps every rule.
    """

    __slots__ = ("client_needs", "elicitation_modes", "path_fields")

    def __init__(self, module: Any = None) -> None:
        #: handler -> the client capability (attribute path) it needs.
        self.client_needs: dict[str, tuple[str, ...]] = dict(_CLIENT_NEEDS)
        #: The elicitation modes whose capability is checked.
        self.elicitation_modes: frozenset[str] = frozenset(_ELICITATION_MODES)
        #: handler -> the path fields (first attribute) checked in its params.
        self.path_fields: dict[str, tuple[str, ...]] = {
            handler: tuple(path[0] for path in paths)
            for handler, paths in _PATH_EXPECTED.items()
        }
        if module is not None:
            self._serve(module)

    def _serve(self, module: Any) -> None:
        known = support(module)
        unchecked: dict[tuple[str, ...], list[str]] = {}
        for handler, path in _CLIENT_NEEDS.items():
            method = known.method_of(handler)
            if method is None or known.declares("client", *path):
                continue
            del self.client_needs[handler]
            unchecked.setdefault(path, []).append(method.name)
        for path, names in unchecked.items():
            known.warn(
                f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} "
                "not checked against the client capabilities",
                f"its client capabilities declare no {'.'.join(path)}",
            )
        if known.method_of("elicitation_create") is not None and known.declares(
            "client", "elicitation"
        ):
            modes: list[str] = []
            for mode in _ELICITATION_MODES:
                if known.declares("client", "elicitation", mode):
                    modes.append(mode)
                else:
                    known.warn(
                        f"elicitation/create in {mode} mode is not checked "
                        "against the client capabilities",
                        f"its client capabilities declare no elicitation.{mode}",
                    )
            self.elicitation_modes = frozenset(modes)
        unchecked.clear()
        for handler, expected in _PATH_EXPECTED.items():
            method = known.method_of(handler)
            if method is None:
                continue
            fields: list[str] = []
            for path in _SESSION_PATHS if handler in _PATH_CHECKED else expected:
                if known.params_declare(handler, *path):
                    fields.append(path[0])
                elif path in expected:
                    unchecked.setdefault(path, []).append(method.name)
            self.path_fields[handler] = tuple(fields)
        for path, names in unchecked.items():
            one = len(names) == 1
            known.warn(
                f"the {'.'.join(path)} of {', '.join(names)} is not checked "
                "for an absolute path",
                f"{'its' if one else 'their'} params declare no {'.'.join(path)}",
            )

    def __repr__(self) -> str:
        return (
            f"<SchemaChecks needs={sorted(self.client_needs)} "
            f"modes={sorted(self.elicitation_modes)} paths={self.path_fields}>"
        )


#: Every rule (no schema consulted).
ALL_CHECKS = SchemaChecks()

_SCHEMA_CHECKS: dict[Any, SchemaChecks] = {}


def schema_checks(module: Any) -> SchemaChecks:
    """The (cached) :class:`SchemaChecks` of a generated module."""
    found = _SCHEMA_CHECKS.get(module)
    if found is None:
        found = _SCHEMA_CHECKS[module] = SchemaChecks(module)
    return found


class ReceivedCallChecks:
    """The client as receiver: agent methods its ``initialize`` did not advertise.

    ``refusals`` maps each such wire name of ``schema``'s incoming table to
    the error answering it: -32601 (JSON-RPC: "the method does not exist /
    is not available"), ``data: {"method", "message"}``, the message worded
    as the agent side's local refusal.  A notification found there
    (``elicitation/complete`` without URL elicitation) is dropped.
    ``elicitation/create`` is not here: its modes are checked on its params
    (-32602, :func:`check_elicitation_received`).  Built once per
    (schema, capabilities): the client looks names up on each message.
    """

    __slots__ = ("caps", "refusals", "schema")

    def __init__(self, schema: Any, own_caps: Any) -> None:
        self.schema = schema
        self.caps = own_caps
        self.refusals: dict[str, RequestError] = {}
        checks = schema_checks(schema.module)
        for name, method in schema.incoming.items():
            if method.handler == "elicitation_create":
                continue
            missing = _client_missing(method.handler, own_caps, checks)
            if missing is not None:
                self.refusals[name] = method_not_found(
                    name,
                    {
                        "method": name,
                        "message": missing.replace("the client", "this client"),
                    },
                )


def check_elicitation_received(params: Any, own_caps: Any, module: Any = None) -> None:
    """Client-side receiver check: a mode this client did not advertise is -32602.

    (v1 elicitation: "Requests using a mode the Client has not advertised
    produce JSON-RPC -32602".)  ``module``: as :func:`check_client_call`'s.
    """
    checks = None if module is None else schema_checks(module)
    problem = _elicitation_problem(params, own_caps, checks)
    if problem is not None:
        raise RequestError(
            INVALID_PARAMS,
            "Invalid params",
            {
                "path": "$.params.mode",
                "message": problem.replace("the client", "this client"),
            },
        )
