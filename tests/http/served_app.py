"""The ASGI app the remote-transport tests serve (configured by environment).

``ACP_HTTP_AGENT``: ``inprocess`` (the default: :class:`remote_agent.RemoteAgent`
in the server's event loop), ``shared-fault`` (the same, but the second
connection's launch starts a task that fails in the server's shared task
group: a bug of the shared machinery, as a test can cause one) or a command line; ``ACP_HTTP_TOKEN``: a bearer
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
import anyio.abc
import msgspec
from remote_agent import RemoteAgent

logging.basicConfig(level=logging.INFO)


class SharedFault:
    """:class:`acp_http.InProcessAgent`, whose second launch breaks the task group
    every connection runs in."""

    def __init__(self) -> None:
        self.inner = acp_http.InProcessAgent({1: RemoteAgent})
        self.launched = 0

    async def launch(
        self, task_group: anyio.abc.TaskGroup, grace: float
    ) -> acp_http.AgentHandle:
        self.launched += 1
        if self.launched == 2:
            task_group.start_soon(self._fail)
        return await self.inner.launch(task_group, grace)

    async def _fail(self) -> None:
        raise RuntimeError("the shared machinery failed (a test's fault)")


_agent = os.environ.get("ACP_HTTP_AGENT", "inprocess")
_launcher: acp_http.AgentLauncher
if _agent == "inprocess":
    _launcher = acp_http.InProcessAgent({1: RemoteAgent})
elif _agent == "shared-fault":
    _launcher = SharedFault()
else:
    _launcher = acp_http.CommandAgent(shlex.split(_agent))
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
