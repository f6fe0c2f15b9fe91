"""``acp-client``: a terminal ACP client for real agents: ``acp-client [options] -- AGENT_CMD ...``.

Spawns the agent, initializes, opens a session in the current directory (or
loads one with ``--load SESSION_ID``) and prints the live transcript as it
streams: messages, the plan, tool calls with their status, usage.  At a
terminal without ``--prompt`` it runs a prompt loop (:mod:`acp_client.loop`);
``--prompt TEXT`` or piped standard input send one prompt::

    acp-client --yes --prompt "hello" -- python -m acp_echo
    acp-client --auth openai-api-key -- npx @zed-industries/codex-acp

It answers elicitations (protocol v1: a form field by field, a URL shown;
:mod:`acp_client.elicit`).  What it serves the agent (protocol v1; the v2 draft has neither): ``fs/*``
confined to the session's directories (:mod:`acp_client.workspace`) and
``terminal/*`` (:mod:`acp_client.terminals`: a command without ``args`` runs
through the user's shell), each asked once: a write or command the user
already allowed for its tool call is not asked again (:mod:`acp_client.grants`).
``--yes`` answers every question "allow once".

SIGTERM and SIGHUP end the turn and the agent like Ctrl-C, then exit
``128 + N``.  Exit status: 0 when the turn ended, 130 after Ctrl-C, 2 for a
bad option, 1 for any other error (one line on stderr).  The whole behaviour:
``docs/client.md``.

Written against the generated types: a class per protocol version serves the
agent (``ClientV1(v1.Client)``, ``ClientV2(v2.Client)``: subclassing the
generated Protocol has the type checker check each handler; a handler's name
is the method's wire name with ``/`` as ``_``, ``fs/read_text_file`` ->
``fs_read_text_file``), and ``AgentV1`` / ``AgentV2`` call the agent.
"""

from acp_client.cli import main

__all__ = ["main"]
