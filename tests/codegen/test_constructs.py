"""Constructs of the published schemas, each read by its JSON Schema meaning
(never by a type name), on a minimal spec folder of their own."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from acp_codegen.__main__ import generate
from acp_codegen.nodes import SchemaError

DEFS: dict[str, Any] = {
    # inline object alternatives, a property with no type that is required
    "Outcome": {
        "anyOf": [
            {
                "title": "Result",
                "type": "object",
                "properties": {"result": {"description": "Required, even if null."}},
                "required": ["result"],
            },
            {
                "title": "Failure",
                "type": "object",
                "properties": {"error": {"type": "string"}},
                "required": ["error"],
            },
        ]
    },
    # an alternative that is only a title: any JSON value
    "Data": {
        "anyOf": [
            {"title": "Known", "allOf": [{"$ref": "#/$defs/KnownData"}]},
            {"title": "Other"},
        ]
    },
    "KnownData": {
        "type": "object",
        "properties": {"code": {"type": "integer"}},
        "required": ["code"],
    },
    # tagged alternatives that narrow a property of the object itself
    "Idle": {
        "type": "object",
        "properties": {
            "reason": {
                "type": ["string", "null"],
                "x-deserialize-default-on-error": True,
            },
            "note": {"type": "string"},
        },
        "anyOf": [
            {
                "type": "object",
                "properties": {"reason": {"type": "string", "const": "done"}},
                "required": ["reason"],
            },
            {
                "title": "none",
                "type": "object",
                "properties": {"reason": {"type": "null"}},
            },
        ],
    },
}


def _module(tmp_path: Path, defs: dict[str, Any], name: str) -> Any:
    spec = tmp_path / "spec" / "v1"
    spec.mkdir(parents=True)
    (spec / "schema.json").write_text(json.dumps({"$defs": defs}))
    (spec / "meta.json").write_text(json.dumps({"version": 1, "agentMethods": {}}))
    (spec / "UPSTREAM.json").write_text(
        json.dumps({"package": "p", "version": "1.0.0"})
    )
    generate(tmp_path / "spec", tmp_path / name)
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(f"{name}.v1")
    finally:
        sys.path.remove(str(tmp_path))


def test_inline_alternatives_are_classes_and_an_untyped_property_is_any_value(
    tmp_path: Path,
) -> None:
    v1 = _module(tmp_path, DEFS, "constructs_a")
    assert v1.SCHEMA_VERSION == "p@1.0.0"  # no schema version stated
    assert v1.decode(b'{"result": null}', v1.Outcome) == v1.OutcomeResult(result=None)
    assert v1.decode(b'{"result": [1, {}]}', v1.Outcome).result == [1, {}]
    assert v1.encode(v1.decode(b'{"result": null}', v1.Outcome)) == b'{"result":null}'
    assert v1.decode(b'{"error": "e"}', v1.Outcome) == v1.OutcomeFailure(error="e")
    with pytest.raises(msgspec.ValidationError):
        v1.decode(b"{}", v1.Outcome)  # required, even if null: absent is not null


def test_an_alternative_that_is_only_a_title_is_any_json_value(tmp_path: Path) -> None:
    v1 = _module(tmp_path, DEFS, "constructs_b")
    assert v1.decode(b'{"code": 3}', v1.Data) == v1.KnownData(code=3)
    for raw, value in ((b"[1, 2]", [1, 2]), (b'"x"', "x"), (b"null", None)):
        assert v1.decode(raw, v1.Data) == value
    assert v1.decode(b'{"code": "x"}', v1.Data) == {"code": "x"}  # not KnownData


def test_tagged_alternatives_narrow_the_objects_own_property(tmp_path: Path) -> None:
    v1 = _module(tmp_path, DEFS, "constructs_c")
    done = v1.decode(b'{"reason": "done", "note": "n"}', v1.Idle)
    assert type(done).__name__ == "IdleDone" and done.note == "n"
    assert type(v1.decode(b'{"note": "n"}', v1.Idle)).__name__ == "IdleNone"
    # the object's lenient rule still holds where the "none" variant narrows it
    assert type(v1.decode(b'{"reason": 5}', v1.Idle)).__name__ == "IdleNone"


@pytest.mark.parametrize(
    "alternative",
    [{"title": "Odd", "not": {"type": "string"}}, {"if": {"type": "string"}}],
    ids=["not", "if"],
)
def test_a_keyword_the_generator_does_not_read_is_an_error_not_any_value(
    tmp_path: Path, alternative: dict[str, Any]
) -> None:
    defs = {"Data": {"anyOf": [{"$ref": "#/$defs/KnownData"}, alternative]}}
    defs["KnownData"] = DEFS["KnownData"]
    with pytest.raises(SchemaError, match="not modelled"):
        _module(tmp_path, defs, "constructs_d")


#: ``x-deserialize-default-on-null``: a required array, an optional map, one
#: with a stated default, and one whose type already admits null.
NULL_DEFAULTS: dict[str, Any] = {
    "Launch": {
        "type": "object",
        "properties": {
            "args": {
                "type": "array",
                "items": {"type": "string"},
                "x-deserialize-default-on-null": True,
            },
            "env": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "x-deserialize-default-on-null": True,
            },
            "mode": {
                "type": "string",
                "default": "run",
                "x-deserialize-default-on-null": True,
            },
            "tags": {
                "type": ["array", "null"],
                "items": {"type": "string"},
                "x-deserialize-default-on-null": True,
            },
        },
        "required": ["args"],
    }
}


def test_default_on_null_reads_null_as_the_default_and_re_encodes_it(
    tmp_path: Path,
) -> None:
    v1 = _module(tmp_path, NULL_DEFAULTS, "constructs_e")
    nulls = b'{"args": null, "env": null, "mode": null, "tags": null}'
    launch = v1.decode(nulls, v1.Launch)
    assert (launch.args, launch.env, launch.mode, launch.tags) == ([], {}, "run", [])
    # the key stays, with the default (as the TypeScript SDK re-serialises it)
    assert json.loads(v1.encode(launch)) == {
        "args": [],
        "env": {},
        "mode": "run",
        "tags": [],
    }
    # absent is not null: a required field stays required, an optional absent
    assert v1.decode(b'{"args": ["a"]}', v1.Launch) == v1.Launch(args=["a"])
    with pytest.raises(msgspec.ValidationError, match="missing required field `args`"):
        v1.decode(b"{}", v1.Launch)
    with pytest.raises(msgspec.ValidationError, match=r"\$.args"):
        v1.decode(b'{"args": 5}', v1.Launch)  # not null: no rule applies


def test_default_on_null_without_a_known_empty_value_is_an_error(
    tmp_path: Path,
) -> None:
    defs = {
        "Odd": {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "x-deserialize-default-on-null": True}
            },
        }
    }
    with pytest.raises(SchemaError, match="default-on-null"):
        _module(tmp_path, defs, "constructs_f")


def test_a_variant_whose_payload_is_a_union_is_kept_raw_and_checked_as_it(
    tmp_path: Path,
) -> None:
    def tagged(tag: str, payload: str | None = None) -> dict[str, Any]:
        variant: dict[str, Any] = {
            "type": "object",
            "properties": {"state": {"type": "string", "const": tag}},
            "required": ["state"],
        }
        if payload:
            variant["allOf"] = [{"$ref": f"#/$defs/{payload}"}]
        return variant

    defs = {"Idle": DEFS["Idle"], "State": {"anyOf": [tagged("idle", "Idle")]}}
    defs["State"]["anyOf"].append(tagged("busy"))
    v1 = _module(tmp_path, defs, "constructs_g")
    assert v1.StateIdle.checks == (v1.Idle,)
    idle = v1.decode(b'{"state": "idle", "reason": 5, "x": 1}', v1.State)
    assert type(idle) is v1.StateIdle  # kept raw: two tags are not one Struct
    assert v1.encode(idle) == b'{"state":"idle","x":1}'  # the union's rule held
    with pytest.raises(msgspec.ValidationError, match="note"):
        v1.decode(b'{"state": "idle", "note": 5}', v1.State)


def test_declared_properties_and_additional_properties_true_keep_the_rest(
    tmp_path: Path,
) -> None:
    # `additionalProperties: true` said beside declared properties: the
    # undeclared ones are part of the value (kept raw), the declared checked
    defs = {
        "Fault": {
            "type": "object",
            "properties": {"code": {"type": "integer"}, "data": {}},
            "required": ["code"],
            "additionalProperties": True,
        },
        "Reply": {
            "type": "object",
            "properties": {"fault": {"$ref": "#/$defs/Fault"}},
            "required": ["fault"],
        },
    }
    v1 = _module(tmp_path, defs, "constructs_h")
    data = b'{"fault":{"code":1,"extra":[1,{"a":null}]}}'
    reply = v1.decode(data, v1.Reply)
    assert type(reply.fault) is v1.Fault and reply.fault["extra"] == [1, {"a": None}]
    assert v1.encode(reply) == data
    assert v1.decode(b'{"code":2,"x":1}', v1.Fault) == {"code": 2, "x": 1}
    for bad in (b'{"fault":{"code":"x"}}', b'{"fault":{}}', b'{"fault":[]}'):
        with pytest.raises(msgspec.ValidationError, match=r"\$.fault"):
            v1.decode(bad, v1.Reply)
