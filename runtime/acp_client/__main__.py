"""``python -m acp_client``: the ``acp-client`` command."""

import sys

from acp_client.cli import main

if __name__ == "__main__":
    sys.exit(main())
