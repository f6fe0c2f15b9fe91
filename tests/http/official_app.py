"""The official Python SDK's ASGI app (``acp.http.asgi.create_asgi_app``) serving
its own kind of agent (tests/interop/official_agent.py), for our clients to drive."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))

from acp.http.asgi import create_asgi_app
from official_agent import OfficialAgent

app = create_asgi_app(lambda conn: OfficialAgent())
