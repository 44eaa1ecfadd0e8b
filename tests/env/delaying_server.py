"""A `prove serve` stand-in whose replies to some calls arrive late (after the call ran), for fault tests.

    python tests/env/delaying_server.py PORT DELAY_SECONDS EVERY [SERVERS]

Every call whose `_meta.seq` is a multiple of EVERY is run at once and answered DELAY_SECONDS
later, the first time that (episode, seq) is seen; a repeat of it is answered at once. So a client
whose timeout is below DELAY_SECONDS sees a timeout on a call that the server did run. Header and
body read timeouts are 2 s.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcp.types import CallToolResult

from prove.env.hub import Hub
from prove.env.transports import ProveMCPServer, build_http_app, run_http


def main() -> None:
    port, delay, every = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    servers = sys.argv[4].split(",") if len(sys.argv) > 4 else None
    seen: set[tuple[str, int]] = set()
    original = ProveMCPServer.call_tool

    async def late(self: ProveMCPServer, name: str, arguments: dict[str, Any],
                   context: Any = None) -> CallToolResult:
        result = await original(self, name, arguments, context)
        meta = getattr(getattr(context, "request_context", None), "meta", None) or {}
        seq = meta.get("seq")
        key = (str(meta.get("episode_id")), seq if isinstance(seq, int) else -1)
        if isinstance(seq, int) and seq % every == 0 and key not in seen:
            seen.add(key)
            await asyncio.sleep(delay)
        return result

    ProveMCPServer.call_tool = late  # type: ignore[method-assign]
    app = build_http_app(Hub(), servers, body_timeout=2.0)
    run_http(app, "127.0.0.1", port, log_level="warning", header_timeout=2.0)


if __name__ == "__main__":
    main()
