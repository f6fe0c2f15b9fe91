"""What the fakes need of a generated module: a method's spec, answers built from JSON.

The fakes speak any protocol version: they read the version off the params
they receive (or the connection's schema), look the method up in that
module's tables (the unstable table first: it holds the stable methods too)
and build their answers from plain JSON with the module's ``convert``, so
one script serves v1 and v2 alike.
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "MAX_CALLS",
    "MAX_SHOWN",
    "RecordedCall",
    "answer_of",
    "keep",
    "method_of_params",
    "module_of",
    "shown",
]

#: Calls a fake keeps in its ``calls`` (``max_calls=``); later ones are only
#: counted, in its ``dropped``.
MAX_CALLS: Final = 100_000
#: Characters of peer text a fake's problem report quotes (the rest: ``...``).
MAX_SHOWN: Final = 200


@dataclass
class RecordedCall:
    """One call a fake received or made: the method, its params, its answer.

    ``answer`` is the result sent or received (a generated Struct, ``None``
    for a notification), or the :class:`~acp_core.RequestError` it was
    answered with.
    """

    method: str
    params: Any
    answer: Any = None


def keep(calls: list[RecordedCall], call: RecordedCall, limit: int) -> bool:
    """Append ``call`` to ``calls`` unless ``limit`` are kept already; whether kept."""
    if len(calls) >= limit:
        return False
    calls.append(call)
    return True


def shown(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` cut at ``limit`` characters, ``...`` marking the cut."""
    return text if len(text) <= limit else text[:limit] + "..."


def module_of(params: object) -> types.ModuleType:
    """The generated module that defines ``params``' class."""
    module = sys.modules.get(type(params).__module__)
    if module is None or not hasattr(module, "convert"):
        raise TypeError(f"not an acp_schema message: {params!r}")
    return module


def _tables(module: types.ModuleType, side: str) -> Iterator[Mapping[str, Any]]:
    for name in (f"{side}_METHODS_UNSTABLE", f"{side}_METHODS"):
        table = getattr(module, name, None)
        if table is not None:
            yield table


def answer_of(module: types.ModuleType, side: str, method: str, answer: Any) -> Any:
    """``answer`` (JSON) as the result type of ``method`` (served by ``side``:
    ``"CLIENT"`` or ``"AGENT"``) in ``module``."""
    for table in _tables(module, side):
        spec = table.get(method)
        if spec is not None:
            return module.convert(answer, spec.result)
    raise KeyError(f"{module.__name__} has no {side.lower()} method {method!r}")


def _members(annotation: Any) -> Iterator[type]:
    """The classes an annotation names: a class, a (possibly Annotated) union."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if isinstance(annotation, type):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _members(arg)


def method_of_params(params: object, side: str) -> tuple[str, str, bool]:
    """The method of ``side`` (``"CLIENT"``: a method the client serves) whose
    params ``params`` is: (wire name, handler name, whether it is a request)."""
    module = module_of(params)
    for table in _tables(module, side):
        for name, spec in table.items():
            if type(params) in _members(spec.params):
                return name, spec.handler, spec.result is not None
    raise TypeError(
        f"{type(params).__name__} is the params of no {side.lower()} method of "
        f"{module.__name__}"
    )
