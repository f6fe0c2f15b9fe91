"""The screen: a session printed as it streams (messages, plan, tool calls, usage)."""

from __future__ import annotations

import os
import sys
import uuid
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, cast

import acp_trio
from msgspec import UnsetType

from acp_client.text import present, tag_of, text_of, visible


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


if TYPE_CHECKING:
    from acp_client.text import Notification

STATUS_MARK = {"pending": " ", "in_progress": "~", "completed": "x"}
ROLES = {"user": "you", "agent": "agent", "thought": "thought"}


@dataclass
class Shown:
    """What was last printed of a tool call (to print only changes)."""

    title: str | None
    status: str
    content: list[str]


class Screen:
    """Prints a session as it streams, from its :class:`acp_trio.SessionTranscript`.

    Every ``session/update`` is applied to the transcript and then shown; text
    chunks continue the current line.  A tool call gets one line when it appears
    and one per status change (a new title alone is no new line), then the
    content it gained; the user's prompt echoed back
    by the agent during the turn is not printed a second time.
    """

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.transcript = acp_trio.SessionTranscript()
        self.open_line: acp_trio.TranscriptMessage | None = None
        self.held = 0  # newlines at the end of the streamed text, not yet shown
        self.shown_plan: list[tuple[str, str]] = []
        self.shown_tools: dict[str, Shown] = {}
        self.echo: str | None = None  # the prompt of the running turn
        self.echoed = ""  # user text received during the turn so far
        self.broken = False

    def write(self, text: str) -> None:
        if self.broken:
            return
        try:
            self.out.write(visible(text))  # everything shown may come from the agent
            self.out.flush()
        except BrokenPipeError:  # e.g. piped into `head`: keep the session going
            self.broken = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.out.fileno())

    def line(self, text: str) -> None:
        self.end_stream()
        self.write(text + "\n")

    def end_stream(self) -> None:
        if self.open_line is not None:
            self.write("\n")
            self.open_line = None
            self.held = 0

    def unknown(self, message: acp_trio.UnknownVariant) -> None:
        """One line for a message the agent's newer spec has and ours has not."""
        tag = message.tag if isinstance(message.tag, str) else repr(message.tag)
        self.line(
            f"[{message.method}: a kind this client does not know "
            f"({_cut(tag, 40)} at {_cut(message.path, 60)}): the agent speaks a newer spec]"
        )

    def update(self, params: Notification) -> None:
        update: object = params.update
        touched = self.transcript.apply(params)
        kind = tag_of(update)  # by wire tag: class names differ between drafts
        if isinstance(touched, acp_trio.TranscriptMessage):
            self.message(touched, update)
        elif isinstance(touched, acp_trio.ToolCallState):
            self.tool(touched)
        elif kind in ("plan", "plan_update", "plan_removed"):
            self.plan([(e.content, e.status) for e in self.transcript.plan])
        elif kind == "usage_update" and self.transcript.usage is not None:
            usage = self.transcript.usage
            share = f" ({100 * usage.used / usage.size:.1f}%)" if usage.size else ""
            cost = ""
            if usage.cost is not None and not isinstance(usage.cost, UnsetType):
                cost = f", cost {usage.cost.amount:.6f} {usage.cost.currency}"
            self.line(f"usage: {usage.used}/{usage.size} tokens{share}{cost}")
        elif kind == "available_commands_update":
            names = ", ".join(
                "/" + _command_name(c) for c in self.transcript.available_commands
            )
            self.line(f"commands: {names}")
        elif kind == "current_mode_update":
            self.line(f"mode: {self.transcript.current_mode_id}")
        elif kind == "session_info_update":
            if self.transcript.session_info.title is not None:
                self.line(f"title: {self.transcript.session_info.title}")
        elif kind != "config_option_update":  # (config options: nothing to show)
            self.line(f"({kind} update)")

    def message(
        self,
        message: acp_trio.TranscriptMessage,
        update: object,
    ) -> None:
        role = ROLES[message.role]
        indent = "\n" + " " * (len(role) + 2)
        content: object = getattr(update, "content", None)
        chunk = tag_of(update).endswith("_chunk")
        if message.role == "user" and self.is_echo(message, update, chunk):
            return
        if chunk and content is not None:  # continues the message being streamed
            if self.open_line is not message:
                self.end_stream()
                self.write(f"{role}: ")
                self.open_line = message
            # trailing newlines wait for more text: the line ends cleanly
            text = "\n" * self.held + text_of(content)
            shown = text.rstrip("\n")
            self.held = len(text) - len(shown)
            self.write(shown.replace("\n", indent))
        elif present(content):  # a v2 upsert; without content: _meta only
            text = "".join(text_of(b) for b in message.content).rstrip("\n")
            self.line(f"{role}: " + text.replace("\n", indent))

    def is_echo(
        self,
        message: acp_trio.TranscriptMessage,
        update: object,
        chunk: bool,
    ) -> bool:
        """Whether a user message update repeats the prompt this client
        printed: some agents echo the prompt back during the turn."""
        if self.echo is None:
            return False
        content: object = getattr(update, "content", None)
        if chunk and content is not None:
            seen = self.echoed + text_of(content)
        else:
            seen = message.text
        if self.echo.startswith(seen) or self.echo.strip() == seen.strip():
            self.echoed = seen
            return True
        self.echo = None  # not an echo after all: show the message from here
        return False

    def user_prompt(self, text: str, version: int) -> None:
        """The user's own prompt joins the transcript (not every agent echoes it)."""
        if version == 2:  # v2 messages need an id: this one is local to the client
            self.transcript.apply(
                acp_trio.user_message(f"local_{uuid.uuid4().hex}", text)
            )
        else:
            self.transcript.apply(acp_trio.user_text(text))
        self.line(f"you: {text}")
        self.echo, self.echoed = text, ""

    def end_turn(self) -> None:
        self.echo = None

    def tool(self, state: acp_trio.ToolCallState) -> None:
        content = [text_of(c).rstrip("\n") for c in state.content]
        before = self.shown_tools.get(state.tool_call_id)
        self.shown_tools[state.tool_call_id] = Shown(state.title, state.status, content)
        if before is None or before.status != state.status:  # a line per state
            self.line(
                f"tool {state.tool_call_id}: {state.title or ''} [{state.status}]"
            )
        elif before.content == content:
            return  # nothing visible changed
        new = content
        if before is not None and content[: len(before.content)] == before.content:
            new = content[len(before.content) :]  # appended content only
        for text in new:
            self.line("    " + text.replace("\n", "\n    "))

    def plan(self, entries: list[tuple[str, str]]) -> None:
        """The whole plan the first time, then only the entries that changed."""
        before = self.shown_plan
        self.shown_plan = entries
        changed = [
            i for i, e in enumerate(entries) if i >= len(before) or before[i] != e
        ]
        whole = len(entries) != len(before) or len(changed) == len(entries)
        if whole:
            self.line("plan:")
        for i in range(len(entries)) if whole else changed:
            content, status = entries[i]
            mark = STATUS_MARK.get(status, "?")
            self.line(f"{'  ' if whole else 'plan: '}[{mark}] {content}")

    def cancelled(self) -> None:
        """After sending session/cancel: unfinished tool calls become cancelled."""
        for tool_call_id in self.transcript.mark_cancelled():
            self.tool(self.transcript.tool_calls[tool_call_id])


def _command_name(command: object) -> str:
    """A command's name; a variant kept raw (a dict) holds it as a key."""
    if isinstance(command, dict):
        return str(cast("dict[str, object]", command).get("name", "?"))
    return str(getattr(command, "name", "?"))
