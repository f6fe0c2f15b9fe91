"""Each message against the negotiated version's schema (acp_schema's codec).

The method tables are :class:`acp_core.Schema`'s (the runtime's own view of
a version, oriented per side); params and results are decoded from their
raw bytes straight into the method's generated type.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from acp_core import MethodSpec, Schema, VersionUnavailableError, fitting_draft

from ._message import CLIENT, Message
from ._state import ConnectionState

__all__ = ["TypedCheck"]


class TypedCheck:
    """Decodes params (and results, by the request they answer) with the
    schema of the connection's version, on the unstable surface's tables (a
    superset of the stable ones, so preview methods are checked too).
    Unknown methods and ``_`` extensions are not checked (the receiver
    answers them -32601 or as it likes)."""

    def __init__(self) -> None:
        # (version, receiving side) -> schema; None for a version we lack
        self._schemas: dict[tuple[int, bool], Schema | None] = {}
        #: version -> the draft its initialize fits, when not the default
        #: (``v2_alpha0``: both drafts say protocolVersion 2)
        self._drafts: dict[int, str] = {}

    def schema(self, version: int, *, to_agent: bool) -> Schema | None:
        """The schema whose incoming methods are the receiver's, or ``None``."""
        key = (version, to_agent)
        if key not in self._schemas:
            side: Literal["agent", "client"] = "agent" if to_agent else "client"
            try:
                found = Schema.load(
                    version, side, unstable=True, draft=self._drafts.get(version)
                )
            except (ValueError, VersionUnavailableError):
                found = None  # a version we lack, or whose module is broken
            self._schemas[key] = found
        return self._schemas[key]

    def method(self, version: int, name: str, *, to_agent: bool) -> MethodSpec | None:
        """The method ``name`` as its receiver serves it in ``version``."""
        schema = self.schema(version, to_agent=to_agent)
        if schema is None:
            return None
        spec = schema.incoming.get(name)
        if spec is None and schema.cancel_request is not None:
            if schema.cancel_request.name == name:
                spec = schema.cancel_request
        return spec

    def check(self, state: ConnectionState, msg: Message) -> str | None:
        """Why ``msg`` does not fit the schema, or ``None``."""
        version = state.current_version
        if msg.kind == "response":
            pending = state.pending_for(msg)
            if pending is None or msg.error is not None:
                return None
            method = self.method(
                version, pending.method, to_agent=msg.direction != CLIENT
            )
            if method is None or method.result is None:
                return None
            what, target = f"result of {pending.method}", method.result
        else:
            name = msg.method or ""
            if name == "initialize" and msg.kind == "request":
                requested = msg.params.get("protocolVersion")
                version = requested if requested in (1, 2) else version
            method = self.method(version, name, to_agent=msg.direction == CLIENT)
            if method is None:
                return None
            target = method.params
            if msg.kind == "notification" and method.notification is not None:
                target = method.notification
            what = f"params of {name}"
        raw: Any = msg.raw if msg.raw is not None else b"{}"
        if what in ("params of initialize", "result of initialize"):
            self._follow_draft(version, what, raw)
            method = self.method(version, "initialize", to_agent=True)
            if method is not None:
                target = method.params if what.startswith("params") else method.result
        schema = self.schema(version, to_agent=True)
        assert schema is not None
        if msg.kind == "response" and msg.result is None:
            raw = b"{}"  # a null result of a method whose result is an object
        try:
            msg.typed = schema.decode(raw, target)
        except msgspec.ValidationError as exc:
            return f"{what} do not fit schema v{version}: {exc}"
        except Exception as exc:  # a broken generated module must not stop the proxy
            return f"{what} could not be checked: {type(exc).__name__}"
        return None

    def _follow_draft(self, version: int, what: str, raw: Any) -> None:
        """Check the connection in the draft its ``initialize`` fits (two
        drafts of one version both say its number; see
        :func:`acp_core.fitting_draft`)."""
        schema = self.schema(version, to_agent=True)
        if schema is None:
            return
        part: Literal["params", "result"] = (
            "params" if what.startswith("params") else "result"
        )
        found = fitting_draft(schema.module, part, raw)
        if found is not None:
            self._drafts[version] = found.__name__.removeprefix("acp_schema.")
            self._schemas = {k: v for k, v in self._schemas.items() if k[0] != version}
