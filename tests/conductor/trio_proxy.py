"""A pass-through proxy on acp_trio's proxy API (no handlers: everything forwarded)."""

import acp_trio
import trio

if __name__ == "__main__":
    trio.run(acp_trio.serve_proxy_stdio, acp_trio.Proxy())
