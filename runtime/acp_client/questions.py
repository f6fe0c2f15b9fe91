"""Questions to the user on the terminal: permission options, yes/no."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import trio

from acp_client.display import Screen
from acp_client.text import visible

if TYPE_CHECKING:
    from acp_client.text import Option


def describe(option: Option) -> str:
    """A permission option with its kind: ``Allow once [allow_once]``."""
    return f"{option.name} [{option.kind}]"


class Asker:
    """Asks the user on the terminal (``/dev/tty``), one question at a time;
    with ``--yes`` answers "allow once" without asking."""

    def __init__(self, screen: Screen, yes: bool) -> None:
        self.screen = screen
        self.yes = yes
        self.lock = trio.Lock()

    async def ask(self, question: str, valid: Callable[[str], bool]) -> str | None:
        """The user's answer on the terminal; ``None`` without a terminal or at EOF."""
        async with self.lock:
            self.screen.end_stream()

            def ask() -> str | None:
                try:
                    tty_in = open("/dev/tty")
                    tty = open("/dev/tty", "w")  # a tty is not seekable: no "r+"
                except OSError:  # no controlling terminal
                    return None
                with tty_in, tty:
                    while True:
                        tty.write(visible(question))
                        tty.flush()
                        answer = tty_in.readline()
                        if not answer:
                            return None
                        if valid(answer.strip()):
                            return answer.strip()

            return await trio.to_thread.run_sync(ask, abandon_on_cancel=True)

    async def choose(self, title: str, options: Sequence[Option]) -> Option | None:
        """The option picked for a permission request (``None``: cancelled)."""
        if self.yes:  # allow once, never "always": --yes grants this one call
            once = [o for o in options if o.kind == "allow_once"]
            reject = [o for o in options if o.kind == "reject_once"]
            if not once and not reject:
                self.screen.line(
                    f"permission: {title}: no allow-once option, cancelled"
                )
                return None
            option = (once or reject)[0]
            self.screen.line(f"permission: {title}: {describe(option)} (--yes)")
            return option
        choices = "  ".join(f"[{i}] {describe(o)}" for i, o in enumerate(options, 1))

        def valid(answer: str) -> bool:
            return answer.isdigit() and 1 <= int(answer) <= len(options)

        answer = await self.ask(f"permission: {title}? {choices} > ", valid)
        if answer is None:
            rejects = [o for o in options if o.kind == "reject_once"]
            if not rejects:
                self.screen.line(f"permission: {title}: no terminal to ask, cancelled")
                return None
            self.screen.line(f"permission: {title}: no terminal to ask, rejected")
            return rejects[0]
        option = options[int(answer) - 1]
        self.screen.line(f"permission: {title}: {describe(option)}")
        return option

    async def confirm(self, what: str) -> bool:
        """Whether the user allows ``what`` (a file write, a command) once."""
        if self.yes:
            self.screen.line(f"allow: {what} (--yes)")
            return True
        answer = await self.ask(
            f"allow: {what}? [y/N] > ", lambda a: a.lower() in ("y", "n", "")
        )
        allowed = answer is not None and answer.lower() == "y"
        if answer is None:
            self.screen.line(f"allow: {what}: no terminal to ask, refused")
        elif not allowed:
            self.screen.line(f"allow: {what}: refused")
        return allowed
