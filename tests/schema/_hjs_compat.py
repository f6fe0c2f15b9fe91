"""hypothesis-jsonschema 0.23.1 adapted to this Hypothesis, and made faster.

Imported for its effect by the tests that generate schema instances.
"""

from __future__ import annotations

import json
import types
from typing import Any

import hypothesis_jsonschema._canonicalise as _hjs_canonicalise
import hypothesis_jsonschema._from_schema
import jsonschema
from hypothesis.internal.conjecture import utils as conjecture_utils

_hjs = hypothesis_jsonschema._from_schema


# hypothesis-jsonschema 0.23.1 (its latest release) draws object properties
# with Hypothesis's internal `many` as `while elements.more(): ...
# elements.reject()`; newer Hypothesis made `many` a context manager iterated
# as `with many(...) as elements: for _ in elements:`, so every object schema
# fails with "'many' object has no attribute 'more'". Adapt the old protocol
# to the new one, for hypothesis-jsonschema's own reference only.
class _Many:
    def __init__(self, data: Any, **sizes: Any) -> None:
        self._many = conjecture_utils.many(data, **sizes)
        self._many.__enter__()
        self._elements = iter(self._many)

    def more(self) -> bool:
        if next(self._elements, self) is self:
            self._many.__exit__(None, None, None)
            return False
        return True

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)


if not hasattr(conjecture_utils.many, "more"):
    _hjs.cu = types.SimpleNamespace(**{**vars(conjecture_utils), "many": _Many})

# hypothesis-jsonschema builds the strategy of each property's schema anew at
# every draw, re-canonicalising the whole (here large) subschema each time,
# which makes this file ~5x slower. A strategy depends only on its arguments
# and can be drawn from again: build each one once.
_uncached_from_schema = vars(_hjs).get("__from_schema")
_strategies: dict[tuple[str, int, int], tuple[Any, ...]] = {}


def _cached_from_schema(schema: Any, *, alphabet: Any, custom_formats: Any) -> Any:
    key = (json.dumps(schema, sort_keys=True), id(alphabet), id(custom_formats))
    if key not in _strategies:
        strategy = _uncached_from_schema(  # type: ignore[misc]
            schema, alphabet=alphabet, custom_formats=custom_formats
        )
        # Keep the arguments alive so that their ids stay theirs.
        _strategies[key] = (strategy, alphabet, custom_formats)
    return _strategies[key][0]


if _uncached_from_schema is not None:
    setattr(_hjs, "__from_schema", _cached_from_schema)


# hypothesis-jsonschema checks every subschema it canonicalises against the
# JSON Schema meta-schema (jsonschema's `check_schema`): for these schemas,
# inlined and large, that is most of the time it takes to build a strategy.
# The schemas here are valid draft 2020-12 (the tests' judge validates every
# generated instance against the published schema anyway).
def _draft_2020_12(schema: Any) -> Any:
    return jsonschema.Draft202012Validator


_hjs_canonicalise._get_validator_class = _draft_2020_12
