"""The ``version`` argument every session-update builder takes.

Pass the module object itself (``version=acp_schema.v2``) and a builder's
result is typed as that version's class (its overloads match the module
through :class:`V1Module` / :class:`V2Module`); left out, protocol v1.  At
run time the module's classes are found through its method tables and tags
(`acp_core._vocabulary`), never by class name.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from msgspec import UnsetType

from .._schema import is_schema_module, protocol_module
from .._vocabulary import Vocabulary, vocabulary

if TYPE_CHECKING:
    from acp_schema import v1, v2

#: A message's ``_meta``: left out (``UNSET``), ``None`` (JSON ``null``), or a dict.
Meta: TypeAlias = dict[str, Any] | UnsetType | None


class V1Module(Protocol):
    """Matches the module ``acp_schema.v1`` (by a concrete class of its own:
    pyright does not match a Protocol class against ``type[...]``)."""

    @property
    def InitializeRequest(self) -> type[v1.InitializeRequest]: ...


class V2Module(Protocol):
    """Matches the module ``acp_schema.v2``."""

    @property
    def InitializeRequest(self) -> type[v2.InitializeRequest]: ...


def vocab_of(version: object) -> Vocabulary:
    """The classes of ``version`` (a generated module; None: protocol v1),
    found through its method tables and tags (see `_vocabulary`)."""
    if version is None:
        version = protocol_module(1)
    if isinstance(version, types.ModuleType) and is_schema_module(version):
        return vocabulary(version)
    raise ValueError(f"version must be acp_schema.v1 or acp_schema.v2, not {version!r}")


def v2_vocab() -> Vocabulary:
    return vocab_of(protocol_module(2))
