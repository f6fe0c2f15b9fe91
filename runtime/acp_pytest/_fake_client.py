"""A scriptable client for testing agents: its answers scripted, every call recorded.

::

    client = FakeClient(permissions=["allow"], files={"/w/a.txt": "hello"})
    conn = await acp_in_memory.connect(MyAgent, client)
    ...
    client.transcript().messages   # what the agent streamed
    client.calls                   # every call, in order, with its answer

A :class:`FakeClient` is the client's factory (pass it where a client class
goes): each connection builds a handler over the same script and records.
It speaks whatever version the connection chose: answers are written as
JSON and converted by that version's types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from acp_core import INVALID_PARAMS, RequestError, SessionTranscript

from ._schema_calls import MAX_CALLS, RecordedCall, answer_of, keep, module_of, shown

__all__ = ["CANCELLED", "FakeClient", "FakeTerminal", "OpenedTerminal"]

#: A permission answer: the request is answered ``cancelled``.
CANCELLED: Final = "cancelled"
#: JSON-RPC code of "resource not found" (ACP's, for a file the script lacks).
RESOURCE_NOT_FOUND: Final = -32002


@dataclass(frozen=True)
class FakeTerminal:
    """What a terminal running a scripted command shows: its output and exit."""

    output: str = ""
    exit_code: int | None = 0
    signal: str | None = None


@dataclass
class OpenedTerminal:
    """A terminal the agent created: its command, and what it did to it."""

    terminal_id: str
    command: str
    args: list[str]
    script: FakeTerminal
    output_byte_limit: int | None = None
    killed: bool = False
    released: bool = False


def _kept_output(output: str, limit: int | None) -> tuple[str, bool]:
    """The output a client keeps under ``outputByteLimit``: the end, cut from
    the beginning at a character boundary; and whether it was cut."""
    data = output.encode()
    if limit is None or len(data) <= limit:
        return output, False
    kept = data[len(data) - limit :]
    while kept and (kept[0] & 0xC0) == 0x80:  # a UTF-8 continuation byte
        kept = kept[1:]
    return kept.decode(), True


@dataclass
class FakeClient:
    """A client whose answers are scripted and whose calls are recorded.

    - ``permissions``: the answers to ``session/request_permission``, in
      order (the last one repeats): an option id, an option kind
      (``"allow_once"``, ``"reject_once"``...) or :data:`CANCELLED`.  An
      answer that names no option offered is a *problem* (see below) and the
      request is answered cancelled.
    - ``files``: path -> text for ``fs/read_text_file`` (``line`` and
      ``limit`` honoured; a path not here is answered -32002);
      ``fs/write_text_file`` writes here.
    - ``terminals``: command -> :class:`FakeTerminal` (a command not here
      gets ``FakeTerminal()``: no output, exit code 0); the output kept
      under the request's ``outputByteLimit`` is its end, cut at a character
      boundary (``truncated``); ``terminal/*`` on a released or unknown
      terminal is answered -32602.
    - ``elicitations``: the answers to ``elicitation/create`` as JSON
      (``{"action": "accept", "content": {...}}``), in order (the last one
      repeats; none: ``{"action": "decline"}``).

    Records: :attr:`calls` (every call, its params and answer; past
    ``max_calls``, ``MAX_CALLS`` by default, only counted in
    :attr:`dropped`), the
    transcript of each session (:meth:`transcript`), :attr:`opened`
    terminals, and :attr:`problems` (script answers that could not be given;
    the plugin fails the test with them).
    """

    permissions: Sequence[str] = ("allow_once",)
    files: dict[str, str] = field(default_factory=dict[str, str])
    terminals: Mapping[str, FakeTerminal] = field(
        default_factory=dict[str, FakeTerminal]
    )
    elicitations: Sequence[Mapping[str, Any]] = ()
    calls: list[RecordedCall] = field(default_factory=list[RecordedCall])
    transcripts: dict[str, SessionTranscript] = field(
        default_factory=dict[str, SessionTranscript]
    )
    opened: dict[str, OpenedTerminal] = field(default_factory=dict[str, OpenedTerminal])
    problems: list[str] = field(default_factory=list[str])
    max_calls: int = MAX_CALLS
    dropped: int = 0

    def __post_init__(self) -> None:
        self._asked = 0
        self._elicited = 0

    def __call__(self, conn: object) -> _FakeClientHandler:
        """The handler object of one connection (the runtime calls this)."""
        return _FakeClientHandler(self)

    def transcript(self, session_id: str | None = None) -> SessionTranscript:
        """The session's transcript; without ``session_id``, the only session's."""
        if session_id is not None:
            return self.transcripts.setdefault(
                session_id, SessionTranscript(session_id)
            )
        if len(self.transcripts) != 1:
            raise AssertionError(
                f"the client saw {len(self.transcripts)} sessions "
                f"({', '.join(self.transcripts) or 'none'}): name one"
            )
        return next(iter(self.transcripts.values()))

    def methods(self) -> list[str]:
        """The methods called, in order."""
        return [call.method for call in self.calls]

    # the script's next answers ----------------------------------------------------

    def next_permission(self) -> str:
        script = self.permissions or (CANCELLED,)
        choice = script[min(self._asked, len(script) - 1)]
        self._asked += 1
        return choice

    def next_elicitation(self) -> Mapping[str, Any]:
        script = self.elicitations or ({"action": "decline"},)
        answer = script[min(self._elicited, len(script) - 1)]
        self._elicited += 1
        return answer

    def terminal(self, terminal_id: str, method: str) -> OpenedTerminal:
        opened = self.opened.get(terminal_id)
        if opened is None or opened.released:
            state = "unknown" if opened is None else "released"
            raise RequestError(
                INVALID_PARAMS, f"{method}: terminal {terminal_id!r} is {state}"
            )
        return opened


def _permission(options: Sequence[Any], choice: str) -> Any:
    """The option ``choice`` names (by id, else by kind), or ``None``."""
    for option in options:
        if option.option_id == choice:
            return option
    for option in options:
        if option.kind == choice:
            return option
    return None


def _lines(text: str, line: int | None, limit: int | None) -> str:
    """``text`` from 1-based ``line``, at most ``limit`` lines."""
    if line is None and limit is None:
        return text
    kept = text.splitlines(keepends=True)
    start = max((line or 1) - 1, 0)
    end = None if limit is None else start + limit
    return "".join(kept[start:end])


def _set(value: Any) -> Any:
    """``None`` for an absent (UNSET) field."""
    return None if type(value).__name__ == "UnsetType" else value


class _FakeClientHandler:
    """The handler object a connection serves: each method answers from the script."""

    def __init__(self, fake: FakeClient) -> None:
        self._fake = fake

    def _record(self, method: str, params: Any) -> RecordedCall:
        call = RecordedCall(method, params)
        fake = self._fake
        if not keep(fake.calls, call, fake.max_calls):
            fake.dropped += 1
        return call

    def _answer(self, call: RecordedCall, answer: Mapping[str, Any]) -> Any:
        call.answer = answer_of(module_of(call.params), "CLIENT", call.method, answer)
        return call.answer

    def _fail(self, call: RecordedCall, error: RequestError) -> RequestError:
        call.answer = error
        return error

    async def session_update(self, params: Any) -> None:
        self._record("session/update", params)
        fake = self._fake
        transcript = fake.transcripts.get(params.session_id)
        if transcript is None:
            transcript = fake.transcripts[params.session_id] = SessionTranscript(
                params.session_id
            )
        transcript.apply(params)

    async def session_request_permission(self, params: Any) -> Any:
        call = self._record("session/request_permission", params)
        choice = self._fake.next_permission()
        if choice == CANCELLED:
            return self._answer(call, {"outcome": {"outcome": "cancelled"}})
        option = _permission(params.options, choice)
        if option is None:
            offered = ", ".join(f"{o.option_id} ({o.kind})" for o in params.options)
            self._fake.problems.append(
                f"session/request_permission: the script answers {choice!r}, "
                f"which names none of the options offered: {shown(offered) or 'none'}"
            )
            return self._answer(call, {"outcome": {"outcome": "cancelled"}})
        return self._answer(
            call, {"outcome": {"outcome": "selected", "optionId": option.option_id}}
        )

    async def fs_read_text_file(self, params: Any) -> Any:
        call = self._record("fs/read_text_file", params)
        text = self._fake.files.get(params.path)
        if text is None:
            raise self._fail(
                call,
                RequestError(
                    RESOURCE_NOT_FOUND, "Resource not found", {"uri": params.path}
                ),
            )
        content = _lines(text, _set(params.line), _set(params.limit))
        return self._answer(call, {"content": content})

    async def fs_write_text_file(self, params: Any) -> Any:
        call = self._record("fs/write_text_file", params)
        self._fake.files[params.path] = params.content
        return self._answer(call, {})

    async def terminal_create(self, params: Any) -> Any:
        call = self._record("terminal/create", params)
        fake = self._fake
        terminal_id = f"term-{len(fake.opened) + 1}"
        script = fake.terminals.get(params.command, FakeTerminal())
        args = list(_set(params.args) or [])
        fake.opened[terminal_id] = OpenedTerminal(
            terminal_id, params.command, args, script, _set(params.output_byte_limit)
        )
        return self._answer(call, {"terminalId": terminal_id})

    def _exit_status(self, opened: OpenedTerminal) -> dict[str, Any]:
        if opened.killed:
            return {"exitCode": None, "signal": "SIGKILL"}
        return {"exitCode": opened.script.exit_code, "signal": opened.script.signal}

    async def terminal_output(self, params: Any) -> Any:
        call = self._record("terminal/output", params)
        try:
            opened = self._fake.terminal(params.terminal_id, call.method)
        except RequestError as exc:
            raise self._fail(call, exc) from None
        output, truncated = _kept_output(opened.script.output, opened.output_byte_limit)
        return self._answer(
            call,
            {
                "output": output,
                "truncated": truncated,
                "exitStatus": self._exit_status(opened),
            },
        )

    async def terminal_wait_for_exit(self, params: Any) -> Any:
        call = self._record("terminal/wait_for_exit", params)
        try:
            opened = self._fake.terminal(params.terminal_id, call.method)
        except RequestError as exc:
            raise self._fail(call, exc) from None
        return self._answer(call, self._exit_status(opened))

    async def terminal_kill(self, params: Any) -> Any:
        call = self._record("terminal/kill", params)
        try:
            opened = self._fake.terminal(params.terminal_id, call.method)
        except RequestError as exc:
            raise self._fail(call, exc) from None
        opened.killed = True
        return self._answer(call, {})

    async def terminal_release(self, params: Any) -> Any:
        call = self._record("terminal/release", params)
        try:
            opened = self._fake.terminal(params.terminal_id, call.method)
        except RequestError as exc:
            raise self._fail(call, exc) from None
        opened.released = True
        return self._answer(call, {})

    async def elicitation_create(self, params: Any) -> Any:
        call = self._record("elicitation/create", params)
        return self._answer(call, dict(self._fake.next_elicitation()))

    async def elicitation_complete(self, params: Any) -> None:
        self._record("elicitation/complete", params)
