"""``python -m acp_inspect {proxy,check,view}``: see :mod:`acp_inspect`."""

from __future__ import annotations

from ._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
