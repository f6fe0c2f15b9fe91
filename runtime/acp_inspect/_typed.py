"""Each message against the negotiated version's schema (acp_schema's codec)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import msgspec

from ._message import CLIENT, Message
from ._state import ConnectionState

__all__ = ["TypedCheck"]


class TypedCheck:
    """Converts params (and results, by the request they answer) with the
    schema of the connection's version: the unstable surface's tables, a
    superset of the stable ones, so preview methods are checked too.
    Unknown methods and ``_`` extensions are not checked (the receiver
    answers them -32601 or as it likes)."""

    def __init__(self) -> None:
        self._modules: dict[int, ModuleType | None] = {}

    def module(self, version: int) -> ModuleType | None:
        """``acp_schema.vN_unstable``, or ``None`` for a version we lack."""
        if version not in self._modules:
            try:
                self._modules[version] = importlib.import_module(
                    f"acp_schema.v{version}_unstable"
                )
            except ImportError:
                self._modules[version] = None
        return self._modules[version]

    def check(self, state: ConnectionState, msg: Message) -> str | None:
        """Why ``msg`` does not fit the schema, or ``None``."""
        version = state.current_version
        if msg.method == "initialize" and msg.kind == "request":
            requested = msg.params.get("protocolVersion")
            version = requested if requested in (1, 2) else version
        mod = self.module(version)
        if mod is None:
            return None
        if msg.kind == "response":
            pending = state.pending_for(msg)
            if pending is None or msg.error is not None:
                return None
            method = self._method(mod, pending.method, to_agent=msg.direction != CLIENT)
            if method is None or method.result is None:
                return None
            value: Any = msg.result if msg.result is not None else {}
            what, target = f"result of {pending.method}", method.result
        else:
            method = self._method(
                mod, msg.method or "", to_agent=msg.direction == CLIENT
            )
            if method is None:
                return None
            value = msg.params
            target = method.params
            if msg.kind == "notification" and method.notification is not None:
                target = method.notification
            what = f"params of {msg.method}"
        try:
            mod.convert(value, target)
        except msgspec.ValidationError as exc:
            return f"{what} do not fit schema v{version}: {exc}"
        except Exception as exc:  # a broken generated module must not stop the proxy
            return f"{what} could not be checked: {type(exc).__name__}"
        return None

    @staticmethod
    def _method(mod: ModuleType, name: str, *, to_agent: bool) -> Any:
        table = mod.AGENT_METHODS_UNSTABLE if to_agent else mod.CLIENT_METHODS_UNSTABLE
        return table.get(name) or mod.PROTOCOL_METHODS_UNSTABLE.get(name)
