"""Incoming lines and batches: one line read as a message, or answered as none.

Every line takes :func:`on_line`: its envelope decoded (``params`` /
``result`` left raw, :mod:`acp_core._jsonrpc`), then by kind to the
response's call (``_calls``), or to the rules at receipt (``_receipt``).
What is no message is answered here: -32700 (not JSON), -32600 (not a
message; an oversized line, with its ``id`` when one could be read; a batch
past ``max_batch_members``), each logged through a throttle.  A batch's
members take the same path; the batch counts the answers it waits for
and is sent as one array once all are there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, cast

import msgspec

from ._errors import INVALID_REQUEST, PARSE_ERROR
from ._framing import Oversized
from ._jsonrpc import (
    BatchTooLong,
    Envelope,
    InvalidMessage,
    TooDeep,
    check_envelope,
    clip,
    decode_envelope,
    envelope_decoder,
    judge_oversized,
    nested_deeper,
    split_batch,
)
from ._records import Batch
from ._state import EngineState

__all__ = ["on_line", "on_oversized"]

_UNSET: Final[Any] = msgspec.UNSET
#: An Oversized record is no buffer: it fails there (``on_line``).
_decode_envelope = cast(Callable[[Any], Envelope], envelope_decoder.decode)
_nested_deeper = cast(Callable[[Any, int], bool], nested_deeper)
_len = cast(Callable[[Any], int], len)


def on_line(state: EngineState, line: bytes | Oversized, batch: Batch | None) -> bool:
    """Handle one message; whether it gets an answer (a batch counts those).

    ``line``: a line of the peer's, or what :class:`~acp_core._framing.LineBuffer`
    kept of one past ``max_message_size`` (:func:`on_oversized`; its decoding
    fails first).

    A line nested deeper than ``max_nesting_depth`` is decoded by nothing;
    the envelope of any other is decoded by ``envelope_decoder`` (``jsonrpc``
    checked); a line refused, or an envelope breaking a rule of
    :func:`~acp_core._jsonrpc.check_envelope`, is answered by what
    :func:`~acp_core._jsonrpc.decode_envelope` says of it.
    """
    max_depth = state.limits.max_nesting_depth
    try:
        # (an Oversized record fails here); JSON nested d deep takes 2 * d
        # bytes: a shorter line is not looked at (nested_deeper's first test)
        if _len(line) > 2 * max_depth and _nested_deeper(line, max_depth):
            raise ValueError(max_depth)
        env = _decode_envelope(line)
        if env.method is _UNSET:
            env = check_envelope(env)
    except Exception:
        if isinstance(line, Oversized):
            on_oversized(state, line)
            return False
        try:
            env = decode_envelope(line, max_depth)  # raises InvalidMessage: which one
        except InvalidMessage as exc:
            if (
                batch is None
                and not exc.response
                and not isinstance(exc, TooDeep)
                and line.lstrip()[:1] == b"["
            ):
                _on_batch(state, line)
                return False
            _on_invalid(state, exc, line, batch)
            return True
    if env.id is _UNSET:  # (check_envelope: a response has an id)
        state.on_notification(env)
        return False
    if env.method is _UNSET:
        state.on_response(env)
        return False
    state.on_request(env, batch)
    return True


def _on_invalid(
    state: EngineState, exc: InvalidMessage, line: bytes, batch: Batch | None
) -> None:
    """Answer a line that is no valid message.

    A response-shaped one is answered with ``id: null``, never its own id
    (the peer may take it for the answer to its request), and fails the
    call of ours it was meant to answer.
    """
    state.bad_input(exc.message, line)
    ident = exc.ident
    if exc.response:
        message = f"Invalid response from peer: {exc.message}"
        state.fail_call(ident, clip(message, state.limits.max_error_text))
        ident = None
    state.reply_error(ident, exc.code, exc.message, batch)


def _on_batch(state: EngineState, line: bytes) -> None:
    limit = state.limits.max_batch_members
    try:
        members = split_batch(line, limit)
    except BatchTooLong:
        state.bad_input(f"a batch of more than {limit} members", line)
        state.reply_error(
            None,
            INVALID_REQUEST,
            f"Invalid request: a batch may have at most {limit} members",
            data={"maxBatchMembers": limit},
        )
        return
    except msgspec.ValidationError:
        state.bad_input("a batch that is not an array", line)
        state.reply_error(None, INVALID_REQUEST, "Invalid request")
        return
    except msgspec.DecodeError:
        state.bad_input("a line that is not JSON", line)
        state.reply_error(None, PARSE_ERROR, "Parse error")
        return
    except Exception:  # RecursionError: a member nested too deep
        state.bad_input("a batch that could not be decoded", line)
        state.reply_error(None, INVALID_REQUEST, "Invalid request")
        return
    if not members:
        state.bad_input("an empty batch")
        state.reply_error(None, INVALID_REQUEST, "Invalid request: empty batch")
        return
    batch = Batch()
    for member in members:
        if on_line(state, bytes(member), batch):
            batch.expect()
    done = batch.seal()
    if done is not None:
        state.send(done)


def on_oversized(state: EngineState, line: Oversized) -> None:
    """A line past ``max_message_size`` (discarded while it streamed): the
    verdict every reader takes (``judge_oversized``)."""
    limits = state.limits
    verdict = judge_oversized(
        line, limits.max_message_size, limits.max_error_text, calls=state.calls
    )
    state.bad_input(verdict.log)
    if verdict.fails is not None:
        state.fail_call(verdict.fails, verdict.message)
    elif verdict.ident is not None:
        state.reply_error(
            verdict.ident,
            INVALID_REQUEST,
            verdict.message,
            data={"maxMessageSize": limits.max_message_size},
        )
