"""The generated schema modules, seen through the few names the runtime reads.

The runtime never parses the schema: it reads ``acp_schema.vN``'s method
tables, codec and constants.  :class:`Schema` binds one version to one side
of a connection (which table is handled here, which is called on the peer)::

    schema = Schema.load(1, side="agent")
    schema.incoming["session/prompt"].params     # v1.PromptRequest
    schema.outgoing["session/update"].result     # None: a notification

Each protocol module is imported with the first connection (or builder) of
its version, through :func:`protocol_module`: one that fails to import (a
broken or half-regenerated ``acp_schema.v2``) makes that version
unavailable, with one WARNING and a :class:`~acp_core.VersionUnavailableError`
wherever it is offered; ``import acp_core`` and the other versions go on.
"""

from __future__ import annotations

import functools
import importlib
import logging
import re
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, cast

import acp_schema
import msgspec

from ._errors import VersionUnavailableError

__all__ = [
    "SCHEMA_MODULES",
    "MethodSpec",
    "Schema",
    "SchemaModule",
    "draft_of",
    "drafts",
    "fitting_draft",
    "is_schema_module",
    "protocol_module",
    "schema_module_of",
    "supported_versions",
]

Side = Literal["agent", "client"]


class MethodSpec(Protocol):
    """One entry of a generated method table."""

    @property
    def name(self) -> str: ...
    @property
    def params(self) -> Any: ...
    @property
    def result(self) -> Any: ...
    @property
    def handler(self) -> str: ...
    @property
    def notification(self) -> Any:
        """The params type of the same method sent as a notification, or None."""


class SchemaModule(Protocol):
    """What the runtime reads from ``acp_schema.v1`` / ``acp_schema.v2``."""

    PROTOCOL_VERSION: int
    AGENT_METHODS: Mapping[str, MethodSpec]
    CLIENT_METHODS: Mapping[str, MethodSpec]
    PROTOCOL_METHODS: Mapping[str, MethodSpec]

    def decode(self, data: bytes | msgspec.Raw, type: Any) -> Any: ...
    def encode(self, obj: Any) -> bytes: ...


#: ``acp_schema.vN``, a draft of its own (``acp_schema.v2_alpha0``) and
#: their ``_unstable`` views.
_MODULE_NAME = re.compile(
    r"acp_schema\.v(\d+)(?:_(?!unstable$)([a-z0-9]+?))?(_unstable)?"
)

#: The generated protocol modules by name (``acp_schema.vN``, the module of
#: every class, its ``vN_unstable`` view, and other drafts of the same
#: version: ``acp_schema.v2_alpha0``), as the package lists them.
SCHEMA_MODULES = frozenset(
    f"acp_schema.{name}"
    for name in acp_schema.PROTOCOL_MODULES
    if _MODULE_NAME.fullmatch(f"acp_schema.{name}")
)


def is_schema_module(module: object) -> bool:
    """Whether ``module`` is a generated protocol module (``acp_schema.vN`` or
    its ``vN_unstable`` view)."""
    return getattr(module, "__name__", None) in SCHEMA_MODULES


def schema_module_of(obj: object) -> types.ModuleType | None:
    """The generated module that defines ``obj``'s class, if it is one.

    Every class lives in ``acp_schema.vN`` (``vN_unstable`` re-exports them).
    Looked up among the modules already imported: an object of theirs exists
    only once its module was loaded.
    """
    name = type(obj).__module__
    return sys.modules.get(name) if name in SCHEMA_MODULES else None


def supported_versions() -> tuple[int, ...]:
    """Protocol versions for which a generated module exists (``acp_schema.vN``,
    as ``acp_schema.PROTOCOL_MODULES`` lists them)."""
    found = (_MODULE_NAME.fullmatch(name) for name in SCHEMA_MODULES)
    return tuple(
        sorted(int(m.group(1)) for m in found if m and not m.group(2) and not m[3])
    )


def drafts(version: int) -> tuple[str, ...]:
    """The modules that speak protocol ``version``: ``vN`` (the default)
    first, then any draft kept beside it (``("v2", "v2_alpha0")``)."""
    found: list[str] = []
    for name in SCHEMA_MODULES:
        match = _MODULE_NAME.fullmatch(name)
        if match and int(match.group(1)) == version and not match.group(3):
            found.append(name.removeprefix("acp_schema."))
    return tuple(sorted(found, key=lambda name: (name != f"v{version}", name)))


def draft_of(factory: object) -> str | None:
    """The draft a handler factory speaks, when it says: the generated
    module of the handler Protocol its class subclasses (``class
    MyAgent(v2_alpha0.Agent)`` -> ``"v2_alpha0"``), or its ``acp_schema``
    attribute (a generated module, or its name); a ``functools.partial`` is
    read through. None: the version's default module."""
    while isinstance(factory, functools.partial):  # a class with arguments bound
        factory = factory.func
    chosen = getattr(factory, "acp_schema", None)
    if chosen is not None:
        name = getattr(chosen, "__name__", chosen)
        return _draft_name(str(name))
    for base in getattr(factory, "__mro__", ())[1:]:
        module = getattr(base, "__module__", "")
        if module in SCHEMA_MODULES:
            return _draft_name(module)
    return None


