"""The ASGI app the remote-transport tests serve (configured by environment).

``ACP_HTTP_AGENT``: ``inprocess`` (the default: :class:`remote_agent.RemoteAgent`
in the server's event loop) or a command line; ``ACP_HTTP_TOKEN``: a bearer
token; ``ACP_HTTP_COOKIE``: an affinity cookie; ``ACP_HTTP_LIMITS``: JSON of
:class:`acp_http.HttpLimits` fields; ``ACP_HTTP_ALLOWED_HOSTS``,
``ACP_HTTP_ALLOWED_ORIGINS``: JSON lists (the app's ``allowed_hosts``,
``allowed_origins``; unset: the defaults).
"""

from __future__ import annotations

import logging
import os
import shlex

import acp_http
import msgspec
from remote_agent import RemoteAgent

logging.basicConfig(level=logging.INFO)

_agent = os.environ.get("ACP_HTTP_AGENT", "inprocess")
_launcher: acp_http.AgentLauncher = (
    acp_http.InProcessAgent({1: RemoteAgent})
    if _agent == "inprocess"
    else acp_http.CommandAgent(shlex.split(_agent))
)
_limits = msgspec.json.decode(os.environ.get("ACP_HTTP_LIMITS", "{}").encode())
_guard = {  # passed only when set: the defaults otherwise
    option: msgspec.json.decode(os.environ[name].encode())
    for option, name in (
        ("allowed_hosts", "ACP_HTTP_ALLOWED_HOSTS"),
        ("allowed_origins", "ACP_HTTP_ALLOWED_ORIGINS"),
    )
    if name in os.environ
}

app = acp_http.asgi_app(
    _launcher,
    limits=acp_http.HttpLimits(**_limits),
    token=os.environ.get("ACP_HTTP_TOKEN") or None,
    affinity_cookie=os.environ.get("ACP_HTTP_COOKIE") or None,
    **_guard,
)
