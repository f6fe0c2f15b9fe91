"""Decode/encode corpus payloads exactly the way the official SDK's connection does.

agent-client-protocol 0.12.1 (`import acp`), pydantic v2 models in `acp.schema`.

Decode (incoming line -> model):
    acp/_transport.py  NdjsonTransport.receive : message = json.loads(line.strip())   # line is bytes
    requests/notifications: acp/router.py MessageRouter._make_func.<wrapper> : Model.model_validate(params)
    responses:              acp/utils.py  validate_model : Model.model_validate(result)
Encode (model -> line):
    requests/notifications (acp/utils.py serialize_params, used by request_model/notify_model):
        params = model.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_defaults=True)
    responses (acp/connection.py Connection._execute_request, when the handler returns a BaseModel):
        result = model.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)
    then acp/task/sender.py MessageSender.send:
        data = (json.dumps(payload, separators=(",", ":")) + "\\n").encode("utf-8")
"""

from __future__ import annotations

import json
from typing import Any

from acp.schema import (
    InitializeRequest,
    InitializeResponse,
    NewSessionRequest,
    PromptRequest,
    PromptResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
)
from pydantic import BaseModel

# (method, kind) -> pydantic model the SDK validates with
MODEL_FOR: dict[tuple[str, str], type[BaseModel]] = {
    ("initialize", "request"): InitializeRequest,  # agent side (acp/agent/router.py)
    (
        "initialize",
        "response",
    ): InitializeResponse,  # client side (ClientSideConnection.initialize)
    ("session/new", "request"): NewSessionRequest,
    ("session/prompt", "request"): PromptRequest,
    ("session/prompt", "response"): PromptResponse,
    (
        "session/update",
        "notification",
    ): SessionNotification,  # client side (acp/client/router.py)
    ("session/request_permission", "request"): RequestPermissionRequest,
    ("session/request_permission", "response"): RequestPermissionResponse,  # agent side
}


def decode(method: str, kind: str, payload: bytes) -> BaseModel:
    """params/result bytes -> pydantic model (json.loads + Model.model_validate)."""
    return MODEL_FOR[(method, kind)].model_validate(json.loads(payload))


def dump(kind: str, model: BaseModel) -> dict[str, Any]:
    """model -> JSON-ready dict, with the model_dump flags the SDK uses for this kind."""
    if kind == "response":
        return model.model_dump(
            mode="json", by_alias=True, exclude_none=True, exclude_unset=True
        )
    return model.model_dump(
        mode="json", by_alias=True, exclude_none=True, exclude_defaults=True
    )


def encode(method: str, kind: str, model: BaseModel, id: int = 1) -> bytes:
    """model -> full NDJSON frame bytes, as MessageSender.send writes it."""
    body = dump(kind, model)
    if kind == "request":
        payload = {"jsonrpc": "2.0", "id": id, "method": method, "params": body}
    elif kind == "notification":
        payload = {"jsonrpc": "2.0", "method": method, "params": body}
    else:
        payload = {"jsonrpc": "2.0", "id": id, "result": body}
    return (json.dumps(payload, separators=(",", ":")) + "\n").encode("utf-8")


def decode_frame(line: bytes) -> dict[str, Any]:
    """Whole incoming line -> dict, as NdjsonTransport.receive does (then dispatch by method/id)."""
    return json.loads(line.strip())


if __name__ == "__main__":
    import os
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from corpus import CORPUS, envelope

    for name, (method, kind, payload) in CORPUS.items():
        model = decode(method, kind, payload)
        frame = encode(method, kind, model)
        # decode the SDK's own output again via the frame path
        msg = decode_frame(frame)
        body = msg["result"] if kind == "response" else msg["params"]
        assert MODEL_FOR[(method, kind)].model_validate(body) == model
        same = body == json.loads(payload)
        print(
            f"{name:30s} {type(model).__name__:26s} payload={len(payload):5d}B sdk_frame={len(frame):5d}B "
            f"semantic_roundtrip={'same' if same else 'DIFFERS'}"
        )
        assert decode_frame(envelope(name))  # full corpus frames parse too

    if "--time" in sys.argv:
        import timeit

        print(f"\n{'case':30s} {'decode us':>10s} {'encode us':>10s}")
        for name, (method, kind, payload) in CORPUS.items():
            model = decode(method, kind, payload)
            nd, td = timeit.Timer(
                lambda m=method, k=kind, p=payload: decode(m, k, p)
            ).autorange()
            ne, te = timeit.Timer(
                lambda m=method, k=kind, o=model: encode(m, k, o)
            ).autorange()
            print(f"{name:30s} {td / nd * 1e6:10.2f} {te / ne * 1e6:10.2f}")
