"""Who may reach the server from a browser: ``Host`` and ``Origin`` against allow lists.

A web page can make its visitor's browser open ``ws://127.0.0.1:PORT/acp``
(a WebSocket upgrade is never preflighted) or, once its own name resolves to
127.0.0.1 (DNS rebinding), POST there as its own origin: without a check any
page could run a local agent with the user's rights.  The transport RFD names
Origin validation among its hardening steps; the rules here are those of
MCP's Streamable HTTP (validate ``Origin``, bind to loopback when local) with
the ``Host`` check that defeats rebinding:

- ``Host``: on a connection that came in on a loopback address, a loopback
  name (``localhost``, ``127.0.0.1`` or any loopback IP, ``[::1]``; any port);
  elsewhere any (a reverse proxy's public names).  A request without ``Host``
  (HTTP/1.0; never a browser's) passes.
- ``Origin`` (browsers send it on an upgrade and on a cross-origin POST;
  other clients do not): on loopback, an origin whose host is a loopback name;
  elsewhere none.  A request without ``Origin`` passes.

``allowed_hosts`` / ``allowed_origins`` replace a default: host names
(``agents.example`` or ``agents.example:8443``) and origins
(``https://app.example``), compared without case; ``"*"`` allows any.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = ["HostGuard", "host_of", "is_loopback"]

#: The longest header text quoted back in a refusal.
QUOTED = 100


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an IP, without port or brackets) is this
    machine's loopback: ``localhost`` or a loopback IP literal."""
    host = host.strip().lower().rstrip(".")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_of(authority: str) -> str:
    """The host part of ``host[:port]`` or ``[ipv6][:port]`` (lower-case)."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[1:].split("]", 1)[0]
    if authority.count(":") == 1:
        return authority.split(":", 1)[0]
    return authority  # a name, or a bare IPv6 address


class HostGuard:
    """The ``Host`` and ``Origin`` rules of one server (see the module)."""

    def __init__(
        self,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
    ) -> None:
        self.allowed_hosts = (
            None
            if allowed_hosts is None
            else frozenset(host.strip().lower() for host in allowed_hosts)
        )
        self.allowed_origins = (
            None
            if allowed_origins is None
            else frozenset(
                origin.strip().lower().rstrip("/") for origin in allowed_origins
            )
        )

    def refusal(self, headers: Mapping[str, str], server: Any) -> str | None:
        """Why a request with these (lower-case) headers, received on the
        ASGI scope's ``server`` address, is refused; None if it may pass."""
        loopback = _on_loopback(server)
        host = headers.get("host")
        if host is not None and not self._host_allowed(host, loopback):
            return (
                f"Forbidden: Host {host[:QUOTED]!r} is not allowed here"
                " (the server's allowed hosts)"
            )
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin, loopback):
            return (
                f"Forbidden: Origin {origin[:QUOTED]!r} is not allowed here"
                " (the server's allowed origins)"
            )
        return None

    def _host_allowed(self, host: str, loopback: bool) -> bool:
        allowed = self.allowed_hosts
        if allowed is None:
            return not loopback or is_loopback(host_of(host))
        given = host.strip().lower()
        return "*" in allowed or given in allowed or host_of(given) in allowed

    def _origin_allowed(self, origin: str, loopback: bool) -> bool:
        allowed = self.allowed_origins
        if allowed is None:
            if not loopback:
                return False
            try:
                name = urlsplit(origin.strip()).hostname
            except ValueError:
                return False
            return name is not None and is_loopback(name)
        return "*" in allowed or origin.strip().lower().rstrip("/") in allowed


def _on_loopback(server: Any) -> bool:
    """Whether the ASGI ``server`` address (host, port) is a loopback one."""
    if isinstance(server, (tuple, list)) and server and isinstance(server[0], str):
        return is_loopback(server[0])
    return False
