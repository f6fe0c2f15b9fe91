"""``python -m acp_http serve|connect``: see :mod:`acp_http._cli`."""

import sys

from ._cli import main

sys.exit(main())
