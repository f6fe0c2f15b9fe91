"""A session's modes and config options, and the session list, as wire JSON
(the same in v1 and v2; each version's class converts them to its types).

Two options, each a select: ``mode`` (category ``mode``: ``ask`` or
``code``, also v1's ``modes`` for ``session/set_mode``) and ``model``
(category ``model``: ``echo`` says the prompt back, ``shout`` says it back
in capitals).  ``session/list`` pages through the store's sessions,
:data:`PAGE` at a time; its cursor is the offset of the next page.
"""

from __future__ import annotations

import acp_trio
import msgspec

from acp_echo.store import Json, Message, Session, Store

#: Sessions in one ``session/list`` answer at most (then ``nextCursor``).
PAGE = 50
#: Characters of a session's title (its first prompt) at most.
TITLE_CHARS = 60

MODES: list[Json] = [
    {"id": "ask", "name": "Ask", "description": "Asks before running the echo tool"},
    {
        "id": "code",
        "name": "Code",
        "description": "Asks before running the echo tool too",
    },
]
MODELS: list[Json] = [
    {"value": "echo", "name": "Echo", "description": "Says the prompt back"},
    {
        "value": "shout",
        "name": "Shout",
        "description": "Says the prompt back in capitals",
    },
]


def invalid(text: str) -> acp_trio.RequestError:
    return acp_trio.RequestError(acp_trio.INVALID_PARAMS, "Invalid params", text)


def config_options(session: Session) -> list[Json]:
    """The session's config options (``configOptions``)."""
    modes = [{"value": m["id"], "name": m["name"]} for m in MODES]
    return [
        {
            "type": "select",
            "id": "mode",
            "name": "Mode",
            "category": "mode",
            "currentValue": session.mode,
            "options": modes,
        },
        {
            "type": "select",
            "id": "model",
            "name": "Model",
            "category": "model",
            "currentValue": session.model,
            "options": MODELS,
        },
    ]


def shaped(options: list[Json], select: type[msgspec.Struct]) -> list[Json]:
    """``options`` with each option's id under the wire name the schema's
    select option (``select``) gives it: ``id``, ``configId`` in later v2
    drafts, so that a spec bump needs no edit here."""
    key = next(
        (
            f.encode_name
            for f in msgspec.structs.fields(select)
            if f.name in ("id", "config_id")
        ),
        "id",
    )
    if key == "id":
        return options
    return [{(key if k == "id" else k): v for k, v in o.items()} for o in options]


def modes(session: Session) -> Json:
    """v1's ``modes`` (a ``SessionModeState``)."""
    return {"currentModeId": session.mode, "availableModes": MODES}


def set_option(session: Session, config_id: str, value: object) -> None:
    """Set ``config_id`` to ``value``, or -32602 (an unknown option or value)."""
    if config_id == "mode":
        allowed = [m["id"] for m in MODES]
    elif config_id == "model":
        allowed = [m["value"] for m in MODELS]
    else:
        raise invalid(f"no config option {config_id!r} (mode, model)")
    if value not in allowed:
        raise invalid(f"{config_id}: {value!r} is not one of {allowed}")
    assert isinstance(value, str)
    if config_id == "mode":
        session.mode = value
    else:
        session.model = value


def title_of(session: Session) -> str | None:
    """The session's first prompt, cut, as its title (``None`` before one)."""
    for item in session.history:
        if isinstance(item, Message) and item.role == "user":
            texts = [b.get("text") for b in item.content]
            text = " ".join(t for t in texts if isinstance(t, str)).strip()
            if text:
                cut = text[:TITLE_CHARS]
                return cut if cut == text else cut.rstrip() + "..."
    return None


def listed(
    store: Store, cwd: str | None, cursor: str | None
) -> tuple[list[Json], str | None]:
    """One page of ``session/list``: the sessions (``SessionInfo`` JSON) of
    ``cwd`` (all without one), and the cursor of the next page (``None``: the
    last); a cursor this agent did not give is -32602."""
    start = 0
    if cursor is not None:
        if not cursor.isdigit():
            raise invalid(f"not a cursor of this agent: {cursor[:40]!r}")
        start = int(cursor)
    found: list[Json] = []
    ids = store.ids()
    matching = [
        session
        for sid in ids
        if (session := store.get(sid)) is not None and cwd in (None, session.cwd)
    ]
    for session in matching[start : start + PAGE]:
        info: Json = {"sessionId": session.session_id, "cwd": session.cwd}
        if session.additional_directories:
            info["additionalDirectories"] = session.additional_directories
        title = title_of(session)
        if title is not None:
            info["title"] = title
        found.append(info)
    more = start + PAGE < len(matching)
    return found, str(start + PAGE) if more else None
