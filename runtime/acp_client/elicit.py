"""Elicitation (``elicitation/create``, protocol v1): a form asked field by
field on the terminal, or a URL shown for the user to open.

Form mode: each property of the requested schema is one question naming its
type, its choices, its default (Enter keeps it) and whether it is required;
an answer that does not fit is said and asked again.  The values are then
shown for review: send them, edit them (each question again, the values
given so far as defaults), decline or cancel.  ``/decline`` or ``/cancel`` at
any question ends the form so.  URL mode: the URL and its host are shown and
the user says whether they open it (accept), decline or cancel; the client
never opens it itself.  Without a terminal (or at end of input) the request
is cancelled; ``--yes`` sends a form's defaults when every required field has
one (else cancels) and never consents to a URL.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Literal, cast
from urllib.parse import urlsplit

import acp_trio

from acp_client.calls import Json
from acp_client.display import Screen
from acp_client.questions import Asker

#: Fields of one form asked at most (a bigger form is cancelled, said).
MAX_FIELDS = 32
#: URL elicitations remembered for their ``elicitation/complete`` at most.
MAX_OPEN = 64
#: Characters of a value shown for review at most.
SHOWN = 2000

Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Outcome:
    """The answer: an action, and the form's values when accepted."""

    action: Action
    content: Json | None = None

    def wire(self) -> Json:
        answer: Json = {"action": self.action}
        if self.content is not None:
            answer["content"] = self.content
        return answer


class Stop(Exception):
    """The user ended the form (``/decline``, ``/cancel``, no terminal)."""

    def __init__(self, action: Action) -> None:
        super().__init__(action)
        self.action: Action = action


#: A field left empty without a default, not required: not sent.
MISSING = object()


@dataclass(frozen=True)
class Field:
    """One property of a form's schema."""

    name: str
    kind: str  # string, number, integer, boolean, array
    title: str
    required: bool
    default: object
    choices: list[str] = field(default_factory=list[str])
    schema: Json = field(default_factory=dict[str, object])


def as_json(value: object) -> Json:
    return cast("Json", value) if isinstance(value, dict) else {}


def choices_of(schema: Json) -> list[str]:
    """The allowed strings: ``enum``, or the ``const`` of each ``oneOf`` / ``anyOf``."""
    raw: object = schema.get("enum")
    if isinstance(raw, list):
        return [str(v) for v in cast("list[object]", raw)]
    for key in ("oneOf", "anyOf"):
        listed: object = schema.get(key)
        if isinstance(listed, list):
            items = [as_json(v).get("const") for v in cast("list[object]", listed)]
            return [str(v) for v in items if v is not None]
    return []


def fields_of(schema: Json) -> list[Field]:
    """The form's fields, in the schema's order."""
    required_raw: object = schema.get("required")
    required = (
        {str(n) for n in cast("list[object]", required_raw)}
        if isinstance(required_raw, list)
        else set[str]()
    )
    found: list[Field] = []
    for name, raw in as_json(schema.get("properties")).items():
        prop = as_json(raw)
        kind = str(prop.get("type", "string"))
        choices = choices_of(as_json(prop.get("items")) if kind == "array" else prop)
        title = prop.get("title")
        found.append(
            Field(
                name,
                kind,
                title if isinstance(title, str) else name,
                name in required,
                prop.get("default"),
                choices,
                prop,
            )
        )
    return found


def _number(f: Field, value: float) -> None:
    low, high = f.schema.get("minimum"), f.schema.get("maximum")
    if isinstance(low, int | float) and value < low:
        raise ValueError(f"at least {low}")
    if isinstance(high, int | float) and value > high:
        raise ValueError(f"at most {high}")


def parse(f: Field, text: str, default: object = None) -> object:
    """The value ``text`` gives ``f`` (empty: ``default``, else the schema's
    default), or ValueError(why)."""
    if not text:
        default = f.default if default is None else default
        if default is not None:
            return default
        if f.required:
            raise ValueError("required")
        return MISSING
    if f.kind == "boolean":
        if text.lower() in ("y", "yes", "true"):
            return True
        if text.lower() in ("n", "no", "false"):
            return False
        raise ValueError("yes or no")
    if f.kind == "integer":
        try:
            number = int(text)
        except ValueError:
            raise ValueError("a whole number") from None
        _number(f, number)
        return number
    if f.kind == "number":
        try:
            real = float(text)
        except ValueError:
            raise ValueError("a number") from None
        if not math.isfinite(real):
            raise ValueError("a finite number")
        _number(f, real)
        return real
    if f.kind == "array":
        items = [item.strip() for item in text.split(",") if item.strip()]
        wrong = [i for i in items if f.choices and i not in f.choices]
        if wrong:
            raise ValueError(f"each one of {', '.join(f.choices)}")
        low, high = f.schema.get("minItems"), f.schema.get("maxItems")
        if isinstance(low, int) and len(items) < low:
            raise ValueError(f"at least {low} items")
        if isinstance(high, int) and len(items) > high:
            raise ValueError(f"at most {high} items")
        return items
    if f.choices and text not in f.choices:
        raise ValueError(f"one of {', '.join(f.choices)}")
    low, high = f.schema.get("minLength"), f.schema.get("maxLength")
    if isinstance(low, int) and len(text) < low:
        raise ValueError(f"at least {low} characters")
    if isinstance(high, int) and len(text) > high:
        raise ValueError(f"at most {high} characters")
    pattern = f.schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, text) is not None
        except re.error:
            matched = True  # a pattern Python cannot read: the agent validates
        if not matched:
            raise ValueError(f"matching {pattern}")
    return text


