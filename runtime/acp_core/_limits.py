"""The bounds a connection keeps against its peer, as one record.

Every bound on memory and work that a peer's behaviour could otherwise
drive without limit lives here, with its default; pass your own to any of
:func:`~acp_trio.serve_agent`, :func:`~acp_trio.serve_agent_stdio`,
:func:`~acp_trio.connect_to_agent`, :func:`~acp_trio.connect_to_client` or
:func:`~acp_trio.spawn_agent`::

    limits = acp_trio.Limits(write_buffer_bytes=4 << 20, max_concurrent_requests=16)
    await acp_trio.serve_agent(stream, MyAgent, limits=limits)

``dataclasses.replace(acp_trio.Limits(), ...)`` changes one field of the
defaults.  The table in ``ARCHITECTURE.md`` ("Bounds") repeats them.
"""

from __future__ import annotations

import dataclasses

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "DEFAULT_MAX_NESTING_DEPTH", "Limits"]

#: Default bound on one incoming message, newline excluded (64 MiB: room for
#: base64 images in prompts, small enough to refuse a runaway peer).
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024

#: Default bound on how deep one incoming message nests its arrays and objects
#: (the message's own object counts 1): far deeper than any model or tool
#: JSON, far below where a recursive decoder (msgspec's, Python's) fails.
DEFAULT_MAX_NESTING_DEPTH = 128


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what one connection buffers and does for its peer.

    ``max_message_size`` (64 MiB)
        Longest incoming line.  A longer one is discarded while it streams
        in (only 4 KiB of each end kept), answered -32600 with its ``id``
        when one can be read (``data.maxMessageSize``), or fails the pending
        request it answers.
    ``write_buffer_bytes`` (1 MiB)
        Bytes queued for the peer (written by no one yet) beyond which
        ``send`` waits: every notification and request made by a handler or
        by your code (``await conn.client.session_update(...)``) blocks,
        cancellably, until the peer has read enough.  Answers and errors the
        runtime writes on its own never wait, but the reading task stops
        reading while more than twice this is queued, so a peer that sends
        without reading fills its own pipe, not our memory.
    ``notification_queue_size`` (1024) and ``notification_queue_bytes`` (4 MiB)
        Incoming notifications (with the responses and requests held behind
        them to keep wire order) waiting for their handler, in number and in
        bytes of JSON.  At either bound the reading task stops reading until
        the handlers catch up: the peer's writes then block on the pipe.
        Not while the notification handler waits for the peer's answer to a
        request it made (that answer may be behind what is unread).
    ``max_concurrent_requests`` (128)
        Incoming requests running at once.  Those past the bound wait, in
        order, in the notification queue (counted in its two bounds) and
        start as running ones are answered; reading goes on meanwhile, so
        a ``session/cancel``, a ``$/cancel_request`` or a response is still
        read and acted on.  While one of the running handlers waits for the
        peer's answer to a request it made (the answer may be behind the
        waiting requests), requests past the bound are answered -32603 "Too
        many concurrent requests" (``data.maxConcurrentRequests``) instead.
    ``max_batch_members`` (128)
        Members of one incoming JSON-RPC batch.  A longer batch is answered
        with one -32600 error (``id: null``, ``data.maxBatchMembers``) and
        none of its members is handled, so a 2 MB ``[1,1,...]`` line costs
        one short reply.
    ``max_nesting_depth`` (128)
        How deep one incoming message may nest arrays and objects (the
        message itself is depth 1).  A deeper one is answered -32600 with its
        ``id`` when one can be read (a response-shaped one fails the call it
        answers), before anything decodes it: no reader of the line (the
        envelope, the params' types, a handler) meets a message its decoder
        cannot take.  The same bound, the same check
        (:func:`acp_core.decode_envelope`), in every reader: the engine,
        acp_http (``HttpLimits.max_nesting_depth``), acp_inspect.
    ``max_error_text`` (256)
        Characters of any text taken from the peer's input (a method name, a
        tag, a validation message) in an error the runtime sends back or
        logs; longer text is cut and ends with ``...``.
    ``max_unknown_variants`` (64)
        Kinds of unknown variants (a peer on a newer spec: a method, a path
        and a tag our schema lacks) each logged once at WARNING; the kinds
        past this many are logged at DEBUG, so a peer cannot grow the set.
    """

    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    write_buffer_bytes: int = 1024 * 1024
    notification_queue_size: int = 1024
    notification_queue_bytes: int = 4 * 1024 * 1024
    max_concurrent_requests: int = 128
    max_batch_members: int = 128
    max_nesting_depth: int = DEFAULT_MAX_NESTING_DEPTH
    max_error_text: int = 256
    max_unknown_variants: int = 64

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if type(value) is not int or value < 1:
                raise ValueError(
                    f"Limits.{field.name} must be a positive int, not {value!r}"
                )
        if self.max_error_text < 16:
            raise ValueError("Limits.max_error_text must be at least 16")

    @classmethod
    def resolve(cls, limits: Limits | None, max_message_size: int | None) -> Limits:
        """``limits`` (or the defaults), with ``max_message_size`` if given (the older keyword)."""
        base = cls() if limits is None else limits
        if max_message_size is None or max_message_size == base.max_message_size:
            return base
        return dataclasses.replace(base, max_message_size=max_message_size)
