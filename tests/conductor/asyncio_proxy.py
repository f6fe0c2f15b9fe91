"""A pass-through proxy on acp_asyncio's proxy API (no handlers: everything forwarded)."""

import asyncio

import acp_asyncio

if __name__ == "__main__":
    asyncio.run(acp_asyncio.serve_proxy_stdio(acp_asyncio.Proxy()))