def question(f: Field, default: object) -> str:
    """``  name [integer 1..5] (default 1, required)? > ``."""
    about = f.kind
    if f.choices:
        about += ": " + "|".join(f.choices)
    low, high = f.schema.get("minimum"), f.schema.get("maximum")
    if low is not None or high is not None:
        about += f" {'' if low is None else low}..{'' if high is None else high}"
    notes = [f"default {json.dumps(default)}"] if default is not None else []
    if f.required:
        notes.append("required")
    said = f" ({', '.join(notes)})" if notes else ""
    description = f.schema.get("description")
    hint = f" - {description}" if isinstance(description, str) else ""
    return f"  {f.title} [{about}]{said}{hint}? > "


class Elicitor:
    """Answers the agent's elicitations on the terminal (see the module docstring)."""

    def __init__(self, screen: Screen, asker: Asker, yes: bool) -> None:
        self.screen = screen
        self.asker = asker
        self.yes = yes
        #: URL elicitations accepted and not completed: id -> URL
        self.opened: dict[str, str] = {}

    async def answer(self, params: Json) -> Outcome:
        """The answer to an ``elicitation/create`` (its params as wire JSON)."""
        mode = params.get("mode")
        message = str(params.get("message") or "")
        if mode == "form":
            return await self.form(message, as_json(params.get("requestedSchema")))
        if mode == "url":
            url, ident = str(params.get("url")), str(params.get("elicitationId"))
            return await self.url(message, url, ident)
        # elicitation.mdx: a mode the client did not advertise is -32602
        raise acp_trio.RequestError(
            acp_trio.INVALID_PARAMS, "Invalid params", f"unknown mode {mode!r}"
        )

    async def ask(self, text: str) -> str:
        answer = await self.asker.ask(text, lambda _: True)
        if answer is None:
            raise Stop("cancel")
        if answer in ("/decline", "/cancel"):
            ended: Action = "decline" if answer == "/decline" else "cancel"
            raise Stop(ended)
        return answer

    async def form(self, message: str, schema: Json) -> Outcome:
        fields = fields_of(schema)
        self.screen.line(f"elicitation: the agent asks: {message}")
        if len(fields) > MAX_FIELDS:
            self.screen.line(f"elicitation: over {MAX_FIELDS} fields, cancelled")
            return Outcome("cancel")
        if self.yes:
            missing = [f.name for f in fields if f.required and f.default is None]
            if missing:
                self.screen.line("elicitation: cancelled (--yes fills in no form)")
                return Outcome("cancel")
            defaults = {f.name: f.default for f in fields if f.default is not None}
            self.screen.line(
                f"elicitation: the defaults sent (--yes): {self.shown(defaults)}"
            )
            return Outcome("accept", defaults)
        self.screen.line(
            "  (Enter keeps the default; /decline or /cancel at any question)"
        )
        values: Json = {}
        try:
            while True:
                for f in fields:
                    value = await self.field(f, values.get(f.name, f.default))
                    if value is MISSING:
                        values.pop(f.name, None)
                    else:
                        values[f.name] = value
                choice = await self.asker.ask(
                    f"elicitation: send {self.shown(values)}? [y]es, [e]dit, [d]ecline, [c]ancel > ",
                    lambda a: a.lower() in ("y", "e", "d", "c"),
                )
                if choice is None or choice.lower() == "c":
                    raise Stop("cancel")
                if choice.lower() == "d":
                    raise Stop("decline")
                if choice.lower() == "y":
                    self.screen.line("elicitation: sent")
                    return Outcome("accept", values)
        except Stop as stop:
            said = "declined" if stop.action == "decline" else "cancelled"
            self.screen.line(f"elicitation: {said}")
            return Outcome(stop.action)

    async def field(self, f: Field, current: object) -> object:
        """One field's value, asked until it fits (or the form ends: Stop)."""
        while True:
            text = await self.ask(question(f, current))
            try:
                return parse(f, text, current)
            except ValueError as why:
                self.screen.line(f"  {f.title}: {why}")

    async def url(self, message: str, url: str, elicitation_id: str) -> Outcome:
        host = urlsplit(url).hostname or "(no host)"
        self.screen.line(
            f"elicitation: the agent asks you to open a page on {host}: {message}"
        )
        self.screen.line(f"  {url}")
        if self.yes:
            self.screen.line("elicitation: cancelled (--yes opens no URL)")
            return Outcome("cancel")
        answer = await self.asker.ask(
            "open it (in your browser)? [y]es, [n]o (decline), [c]ancel > ",
            lambda a: a.lower() in ("y", "n", "c"),
        )
        if answer is None or answer.lower() == "c":
            self.screen.line("elicitation: cancelled")
            return Outcome("cancel")
        if answer.lower() == "n":
            self.screen.line("elicitation: declined")
            return Outcome("decline")
        if len(self.opened) >= MAX_OPEN:
            self.opened.pop(next(iter(self.opened)))
        self.opened[elicitation_id] = url
        self.screen.line(
            f"elicitation: open {url} (waiting for the agent to say it is done)"
        )
        return Outcome("accept")

    def complete(self, elicitation_id: str) -> None:
        """``elicitation/complete``: said for an open URL; unknown ids ignored."""
        url = self.opened.pop(elicitation_id, None)
        if url is not None:
            self.screen.line(f"elicitation: {url}: done")

    @staticmethod
    def shown(values: Json) -> str:
        text = json.dumps(values, ensure_ascii=False)
        return text if len(text) <= SHOWN else text[:SHOWN] + "..."
