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

Protocol version 1 by default; ``PermissionBroker(..., version=acp_schema.v2)``
speaks the v2 draft: the request carries the tool call as its ``tool_call``
subject, and a ``title`` (default: the tool call's title, else its id) and
an optional ``description`` for the prompt.  An outcome the agent does not
know (a newer v2 peer's) is neither allowed nor cancelled, as the draft says
(never approval).  The broker and its :class:`Permission` are typed by their
version.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, overload

from msgspec import UNSET, UnsetType

from .._vocabulary import variant_tag
from ._tool_calls import ToolCallTracker, permission_tool_call_class
from ._versions import V1Module, V2Module, vocab_of

if TYPE_CHECKING:  # acp_schema is imported with the first broker, not acp_core
    from acp_schema import v1, v2
    from typing_extensions import TypeVar

    #: the permission option class (``PermissionOption`` of the version)
    OptionT = TypeVar("OptionT", bound="Option", default=v1.PermissionOption)
    #: the tool call a request carries (``ToolCallUpdate`` of the version)
    CallT = TypeVar("CallT", default=v1.ToolCallUpdate)
    #: the answer (``RequestPermissionResponse`` of the version)
    ResponseT = TypeVar("ResponseT", default=v1.RequestPermissionResponse)
    RequestT_contra = TypeVar("RequestT_contra", contravariant=True)
    ResponseT_co = TypeVar("ResponseT_co", covariant=True)
else:
    from typing import TypeVar

    OptionT = TypeVar("OptionT")
    CallT = TypeVar("CallT")
    ResponseT = TypeVar("ResponseT")
    RequestT_contra = TypeVar("RequestT_contra", contravariant=True)
    ResponseT_co = TypeVar("ResponseT_co", covariant=True)

__all__ = ["Permission", "PermissionBroker", "default_permission_options"]


class Option(Protocol):
    """What the broker reads of a permission option (either version's)."""

    @property
    def option_id(self) -> str: ...
    @property
    def kind(self) -> str: ...


@overload
def default_permission_options(
    *, version: V1Module = ...
) -> tuple[v1.PermissionOption, ...]: ...
@overload
def default_permission_options(
    *, version: V2Module
) -> tuple[v2.PermissionOption, ...]: ...
@overload
def default_permission_options(*, version: types.ModuleType) -> tuple[Any, ...]: ...
def default_permission_options(*, version: object = None) -> tuple[Any, ...]:
    """Approve once, approve for the session, reject (the official SDK's set)."""
    vocab = vocab_of(version)
    option = vocab.member(vocab.params("session/request_permission"), "options")
    return (
        option(option_id="approve", name="Approve", kind="allow_once"),
        option(
            option_id="approve_for_session",
            name="Approve for session",
            kind="allow_always",
        ),
        option(option_id="reject", name="Reject", kind="reject_once"),
    )


class PermissionRequester(Protocol[RequestT_contra, ResponseT_co]):
    """What sends the request: ``conn.client`` (a ``v1.Client`` or ``v2.Client``) has it."""

    async def session_request_permission(
        self, params: RequestT_contra
    ) -> ResponseT_co: ...


@dataclasses.dataclass(frozen=True)
class Permission(Generic[OptionT, ResponseT]):
    """The user's answer: the option chosen (``None`` if none was: the turn
    was cancelled, or a v2 outcome this library does not know)."""

    option: OptionT | None
    response: ResponseT

    @property
    def cancelled(self) -> bool:
        """The request was answered ``cancelled`` (the turn was cancelled)."""
        return variant_tag(getattr(self.response, "outcome", None)) == "cancelled"

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


class PermissionBroker(Generic[OptionT, CallT, ResponseT]):
    """Permission requests of one session, for tool calls of ``tracker`` (or
    given whole), with ``options`` (default: :func:`default_permission_options`)
    unless a request names its own.  ``version`` is ``acp_schema.v1`` (the
    default) or ``acp_schema.v2``; a tracker must speak the same one."""

    @overload
    def __init__(
        self: PermissionBroker[
            v1.PermissionOption, v1.ToolCallUpdate, v1.RequestPermissionResponse
        ],
        client: PermissionRequester[
            v1.RequestPermissionRequest, v1.RequestPermissionResponse
        ],
        session_id: str,
        *,
        tracker: ToolCallTracker[Any, Any, v1.ToolCallUpdate] | None = None,
        options: Sequence[v1.PermissionOption] | None = None,
        version: V1Module = ...,
    ) -> None: ...
    @overload
    def __init__(
        self: PermissionBroker[
            v2.PermissionOption, v2.ToolCallUpdate, v2.RequestPermissionResponse
        ],
        client: PermissionRequester[
            v2.RequestPermissionRequest, v2.RequestPermissionResponse
        ],
        session_id: str,
        *,
        tracker: ToolCallTracker[Any, Any, v2.ToolCallUpdate] | None = None,
        options: Sequence[v2.PermissionOption] | None = None,
        version: V2Module,
    ) -> None: ...
    def __init__(
        self,
        client: Any,
        session_id: str,
        *,
        tracker: ToolCallTracker[Any, Any, Any] | None = None,
        options: Sequence[Any] | None = None,
        version: object = None,
    ) -> None:
        self._vocab = vocab_of(version)
        #: the generated module spoken (``acp_schema.v1`` or ``v2``)
        self.version: types.ModuleType = self._vocab.module
        if tracker is not None and tracker.version is not self.version:
            raise ValueError(
                f"the tracker speaks {tracker.version.__name__}, the broker"
                f" {self.version.__name__}: pass the same version= to both"
            )
        if options is None:
            options = default_permission_options(version=self.version)
        if not options:
            raise ValueError("a permission request needs at least one option")
        self._client = client
        self.session_id = session_id
        self._tracker = tracker
        self._options: tuple[OptionT, ...] = tuple(options)

    async def request(
        self,
        call: str | CallT,
        *,
        options: Sequence[OptionT] | None = None,
        title: str | None = None,
        description: str | UnsetType = UNSET,
    ) -> Permission[OptionT, ResponseT]:
        """Ask about ``call`` (a key of the tracker, or the tool call itself).

        ``title`` and ``description`` are the v2 prompt's (``title`` by
        default the tool call's title, else its id); v1 has no such fields
        and refuses them.  Raises :class:`ValueError` for an answer naming
        an option that was not offered, :class:`KeyError` for a key the
        tracker does not have.
        """
        tool_call: Any = call
        if isinstance(call, str):
            if self._tracker is None:
                raise ValueError("a key needs a tracker: PermissionBroker(tracker=...)")
            tool_call = self._tracker.tool_call(call)
        offered = tuple(options) if options is not None else self._options
        if not offered:
            raise ValueError("a permission request needs at least one option")
        response: Any = await self._client.session_request_permission(
            self._build(tool_call, offered, title, description)
        )
        # SelectedPermissionOutcome has the option's id; the others none
        chosen_id: object = getattr(response.outcome, "option_id", None)
        if (
            not isinstance(chosen_id, str)
            or variant_tag(response.outcome) != "selected"
        ):
            return Permission(None, response)
        chosen = next((o for o in offered if o.option_id == chosen_id), None)
        if chosen is None:
            raise ValueError(
                f"the client chose {chosen_id[:64]!r}, which was not offered"
            )
        return Permission(chosen, response)

    def _build(
        self,
        call: Any,
        offered: tuple[OptionT, ...],
        title: str | None,
        description: str | UnsetType,
    ) -> Any:
        """The version's ``RequestPermissionRequest``."""
        vocab = self._vocab
        request = vocab.params("session/request_permission")
        if "tool_call" in request.__struct_fields__:  # v1: the tool call itself
            if title is not None or not isinstance(description, UnsetType):
                raise ValueError(
                    f"title and description are v2's, not {self.version.__name__}'s"
                )
            return request(
                session_id=self.session_id, tool_call=call, options=list(offered)
            )
        cls = permission_tool_call_class(vocab)
        subject = vocab.variant(
            vocab.field(request, "subject"), "tool_call", "permission subject"
        )
        if title is None:
            named = call.title if isinstance(call, cls) else None
            title = named if isinstance(named, str) and named else call.tool_call_id
        return request(
            session_id=self.session_id,
            title=title,
            description=description,
            subject=subject(tool_call=call),
            options=list(offered),
        )
