"""``python -m acp_inspect {proxy,check,check-client,view}``: see :mod:`acp_inspect`."""

from __future__ import annotations

import sys

#: The one line ``python -m acp_inspect`` prints when trio is not installed.
NEEDS_TRIO = "acp_inspect needs trio: pip install 'acp-msgspec[trio]'"

if __name__ == "__main__":
    try:
        from ._cli import main
    except ModuleNotFoundError as exc:  # the I/O-free inspector needs msgspec only
        if exc.name != "trio":
            raise
        print(NEEDS_TRIO, file=sys.stderr)
        raise SystemExit(2) from None
    raise SystemExit(main())
