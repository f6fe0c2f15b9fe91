"""``python -m acp_conductor [--proxy CMD]... -- AGENT_CMD ...``."""

import sys

from ._cli import main

sys.exit(main())
