"""``acp-client``: a terminal ACP client for real agents: ``acp-client [options] -- AGENT_CMD ...``.

Spawns the agent, initializes, opens a session in the current directory (or
loads one with ``--load SESSION_ID``), sends the prompt (``--prompt TEXT``, or
standard input) and prints the live transcript as it streams: messages, the
plan, tool calls with their status, usage::

    acp-client --yes --prompt "hello" -- python -m acp_echo
    acp-client --auth openai-api-key --prompt "fix the tests" -- npx codex-acp

What it serves the agent (protocol v1; the v2 draft has neither):

* ``fs/read_text_file`` and ``fs/write_text_file``, confined to the session's
  directories (the cwd and each ``--add-dir``, symlinks resolved); a write
  asks first.
* ``terminal/*``: the command runs in a process group of its own, its output
  kept up to a bound (``outputByteLimit``, at most ``MAX_TERMINAL_OUTPUT``);
  creating one asks first.  Releasing a terminal, or leaving, kills its group.
* ``session/request_permission``: the options are shown with their kind and
  asked on the terminal.

``--yes`` answers every question "allow once": never an "always" option.
Without ``--yes`` and without a terminal to ask on, nothing is allowed.

Authentication: when the agent answers -32000 (authentication required), the
client lists the agent's ``authMethods``; ``--auth ID`` runs one: an ``agent``
method is an ``authenticate`` call (the agent may read environment variables
this client passed on: set them before running it), an ``env_var`` method
checks its variables are set first, a ``terminal`` method runs the agent
command with the method's arguments on this terminal, then starts over.

Every request but the prompt turn must be answered within ``--timeout``
seconds; the turn runs until the agent ends it, or Ctrl-C sends
``session/cancel`` (a second Ctrl-C quits at once).  The agent's stderr is
kept, and its last lines shown if it fails.  Errors are one line on stderr.

Exit status: 0 when the turn ended, 130 after Ctrl-C, 2 for a bad option, 1
for any other error.

Written against the generated types: a class per protocol version serves the
agent (``ClientV1(v1.Client)``, ``ClientV2(v2.Client)``: subclassing the
generated Protocol has the type checker check each handler; a handler's name
is the method's wire name with ``/`` as ``_``, ``fs/read_text_file`` ->
``fs_read_text_file``), and ``AgentV1`` / ``AgentV2`` call the agent.
"""

from acp_client.cli import main

__all__ = ["main"]
