"""A conductor on stdio whose proxies run in its own process (the in-memory seam).

    python bench/conductor_chain.py N -- AGENT_CMD ...

``N`` pass-through proxies (``acp_trio.Proxy()``, no handlers) as
``acp_conductor.InProcessComponent``s in front of the agent program: what
an in-process hop costs, for ``conductor_bench.py``.
"""

from __future__ import annotations

import sys

import acp_trio
import trio
from acp_conductor import CommandComponent, Component, InProcessComponent, run_chain
from acp_host import protocol_stdio


async def _pass_through(stream: trio.abc.Stream) -> None:
    await acp_trio.serve_proxy(stream, acp_trio.Proxy())


async def main(hops: int, agent: list[str]) -> int:
    components: list[Component] = [
        InProcessComponent(_pass_through, name=f"proxy#{n}") for n in range(hops)
    ]
    components.append(CommandComponent(agent))
    with protocol_stdio() as fds:
        client = trio.StapledStream(
            trio.lowlevel.FdStream(fds.output), trio.lowlevel.FdStream(fds.input)
        )
        ended = await run_chain(client, components)
    return 0 if ended.failure is None else 1


if __name__ == "__main__":
    hops, sep, *agent = sys.argv[1:]
    assert sep == "--" and agent, __doc__
    sys.exit(trio.run(main, int(hops), agent))
