"""Rules the published schemas (npm ``@agentclientprotocol/sdk`` 2.4.0) exercise,
one test each: the disagreements with the schema the differential test found
after the bump, written out (`acp_schema.v1` and the 2.4.0 `acp_schema.v2`).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from acp_schema import v2


def _decode(module: Any, data: Any, type_: Any) -> Any:
    return module.decode(json.dumps(data).encode(), type_)


def _round_trip(module: Any, data: Any, type_: Any) -> Any:
    decoded = _decode(module, data, type_)
    assert json.loads(module.encode(decoded)) == data
    return decoded


# -- length constraints (minItems) ---------------------------------------------


def test_an_open_union_in_a_list_with_min_items_keeps_unknown_tags() -> None:
    # v2 `prompt` is a list of at least one ContentBlock (an open union): an
    # unknown block type is kept raw there as anywhere else.
    prompt = [{"type": "", "x": 1}, {"type": "text", "text": "t"}]
    request = _round_trip(v2, {"sessionId": "s", "prompt": prompt}, v2.PromptRequest)
    assert type(request.prompt[0]) is v2.ContentBlockOther
    with pytest.raises(msgspec.ValidationError, match=r"length >= 1 - at `\$.prompt`"):
        _decode(v2, {"sessionId": "s", "prompt": []}, v2.PromptRequest)


def test_min_items_holds_after_invalid_items_are_skipped() -> None:
    # `options` skips invalid items, and then must still hold one: with none
    # left it is invalid, and its default-on-error has no default to give a
    # required field.
    group = {"groupId": "g", "name": "n", "options": [None]}
    with pytest.raises(msgspec.ValidationError, match=r"length >= 1 - at `\$.options`"):
        _decode(v2, group, v2.SessionConfigSelectGroup)
    group["options"] = [None, {"value": "v", "name": "V"}]
    decoded = _decode(v2, group, v2.SessionConfigSelectGroup)
    assert [o.value for o in decoded.options] == ["v"]
