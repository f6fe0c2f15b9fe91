"""The ``initialize`` of a client offering several protocol versions.

The client speaks first and cannot know the agent's version, so its one
``initialize`` must be read right by an agent of any version it offers.
Each version names its fields its own way (v1 ``clientCapabilities``, v2
``capabilities``) and an agent ignores fields its version does not define,
so one message can carry them all: :func:`merge_initialize` takes one
``InitializeRequest`` per offered version and unites their JSON objects::

    await conn.initialize(
        v1.InitializeRequest(protocol_version=1, client_capabilities=v1_caps, client_info=info),
        v2.InitializeRequest(protocol_version=2, capabilities=v2_caps, client_info=info),
    )
    # sends {"protocolVersion": 2, "clientCapabilities": {...}, "capabilities": {...},
    #        "clientInfo": {...}}: a v1-only agent sees fs/terminal support

Rules: ``protocolVersion`` is the highest of the requests' (the latest the
client supports, as the spec asks); every other field is taken from the
request that has it; a field two requests both carry must have the same
JSON value (``clientInfo`` named alike in two versions is one field), else
:class:`ValueError` (one message cannot say two things); one request per
version, each of a version the client offers.  Nothing is translated between
versions: a version without a request contributes no fields.  Pure
functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import msgspec

from ._schema import schema_module_of

__all__ = ["InitializeOffer", "merge_initialize"]


class InitializeOffer(msgspec.Struct, frozen=True):
    """What :func:`merge_initialize` builds.

    ``payload`` is the encoded params object to send; ``requests`` the typed
    request of each version given (the connection reads the capabilities it
    advertised from the one of the version the agent answers).
    """

    payload: bytes
    requests: dict[int, Any]


def _version_of(request: Any) -> int:
    module = schema_module_of(request)
    if module is None or type(request) is not getattr(
        module, "InitializeRequest", None
    ):
        raise TypeError(
            f"expected a generated InitializeRequest, got {type(request).__qualname__}"
        )
    version: int = module.PROTOCOL_VERSION
    return version


def merge_initialize(
    requests: Iterable[Any], offered: Collection[int]
) -> InitializeOffer:
    """One ``initialize`` params object carrying each request's fields (see the module)."""
    by_version: dict[int, Any] = {}
    for request in requests:
        version = _version_of(request)
        if version not in offered:
            raise ValueError(
                f"a v{version} InitializeRequest, but this client offers {sorted(offered)}"
            )
        if version in by_version:
            raise ValueError(f"two v{version} InitializeRequests")
        by_version[version] = request
    if not by_version:
        raise ValueError("give at least one InitializeRequest")
    merged: dict[str, Any] = {}
    owner: dict[str, int] = {}
    highest = max(r.protocol_version for r in by_version.values())
    for version in sorted(by_version, reverse=True):
        module = schema_module_of(by_version[version])
        assert module is not None
        fields = msgspec.json.decode(module.encode(by_version[version]))
        for key, value in fields.items():
            if key == "protocolVersion":
                continue
            if key in merged and merged[key] != value:
                raise ValueError(
                    f"the v{owner[key]} and v{version} InitializeRequests disagree "
                    f"on {key!r}: one message cannot carry both"
                )
            merged.setdefault(key, value)
            owner.setdefault(key, version)
    payload = msgspec.json.encode({"protocolVersion": highest, **merged})
    return InitializeOffer(payload, by_version)
