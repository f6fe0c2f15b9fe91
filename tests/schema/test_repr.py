"""Struct reprs leave out absent fields (UNSET), so a decoded message prints readably."""

from __future__ import annotations

import pytest
from acp_schema import v1

# v2 here is the 2.0.0-alpha.0 draft (acp_schema.v2_alpha0): these cases name its types.
from acp_schema import v2_alpha0 as v2

CHUNK = (
    b'{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk",'
    b'"messageId":"m1","content":{"type":"text","text":"hi"}}}'
)


@pytest.mark.parametrize("module", [v1, v2], ids=["v1", "v2"])
def test_a_decoded_message_prints_without_its_absent_fields(module: object) -> None:
    note = module.decode(CHUNK, module.SessionNotification)  # type: ignore[attr-defined]
    text = repr(note)
    assert "UNSET" not in text
    assert "'hi'" in text
    assert "s1" in text


def test_a_field_that_is_present_is_shown_even_when_null() -> None:
    req = v1.decode(
        b'{"sessionId":"s","path":"/a","line":null}', v1.ReadTextFileRequest
    )
    assert repr(req) == "ReadTextFileRequest(session_id='s', path='/a', line=None)"
