"""The generated schema modules, seen through the few names the runtime reads.

The runtime never parses the schema: it reads ``acp_schema.vN``'s method
tables, codec and constants.  :class:`Schema` binds one version to one side
of a connection (which table is handled here, which is called on the peer)::

    schema = Schema.load(1, side="agent")
    schema.incoming["session/prompt"].params     # v1.PromptRequest
    schema.outgoing["session/update"].result     # None: a notification
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Mapping
from typing import Any, Literal, Protocol, cast

import msgspec

__all__ = [
    "SCHEMA_MODULES",
    "MethodSpec",
    "Schema",
    "SchemaModule",
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


#: The generated modules, stable and unstable, by name. The unstable ones
#: define the same names for the same shapes as their stable twins.
SCHEMA_MODULES = frozenset(
    f"acp_schema.{name}" for name in ("v1", "v2", "v1_unstable", "v2_unstable")
)


def schema_module_of(obj: object) -> types.ModuleType | None:
    """The generated module that defines ``obj``'s class, if it is one.

    Looked up among the modules already imported: an object of theirs exists
    only once its module was loaded.
    """
    name = type(obj).__module__
    return sys.modules.get(name) if name in SCHEMA_MODULES else None


def supported_versions() -> tuple[int, ...]:
    """Protocol versions for which a generated module exists."""
    return (1, 2)


class Schema:
    """One protocol version, oriented for one side of a connection."""

    __slots__ = (
        "cancel_request",
        "decode",
        "encode",
        "incoming",
        "module",
        "outgoing",
        "request_cancelled_code",
        "unstable",
        "version",
        "wire_names",
    )

    def __init__(self, module: SchemaModule, side: Side) -> None:
        self.module = module
        self.version: int = module.PROTOCOL_VERSION
        #: Speaking the unstable surface (``acp_schema.vN_unstable``).
        self.unstable: bool = getattr(module, "__name__", "").endswith("_unstable")
        self.decode = module.decode
        self.encode = module.encode
        protocol = getattr(module, "PROTOCOL_METHODS", {})
        if side == "agent":
            self.incoming: Mapping[str, MethodSpec] = module.AGENT_METHODS
            self.outgoing: Mapping[str, MethodSpec] = module.CLIENT_METHODS
        else:
            self.incoming = module.CLIENT_METHODS
            self.outgoing = module.AGENT_METHODS
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
        """Import ``acp_schema.v{version}`` (``..._unstable`` with ``unstable``)
        and orient it for ``side``."""
        if version not in supported_versions():
            raise ValueError(f"unsupported protocol version {version!r}")
        name = f"acp_schema.v{version}{'_unstable' if unstable else ''}"
        module = cast(SchemaModule, importlib.import_module(name))
        return cls(module, side)

    def find_outgoing(self, handler: str) -> MethodSpec | None:
        """The peer's method whose handler name is ``handler``."""
        for m in self.outgoing.values():
            if m.handler == handler:
                return m
        return None

    def __repr__(self) -> str:
        return f"<Schema v{self.version}{' unstable' if self.unstable else ''}>"
