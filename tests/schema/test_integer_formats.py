"""Integer formats of the schema (``uint32``, ``int64``, ...) are ranges, enforced on decode.

A peer written in a typed language (the Rust crate the schema is generated from)
cannot send ``line = 2**32`` in a ``uint32`` field; neither do we accept one.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from acp_schema import v1

# v2 here is the 2.0.0-alpha.0 draft (acp_schema.v2_alpha0): these cases name its types.
from acp_schema import v2_alpha0 as v2


def _decode(module: Any, data: dict[str, Any], type_: Any) -> Any:
    return module.decode(json.dumps(data).encode(), type_)


@pytest.mark.parametrize(
    ("value", "ok"),
    [(0, True), (2**32 - 1, True), (2**32, False), (-1, False)],
)
def test_uint32_field_accepts_its_range_only(value: int, ok: bool) -> None:
    data = {"type": "string", "minLength": value}
    if ok:
        assert _decode(v1, data, v1.StringPropertySchema).min_length == value
    else:
        with pytest.raises(msgspec.ValidationError, match=r"\$\.minLength"):
            _decode(v1, data, v1.StringPropertySchema)


def test_uint32_line_is_a_validation_error_for_msgspec() -> None:
    params = {"sessionId": "s", "path": "/a", "line": 2**32}
    with pytest.raises(msgspec.ValidationError, match="<= 4294967295"):
        msgspec.convert(params, v1.ReadTextFileRequest)


def test_out_of_range_line_falls_back_by_the_lenient_rule() -> None:
    # `line` carries x-deserialize-default-on-error: an out-of-range value is
    # a bad value like any other, so it falls back to absent.
    params = {"path": "/a", "line": 2**32}
    request = _decode(v1, params, v1.ToolCallLocation)
    assert request.line is msgspec.UNSET and request.path == "/a"


@pytest.mark.parametrize(
    ("data", "type_name", "where"),
    [
        ({"protocolVersion": 2**16}, "InitializeRequest", "protocolVersion"),
        ({"code": 2**31, "message": "x"}, "Error", "code"),
        ({"code": -(2**31) - 1, "message": "x"}, "Error", "code"),
        ({"sessionUpdate": "usage_update", "used": 2**64, "size": 1}, "", "used"),
        ({"type": "integer", "maximum": 2**63}, "IntegerPropertySchema", "maximum"),
    ],
    ids=["uint16", "int32-high", "int32-low", "uint64", "int64"],
)
def test_integer_format_bounds_are_validation_errors(
    data: dict[str, Any], type_name: str, where: str
) -> None:
    type_ = getattr(v1, type_name) if type_name else v1.SessionUpdate
    with pytest.raises(msgspec.ValidationError, match=where):
        _decode(v1, data, type_)


def test_request_id_is_an_int64() -> None:
    assert _decode(v2, 2**63 - 1, v2.RequestId) == 2**63 - 1
    with pytest.raises(msgspec.ValidationError):
        _decode(v2, 2**63, v2.RequestId)


def test_integer_format_aliases_are_exported() -> None:
    assert msgspec.convert(2**32 - 1, v1.UInt32) == 2**32 - 1
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(2**32, v1.UInt32)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(-1, v1.UInt64)
    assert "UInt32" in v1.__all__ and "Int64" in v1.__all__


def test_uint64_upper_bound_is_checked_by_the_struct() -> None:
    # msgspec.Meta bounds must fit in an int64: the Struct checks the top.
    update = {"sessionUpdate": "usage_update", "used": 2**64 - 1, "size": 1}
    assert _decode(v2, update, v2.SessionUpdate).used == 2**64 - 1
    with pytest.raises(msgspec.ValidationError, match="`size`"):
        msgspec.convert({**update, "size": 2**64}, v2.SessionUpdate)
