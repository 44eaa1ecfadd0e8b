"""A bare MCP SDK server with one trivial tool over streamable HTTP: the baseline for bench_env.py.

    python benchmarks/bare_server.py PORT
"""

from __future__ import annotations

import sys

import uvicorn
from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel

bare = MCPServer("bare")


class Echo(BaseModel):
    value: str


@bare.tool()
async def echo(value: str) -> Echo:
    """Return the value unchanged."""
    return Echo(value=value)


if __name__ == "__main__":
    app = bare.streamable_http_app(
        streamable_http_path="/mcp", json_response=True, stateless_http=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app.add_route("/control/health", lambda request: __import__("starlette.responses").responses.JSONResponse({"ok": True}))
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