def _draft_name(name: str) -> str:
    match = _MODULE_NAME.fullmatch(
        name if name.startswith("acp_schema.") else f"acp_schema.{name}"
    )
    if match is None:
        raise ValueError(f"not a generated protocol module: {name!r}")
    return f"v{match.group(1)}" + (f"_{match.group(2)}" if match.group(2) else "")


class Schema:
    """One protocol version, oriented for one side of a connection.

    Read-only once built: :meth:`load` gives every connection of the process
    that speaks the same version, side, surface and draft the same object
    (its tables, wire names and handler index built once, not per
    connection), so nothing may set its attributes afterwards.
    """

    __slots__ = (
        "by_handler",
        "cancel_request",
        "decode",
        "decoder",
        "encode",
        "incoming",
        "module",
        "outgoing",
        "request_cancelled_code",
        "side",
        "unstable",
        "version",
        "wire_names",
    )

    def __init__(
        self, module: SchemaModule, side: Side, *, unstable: bool = False
    ) -> None:
        self.module = module
        self.side: Side = side
        self.version: int = module.PROTOCOL_VERSION
        #: Speaking the unstable surface (the ``*_UNSTABLE`` method tables).
        self.unstable = unstable
        self.decode = module.decode
        #: ``decoder(type)``: the strict first pass of ``decode`` (a generated
        #: module's ``decoder``); what it returns is ``decode``'s answer, if it
        #: raises ``decode`` gives the answer.
        self.decoder: Callable[[Any], Callable[[Any], Any]] = getattr(
            module, "decoder", None
        ) or functools.partial(_decoder_of, module.decode)
        self.encode = module.encode
        agent = _table(module, "AGENT_METHODS", unstable)
        client = _table(module, "CLIENT_METHODS", unstable)
        protocol = _table(module, "PROTOCOL_METHODS", unstable)
        if side == "agent":
            self.incoming: Mapping[str, MethodSpec] = agent
            self.outgoing: Mapping[str, MethodSpec] = client
        else:
            self.incoming = client
            self.outgoing = agent
        #: ``$/cancel_request`` (or whatever the table names it), if this version has one.
        self.cancel_request: MethodSpec | None = next(
            (m for m in protocol.values() if m.handler == "cancel_request"), None
        )
        self.request_cancelled_code: int | None = getattr(
            module, "ERROR_CODE_REQUEST_CANCELLED", None
        )
        #: JSON-encoded wire names, spliced into outgoing frames.
        self.wire_names: Mapping[str, bytes] = {
            name: msgspec.json.encode(name)
            for table in (self.outgoing, protocol)
            for name in table
        }
        #: The peer's methods by handler name (:meth:`find_outgoing`).
        self.by_handler: Mapping[str, MethodSpec] = {
            m.handler: m for m in self.outgoing.values()
        }

    @classmethod
    def load(
        cls,
        version: int,
        side: Side,
        *,
        unstable: bool = False,
        draft: str | None = None,
    ) -> Schema:
        """Import ``acp_schema.v{version}`` (or the module ``draft`` of that
        version: ``"v2_alpha0"``) and orient it for ``side``; with
        ``unstable``, on the tables of the unstable surface.

        One object per process for each (version, side, surface, draft): a
        connection (each side's engine, each version it negotiates) takes the
        one built first, as long as its module is the one imported.
        """
        key = (version, side, unstable, draft)
        found = _LOADED.get(key)
        if found is not None:
            module = cast(object, found.module)  # the module imported now?
            if sys.modules.get(_name_of(module)) is module:
                return found
        if version not in supported_versions():
            raise ValueError(f"unsupported protocol version {version!r}")
        loaded = cast(SchemaModule, protocol_module(version, draft))
        schema = _LOADED[key] = cls(loaded, side, unstable=unstable)
        return schema

    def find_outgoing(self, handler: str) -> MethodSpec | None:
        """The peer's method whose handler name is ``handler``."""
        return self.by_handler.get(handler)

    def __repr__(self) -> str:
        return f"<Schema v{self.version}{' unstable' if self.unstable else ''}>"


log = logging.getLogger("acp_core")

#: :meth:`Schema.load`'s schemas by (version, side, unstable, draft).
_LOADED: dict[tuple[int, Side, bool, str | None], Schema] = {}


def _name_of(module: object) -> str:
    return str(getattr(module, "__name__", ""))


#: Protocol modules that failed to import, by name: not imported again.
_UNAVAILABLE: dict[str, Exception] = {}


