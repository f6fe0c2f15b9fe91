"""What an ACP program takes from its environment (acp_core reads none).

- ``ACP_CHECK_OUTGOING``: ``1`` checks every typed message a connection sends
  against the schema, ``0`` does not, even under ``python -X dev``
  (:func:`acp_core.set_check_outgoing_default`).

Applied once, when :mod:`acp_host` is imported (every adapter imports it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from acp_core._outgoing import ENV, parse_switch, set_check_outgoing_default

__all__ = ["apply_environment"]


def apply_environment(environ: Mapping[str, str] = os.environ) -> None:
    """Apply the settings ``environ`` names; the others keep their defaults."""
    check = parse_switch(environ.get(ENV))
    if check is not None:
        set_check_outgoing_default(check)
