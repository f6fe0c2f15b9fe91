"""What the echo agent asks by elicitation (protocol v1) and says back.

A prompt with the word "elicit" asks a form (:data:`FORM`: a name, how many
times, loud or not, a colour) and greets as answered; one with the word
"link" asks the client to open a page (URL mode) and, once accepted, sends
``elicitation/complete``.  A client that did not advertise the mode, or a v2
connection (the draft has no elicitation), gets a sentence instead: the
agent never asks a mode the client has not advertised.  Every answer is
handled: accept (the values checked again), decline, cancel.
"""

from __future__ import annotations

import re

from acp_echo.store import Json

ELICIT = re.compile(r"\belicit\b", re.IGNORECASE)
LINK = re.compile(r"\blink\b", re.IGNORECASE)

COLOURS = ["red", "green", "blue"]
FORM: Json = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "title": "Name",
            "description": "who to greet",
            "default": "world",
            "minLength": 1,
            "maxLength": 40,
        },
        "times": {
            "type": "integer",
            "title": "Times",
            "minimum": 1,
            "maximum": 3,
            "default": 1,
        },
        "loud": {"type": "boolean", "title": "Loud", "default": False},
        "colour": {"type": "string", "title": "Colour", "enum": COLOURS},
    },
    "required": ["name", "colour"],
}
PAGE = "https://example.com/echo-agent/consent"


def form_request(session_id: str) -> Json:
    return {
        "sessionId": session_id,
        "mode": "form",
        "message": "How should I greet you?",
        "requestedSchema": FORM,
    }


def url_request(session_id: str, elicitation_id: str) -> Json:
    return {
        "sessionId": session_id,
        "mode": "url",
        "elicitationId": elicitation_id,
        "url": f"{PAGE}?elicitationId={elicitation_id}",
        "message": "Open the echo agent's consent page.",
    }


def greeting(content: object) -> str:
    """The greeting the accepted form asks for (the values checked again)."""
    values: Json = content if isinstance(content, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    name = values.get("name")
    times = values.get("times")
    colour = values.get("colour")
    name = name if isinstance(name, str) and 0 < len(name) <= 40 else "world"
    times = times if isinstance(times, int) and 1 <= times <= 3 else 1
    text = f"Hello, {name}!"
    if values.get("loud") is True:
        text = text.upper()
    said = " ".join([text] * times)
    if colour in COLOURS:
        said += f" (in {colour})"
    return said


def outcome_text(action: object, what: str) -> str:
    """What the agent says to a declined or cancelled elicitation (or another action)."""
    if action == "decline":
        return f"You declined: no {what}."
    if action == "cancel":
        return f"You cancelled: no {what}."
    return f"No {what} ({action!r})."
