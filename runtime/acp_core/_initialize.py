"""The ``initialize`` of a client offering several protocol versions.

The client speaks first and cannot know the agent's version, so its one
``initialize`` must be read right by an agent of any version it offers.
Each version names its fields its own way (v1 ``clientCapabilities``, v2
``capabilities``) and an agent ignores fields its version does not define,
so one message can carry them all: :func:`merge_initialize` takes one
``InitializeRequest`` per offered version and unites their JSON objects::

    await conn.initialize(
        v1.InitializeRequest(protocol_version=1, client_capabilities=v1_caps, client_info=info),
        v2.InitializeRequest(protocol_version=2, capabilities=v2_caps, info=info),
    )
    # sends {"protocolVersion": 2, "clientCapabilities": {...}, "clientInfo": {...},
    #        "capabilities": {...}, "info": {...}}: a v1-only agent sees fs/terminal support

Rules: ``protocolVersion`` is the highest of the requests' (the latest the
client supports, as the spec asks); every other field is taken from the
request that has it; a field two requests both carry must have the same
JSON value (``clientInfo`` named alike in two versions is one field), else
:class:`ValueError` (one message cannot say two things); one request per
schema module (two drafts of one version, ``acp_schema.v2`` and
``v2_alpha0``, may each give one, so an agent of either reads it), each of
a version the client offers.  Nothing is translated between versions: a
version without a request contributes no fields.

Every offered version is honoured: the message must be valid under the
schema of each request given and of each offered version's draft the
connection speaks (``drafts``), else :class:`ValueError` naming the one
that would refuse it (v2's 2.4.0 draft requires ``info``: give its
request too).  Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

import msgspec

from ._errors import VersionUnavailableError
from ._schema import protocol_module, schema_module_of

__all__ = ["InitializeOffer", "merge_initialize"]


class InitializeOffer(msgspec.Struct, frozen=True):
    """What :func:`merge_initialize` builds.

    ``payload`` is the encoded params object to send; ``requests`` the typed
    request of each version given (the connection reads the capabilities it
    advertised from the one of the version the agent answers).
    """

    payload: bytes
    requests: dict[int, Any]


def _module_of(request: Any) -> Any:
    module = schema_module_of(request)
    if module is None or type(request) is not getattr(
        module, "InitializeRequest", None
    ):
        raise TypeError(
            f"expected a generated InitializeRequest, got {type(request).__qualname__}"
        )
    return module


def _name(module: Any) -> str:
    return str(module.__name__).removeprefix("acp_schema.")


def merge_initialize(
    requests: Iterable[Any],
    offered: Collection[int],
    drafts: Mapping[int, str] | None = None,
) -> InitializeOffer:
    """One ``initialize`` params object carrying each request's fields, valid
    under each offered version's schema (see the module).

    ``drafts``: the module the connection speaks for a version that has
    several (``{2: "v2_alpha0"}``); that version's request in ``requests``
    of the offer is the one of this module when given.
    """
    drafts = drafts or {}
    by_module: dict[str, Any] = {}
    modules: dict[str, Any] = {}
    for request in requests:
        module = _module_of(request)
        version: int = module.PROTOCOL_VERSION
        if version not in offered:
            raise ValueError(
                f"a v{version} InitializeRequest, but this client offers {sorted(offered)}"
            )
        name = _name(module)
        if name in by_module:
            raise ValueError(f"two {name} InitializeRequests")
        by_module[name] = request
        modules[name] = module
    if not by_module:
        raise ValueError("give at least one InitializeRequest")
    merged: dict[str, Any] = {}
    owner: dict[str, str] = {}
    highest = max(r.protocol_version for r in by_module.values())
    for name in sorted(by_module, reverse=True):
        module = modules[name]
        fields = msgspec.json.decode(module.encode(by_module[name]))
        for key, value in fields.items():
            if key == "protocolVersion":
                continue
            if key in merged and merged[key] != value:
                raise ValueError(
                    f"the {owner[key]} and {name} InitializeRequests disagree "
                    f"on {key!r}: one message cannot carry both"
                )
            merged.setdefault(key, value)
            owner.setdefault(key, name)
    payload = msgspec.json.encode({"protocolVersion": highest, **merged})
    for version in sorted(offered):
        spoken = drafts.get(version, f"v{version}")
        if spoken not in modules:
            try:
                modules[spoken] = protocol_module(version, drafts.get(version))
            except (ValueError, VersionUnavailableError):
                continue  # a version this install lacks: nothing to check it by
    for name, module in sorted(modules.items()):
        try:
            module.decode(payload, module.InitializeRequest)
        except msgspec.ValidationError as exc:
            raise ValueError(
                f"this initialize is not valid under {name} "
                f"(schema {getattr(module, 'SCHEMA_VERSION', '?')}): {exc}; an agent "
                f"of protocol v{module.PROTOCOL_VERSION} would refuse it: give "
                f"a {name}.InitializeRequest with the fields it requires"
            ) from None
    spoken_requests: dict[int, Any] = {}
    for name, request in sorted(by_module.items()):
        version = modules[name].PROTOCOL_VERSION
        if name == drafts.get(version, f"v{version}") or version not in spoken_requests:
            spoken_requests[version] = request
    return InitializeOffer(payload, spoken_requests)
