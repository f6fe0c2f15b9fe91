"""acp_host: what an ACP runtime asks of the operating system, without an event loop.

The protocol itself (:mod:`acp_core`) makes no system call; these do, and
every adapter (``acp_trio``, ``acp_asyncio``) and ``acp_inspect`` share them,
each waiting in its own way:

- process groups: :func:`group_alive`, :func:`group_options`,
  :func:`signal_group`: an agent leads a group of its own, so everything it
  starts ends with it;
- the agent's shutdown: :class:`ShutdownPlan` (stdin closed, grace, SIGTERM
  to the group, grace, SIGKILL, always reaped) as named steps
  (:class:`CloseInput`, :class:`AwaitExit`, :class:`SendSignal`), and
  :class:`StderrTail` (the bounded tail of a captured stderr);
- descriptor queries: :func:`pollable` (can an event loop wait on it?),
  :func:`reader_gone` (has the reader of this pipe gone?);
- the environment: :func:`apply_environment` (``ACP_CHECK_OUTGOING``, applied
  when this package is imported);
- Unix sockets: :func:`socket_directory` (a private directory whose socket
  path fits the kernel's limit, whatever ``TMPDIR`` is);
- stdio takeover: :func:`protocol_stdio` (an agent's stdin/stdout kept for
  the protocol, fd 1 pointed at stderr while it runs)::

      from acp_host import ShutdownPlan, group_options

      plan = ShutdownPlan(pgid=None, grace_period=2.0)
      step = plan.next(exited=False)  # CloseInput()
"""

from ._descriptors import pollable, reader_gone
from ._environment import apply_environment
from ._process_group import group_alive
from ._sockets import MAX_SOCKET_PATH, socket_directory
from ._stdio import StdioFds, protocol_stdio
from ._subprocess import (
    GROUP_POLL,
    STDERR_KEEP,
    AwaitExit,
    CloseInput,
    ProcessLike,
    SendSignal,
    ShutdownPlan,
    StderrTail,
    Step,
    group_options,
    signal_group,
)

__all__ = [
    "GROUP_POLL",
    "MAX_SOCKET_PATH",
    "STDERR_KEEP",
    "AwaitExit",
    "CloseInput",
    "ProcessLike",
    "SendSignal",
    "ShutdownPlan",
    "StderrTail",
    "StdioFds",
    "Step",
    "apply_environment",
    "group_alive",
    "group_options",
    "pollable",
    "protocol_stdio",
    "reader_gone",
    "signal_group",
    "socket_directory",
]

apply_environment()
