"""acp_conductor: a chain of ACP proxies in front of an agent, run as one agent.

The conductor of the proxy-chains RFD (schema 2.4.0's unstable
``proxy/initialize`` and ``proxy/successor``): to the client it is an
ordinary agent; it starts each component (a program in its own process
group, or a coroutine in this process over the in-memory seam), sends
``proxy/initialize`` to proxies and ``initialize`` to the agent, wraps and
unwraps ``proxy/successor``, and routes every message by its hop::

    python -m acp_conductor --proxy "python -m my_proxy" -- python -m acp_echo

or from Python (trio)::

    ended = await acp_conductor.run_chain(
        client_stream,
        [acp_conductor.command_component("python -m my_proxy"),
         acp_conductor.CommandComponent(["python", "-m", "acp_echo"])],
    )

See ``docs/proxies.md``.
"""

from ._components import (
    CommandComponent,
    Component,
    InProcessComponent,
    command_component,
)
from ._conductor import (
    DEFAULT_INITIALIZE_TIMEOUT,
    DEFAULT_STALL_TIMEOUT,
    ChainEnded,
    LineObserver,
    run_chain,
)
from ._routing import CLIENT, ChainFailure, Router, Send

__all__ = [
    "CLIENT",
    "DEFAULT_INITIALIZE_TIMEOUT",
    "DEFAULT_STALL_TIMEOUT",
    "ChainEnded",
    "ChainFailure",
    "CommandComponent",
    "Component",
    "InProcessComponent",
    "LineObserver",
    "Router",
    "Send",
    "command_component",
    "run_chain",
]
