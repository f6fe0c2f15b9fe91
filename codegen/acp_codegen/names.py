"""Python names from schema names: classes, attributes, constants."""

from __future__ import annotations

import keyword
import re

import msgspec


def pascal(text: str) -> str:
    """``agent_message_chunk`` -> ``AgentMessageChunk``; ``value_id`` -> ``ValueId``."""
    words = re.split(r"[^0-9A-Za-z]+", text)
    return "".join(word[:1].upper() + word[1:] for word in words if word)


def snake(wire: str) -> str:
    """``toolCallId`` -> ``tool_call_id``; ``_meta`` -> ``meta``; keywords get ``_``."""
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", wire.lstrip("_")).lower()
    name = re.sub(r"[^0-9a-z_]", "_", name)
    if keyword.iskeyword(name) or name[:1].isdigit():
        name += "_"
    return name


def camel_of(attr: str) -> str:
    """The wire name msgspec's ``rename="camel"`` gives attribute `attr`."""
    probe = msgspec.defstruct("Probe", [(attr, int)], rename="camel")
    return msgspec.structs.fields(probe)[0].encode_name


def upper_snake(text: str) -> str:
    return snake(pascal(text)).upper().rstrip("_")