def protocol_module(version: int, draft: str | None = None) -> types.ModuleType:
    """``acp_schema.v{version}`` (or the draft module ``draft`` of that
    version, e.g. ``"v2_alpha0"``), imported on first use.

    A module that fails to import (any exception: a syntax error, a name a
    half-regenerated file lacks) is not retried: that version is
    unavailable, logged once at WARNING (with the traceback), and every use
    raises :class:`~acp_core.VersionUnavailableError` (its ``__cause__``
    the import's error).
    """
    if draft is not None and draft not in drafts(version):
        raise ValueError(
            f"no draft {draft!r} of protocol v{version} (have: "
            f"{', '.join(drafts(version)) or 'none'})"
        )
    name = f"acp_schema.{draft or f'v{version}'}"
    failure = _UNAVAILABLE.get(name)
    if failure is None:
        try:
            return importlib.import_module(name)
        except Exception as exc:  # whatever a broken module raises
            failure = _UNAVAILABLE[name] = exc
            log.warning(
                "protocol v%d is unavailable: %s failed to import (%s: %s); "
                "the other versions are not affected",
                version,
                name,
                type(exc).__name__,
                exc,
                exc_info=exc,
            )
    raise VersionUnavailableError(version, name, failure) from failure


def _decoder_of(decode: Any, type: Any) -> Callable[[Any], Any]:
    """``decoder`` for a module generated before it had one: ``decode`` itself."""
    return functools.partial(_decode_as, decode, type)


def _decode_as(decode: Any, type: Any, data: Any) -> Any:
    return decode(data, type)


def _table(module: SchemaModule, name: str, unstable: bool) -> Mapping[str, MethodSpec]:
    """A method table of ``module``: ``NAME_UNSTABLE`` on the unstable surface."""
    stable: Mapping[str, MethodSpec] = getattr(module, name, {})
    if not unstable:
        return stable
    table: Mapping[str, MethodSpec] | None = getattr(module, f"{name}_UNSTABLE", None)
    if table is None:
        log.warning(
            "%s has no %s_UNSTABLE table (generated by an older acp-codegen): "
            "the unstable surface serves the stable methods only",
            getattr(module, "__name__", module),
            name,
        )
        return stable
    return table


def other_draft(
    module: object, part: Literal["params", "result"], raw: Any
) -> str | None:
    """Why ``raw`` (the JSON of ``initialize``'s params or result) is another
    draft's, or None.

    Two drafts of one protocol version (``acp_schema.v2``, ``v2_alpha0``)
    both say ``protocolVersion: 2``. ``raw`` is the other draft's when it
    does not fit ``module``'s ``initialize`` type (it fails to decode, or has
    a top-level property that type does not declare) while it fits another
    draft's exactly: decoded in ``module`` it would be misread (fields
    dropped as unknown, required ones missing). Read by the schema, never
    by field name: what each draft's generated type declares.
    """
    found = fitting_draft(module, part, raw)
    if found is None:
        return None
    version = getattr(module, "PROTOCOL_VERSION", None)
    ours = getattr(module, "SCHEMA_VERSION", "?")
    theirs = getattr(found, "SCHEMA_VERSION", "?")
    return (
        f"the peer speaks protocol v{version} as draft {theirs} "
        f"(acp_schema.{_draft_name(found.__name__)}); this connection speaks "
        f"{ours} ({getattr(module, '__name__', '')}): give the connection a "
        "handler of the draft the peer speaks (docs/guide.md, Two drafts of "
        "protocol v2)"
    )


def fitting_draft(
    module: object, part: Literal["params", "result"], raw: Any
) -> types.ModuleType | None:
    """The other draft of ``module``'s protocol version whose ``initialize``
    ``raw`` fits exactly while it does not fit ``module``'s (see
    :func:`other_draft`), or None."""
    version = getattr(module, "PROTOCOL_VERSION", None)
    name = getattr(module, "__name__", "")
    if not isinstance(version, int) or raw is msgspec.UNSET:
        return None
    if not _MODULE_NAME.fullmatch(name):
        return None
    others = [d for d in drafts(version) if d != _draft_name(name)]
    if not others:
        return None
    try:
        decoded: object = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None
    if not isinstance(decoded, dict):
        return None
    value = cast("dict[str, Any]", decoded)
    if _fits(module, part, value):
        return None
    for other in others:
        try:
            found = protocol_module(version, other)
        except (ValueError, VersionUnavailableError):
            continue
        if _fits(found, part, value):
            return found
    return None


def _fits(module: object, part: str, value: dict[str, Any]) -> bool:
    """Whether ``value`` decodes as ``module``'s ``initialize`` params or result
    with every top-level property declared."""
    table: Mapping[str, MethodSpec] = getattr(module, "AGENT_METHODS", {})
    method = table.get("initialize")
    if method is None:
        return False
    type_ = method.params if part == "params" else method.result
    declared = {f.encode_name for f in msgspec.structs.fields(type_)}
    if not value.keys() <= declared:
        return False
    try:
        cast(Any, module).convert(value, type_)
    except msgspec.ValidationError:
        return False
    return True
