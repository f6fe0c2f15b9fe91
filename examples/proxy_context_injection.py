"""A proxy that prepends project notes to every prompt (trio).

Run it in a chain in front of any agent (the notes file defaults to
``NOTES.md`` in the current directory)::

    python -m acp_conductor --proxy "python examples/proxy_context_injection.py NOTES.md" \\
        -- python -m acp_echo

The agent receives each prompt with one more text block first: the notes. Whatever
this proxy defines no handler for (every other method, both ways) is forwarded
unchanged by the proxy API.
"""

from __future__ import annotations

import sys
from pathlib import Path

import acp_trio
import trio
from acp_schema import v1

#: Notes longer than this are cut: a prompt is not the place for a whole file.
MAX_NOTES_CHARS = 8_000


class ProjectNotes(acp_trio.Proxy):
    def __init__(self, notes: str) -> None:
        self.notes = notes[:MAX_NOTES_CHARS]

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        if self.notes:
            note = acp_trio.text_block(f"Project notes:\n{self.notes}")
            params.prompt.insert(0, note)
        return await self.successor.session_prompt(params)


def main() -> None:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "NOTES.md")
    notes = path.read_text(encoding="utf-8") if path.is_file() else ""
    if not notes:
        print(f"{path}: no notes; prompts pass unchanged", file=sys.stderr)
    trio.run(acp_trio.serve_proxy_stdio, ProjectNotes(notes))


if __name__ == "__main__":
    main()
