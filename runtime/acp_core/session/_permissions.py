"""Asking the user's permission for a tool call, and reading the answer.

:class:`PermissionBroker` is the agent-side chore of the official SDK's
``acp.contrib.PermissionBroker``, typed, on msgspec: it builds the
``session/request_permission`` request for a tracked tool call (or one you
give), with a default set of options, sends it through the client, and
returns a :class:`Permission` that says what the user chose::

    broker = PermissionBroker(conn.client, session_id, tracker=tracker)
    permission = await broker.request("write")
    if permission.cancelled:          # the turn was cancelled meanwhile
        return v1.PromptResponse(stop_reason="cancelled")
    if permission.allowed:            # allow_once or allow_always
        ...

When the client cancels the turn (``session/cancel``) while the request is
pending, its runtime answers the request ``cancelled``: ``permission.cancelled``
is true and the prompt should end with ``stopReason: "cancelled"``.
Protocol version 1 (the stable surface).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from .._schema import protocol_module
from ._tool_calls import ToolCallTracker

if TYPE_CHECKING:  # acp_schema.v1 is imported with the first broker, not acp_core
    from acp_schema import v1

__all__ = ["Permission", "PermissionBroker", "default_permission_options"]


def default_permission_options() -> tuple[v1.PermissionOption, ...]:
    """Approve once, approve for the session, reject (the official SDK's set)."""
    schema = protocol_module(1)
    options: tuple[v1.PermissionOption, ...] = (
        schema.PermissionOption(option_id="approve", name="Approve", kind="allow_once"),
        schema.PermissionOption(
            option_id="approve_for_session",
            name="Approve for session",
            kind="allow_always",
        ),
        schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
    )
    return options


class PermissionRequester(Protocol):
    """What sends the request: ``conn.client`` (a ``v1.Client``) has it."""

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse: ...


@dataclasses.dataclass(frozen=True)
class Permission:
    """The user's answer: the option chosen (``None`` if the turn was cancelled)."""

    option: v1.PermissionOption | None
    response: v1.RequestPermissionResponse

    @property
    def cancelled(self) -> bool:
        """The request was answered ``cancelled`` (the turn was cancelled)."""
        return self.option is None

    @property
    def allowed(self) -> bool:
        """An ``allow_once`` or ``allow_always`` option was chosen."""
        return self.option is not None and self.option.kind in (
            "allow_once",
            "allow_always",
        )

    @property
    def always(self) -> bool:
        """The option chosen holds for the rest of the session (``*_always``)."""
        return self.option is not None and self.option.kind.endswith("_always")


class PermissionBroker:
    """Permission requests of one session, for tool calls of ``tracker`` (or
    given whole), with ``options`` (default: :func:`default_permission_options`)
    unless a request names its own."""

    def __init__(
        self,
        client: PermissionRequester,
        session_id: str,
        *,
        tracker: ToolCallTracker | None = None,
        options: Sequence[v1.PermissionOption] | None = None,
    ) -> None:
        if options is None:
            options = default_permission_options()
        if not options:
            raise ValueError("a permission request needs at least one option")
        self._client = client
        self.session_id = session_id
        self._tracker = tracker
        self._options = tuple(options)

    async def request(
        self,
        call: str | v1.ToolCallUpdate,
        *,
        options: Sequence[v1.PermissionOption] | None = None,
    ) -> Permission:
        """Ask about ``call`` (a key of the tracker, or the tool call itself).

        Raises :class:`ValueError` for an answer naming an option that was
        not offered, :class:`KeyError` for a key the tracker does not have.
        """
        if isinstance(call, str):
            if self._tracker is None:
                raise ValueError("a key needs a tracker: PermissionBroker(tracker=...)")
            call = self._tracker.tool_call(call)
        offered = tuple(options) if options is not None else self._options
        if not offered:
            raise ValueError("a permission request needs at least one option")
        schema = protocol_module(1)
        response = await self._client.session_request_permission(
            schema.RequestPermissionRequest(
                session_id=self.session_id, tool_call=call, options=list(offered)
            )
        )
        # SelectedPermissionOutcome has the option's id; the cancelled one none
        chosen_id: object = getattr(response.outcome, "option_id", None)
        if not isinstance(chosen_id, str):
            return Permission(None, response)
        chosen = next((o for o in offered if o.option_id == chosen_id), None)
        if chosen is None:
            raise ValueError(
                f"the client chose {chosen_id[:64]!r}, which was not offered"
            )
        return Permission(chosen, response)
