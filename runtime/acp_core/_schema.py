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


_MODULE_NAME = re.compile(r"acp_schema\.v(\d+)(_unstable)?")

#: The generated protocol modules by name (``acp_schema.vN``, the module of
#: every class, and its ``vN_unstable`` view), as the package lists them.
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
    return tuple(sorted(int(m.group(1)) for m in found if m and not m.group(2)))


class Schema:
    """One protocol version, oriented for one side of a connection."""

    __slots__ = (
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
        self.wire_names: dict[str, bytes] = {
            name: msgspec.json.encode(name)
            for table in (self.outgoing, protocol)
            for name in table
        }

    @classmethod
    def load(cls, version: int, side: Side, *, unstable: bool = False) -> Schema:
        """Import ``acp_schema.v{version}`` and orient it for ``side``; with
        ``unstable``, on the tables of the unstable surface."""
        if version not in supported_versions():
            raise ValueError(f"unsupported protocol version {version!r}")
        module = cast(SchemaModule, protocol_module(version))
        return cls(module, side, unstable=unstable)

    def find_outgoing(self, handler: str) -> MethodSpec | None:
        """The peer's method whose handler name is ``handler``."""
        for m in self.outgoing.values():
            if m.handler == handler:
                return m
        return None

    def __repr__(self) -> str:
        return f"<Schema v{self.version}{' unstable' if self.unstable else ''}>"


log = logging.getLogger("acp_core")

#: Protocol modules that failed to import, by name: not imported again.
_UNAVAILABLE: dict[str, Exception] = {}


def protocol_module(version: int) -> types.ModuleType:
    """``acp_schema.v{version}``, imported on first use.

    A module that fails to import (any exception: a syntax error, a name a
    half-regenerated file lacks) is not retried: that version is
    unavailable, logged once at WARNING (with the traceback), and every use
    raises :class:`~acp_core.VersionUnavailableError` (its ``__cause__``
    the import's error).
    """
    name = f"acp_schema.v{version}"
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
