"""What an ACP program takes from its environment (acp_core reads none).

- ``ACP_CHECK_OUTGOING``: ``1`` checks every typed message a connection sends
  against the schema, ``0`` does not, even under ``python -X dev``
  (:func:`acp_core.set_check_outgoing_default`).

Applied once, when :mod:`acp_host` is imported (every adapter imports it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from acp_core import set_check_outgoing_default

__all__ = ["apply_environment"]

#: ``1`` (``true``, ``yes``, ``on``) checks what connections send, ``0`` does not.
ENV = "ACP_CHECK_OUTGOING"


def _switch(value: str | None) -> bool | None:
    if value is None or not value.strip():
        return None
    return value.strip().lower() not in ("0", "false", "no", "off")


def apply_environment(environ: Mapping[str, str] = os.environ) -> None:
    """Apply the settings ``environ`` names; the others keep their defaults."""
    check = _switch(environ.get(ENV))
    if check is not None:
        set_check_outgoing_default(check)
