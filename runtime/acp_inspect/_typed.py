"""Each message against the negotiated version's schema (acp_schema's codec).

The method tables are :class:`acp_core.Schema`'s (the runtime's own view of
a version, oriented per side); params and results are decoded from their
raw bytes straight into the method's generated type.

Two failures are not what they seem, and are told apart (a
:class:`SchemaProblem`'s ``rule``):

- ``newer-spec`` (a NOTE, no violation): the message names a variant of a
  closed union our schema lacks (``acp_core.find_unknown_variant``): a peer
  generated from a later release.  Each kind (method, path, tag) is
  reported once, at most :data:`MAX_NEWER_KINDS` kinds.
- ``offer`` (a SHOULD): a client's ``initialize`` does not fit the schema
  of the version it names but fits an older one it may be offering: it is
  judged by the version it fits, and the finding names the version whose
  agents would refuse it (a multi-version ``initialize`` must be valid
  under each version offered).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

import msgspec
from acp_core import (
    MethodSpec,
    Schema,
    VersionUnavailableError,
    find_unknown_variant,
    fitting_draft,
)

from ._message import CLIENT, Message, sender_of
from ._state import ConnectionState

__all__ = ["MAX_NEWER_KINDS", "SchemaProblem", "TypedCheck"]

#: Kinds of unknown variants (method, path, tag) reported, once each.
MAX_NEWER_KINDS: Final = 64


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    """Why a message does not fit: ``rule`` (``schema``, ``newer-spec``,
    ``offer``), one line of ``text``, and the ``level`` of its finding
    (``None``: the spec line's own, a MUST)."""

    rule: str
    text: str
    level: str | None = None


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
        #: the kinds of unknown variants reported already (``newer-spec``)
        self._newer: set[tuple[str, str, str]] = set()

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

    def check(self, state: ConnectionState, msg: Message) -> SchemaProblem | None:
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
            if what == "params of initialize" and msg.kind == "request":
                offer = self._offer(version, raw, exc, msg)
                if offer is not None:
                    return offer
            return self._newer_spec(schema, target, raw, exc, what, msg) or (
                SchemaProblem("schema", f"{what} do not fit schema v{version}: {exc}")
            )
        except Exception as exc:  # a broken generated module must not stop the proxy
            text = f"{what} could not be checked: {type(exc).__name__}"
            return SchemaProblem("schema", text)
        return None

    def _newer_spec(
        self,
        schema: Schema,
        target: Any,
        raw: Any,
        exc: msgspec.ValidationError,
        what: str,
        msg: Message,
    ) -> SchemaProblem | None:
        """A ``newer-spec`` NOTE when the only fault is an unknown variant
        (once per kind; ``None`` for the others as for a repeat: no finding)."""
        found = find_unknown_variant(target, raw, exc)
        if found is None:
            return None
        path, tag, known = found
        kind = (what, path, repr(tag))
        if kind in self._newer or len(self._newer) >= MAX_NEWER_KINDS:
            return SchemaProblem("newer-spec", "", "")
        self._newer.add(kind)
        ours = getattr(schema.module, "SCHEMA_VERSION", schema.version)
        names = ", ".join(known)
        text = (
            f"{sender_of(msg.direction)} is a peer on a newer spec: {what} "
            f"name {tag!r} at {path}, a variant schema {ours} lacks "
            f"(it knows {names}); not a violation"
        )
        return SchemaProblem("newer-spec", text, "NOTE")

    def _offer(
        self, version: int, raw: Any, exc: msgspec.ValidationError, msg: Message
    ) -> SchemaProblem | None:
        """A client's ``initialize`` that fits an older version than it names:
        judged by that version (decoded in it), a SHOULD naming the one that
        refuses it."""
        for older in range(version - 1, 0, -1):
            method = self.method(older, "initialize", to_agent=True)
            schema = self.schema(older, to_agent=True)
            if method is None or schema is None:
                continue
            try:
                msg.typed = schema.decode(raw, method.params)
            except Exception:
                continue
            text = (
                f"initialize names protocol v{version} and fits v{older}'s schema, "
                f"not v{version}'s ({exc}): an agent of v{version} refuses it; "
                f"judged as v{older} (a multi-version initialize must be valid "
                "under each version offered)"
            )
            return SchemaProblem("offer", text, "SHOULD")
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
