"""The MCP doors of the hub: one `MCPServer` per PROVE server, the HTTP app, and stdio.

    prove serve                      # every server over streamable HTTP at 127.0.0.1:8765/<server>/mcp
    prove serve --stdio banking      # one server over stdio, for desktop MCP clients

The episode travels in the request's `_meta` (`episode_id`, `seed`, `prefix`); a call without it
uses the default episode. Episode control (open/close/hash) lives under `/control/`, outside MCP,
so a policy never sees it in its tool list.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from prove.env.hub import EpisodeError, Hub

__all__ = ["ProveMCPServer", "build_http_app", "run_stdio", "META_KEYS"]

META_KEYS = ("episode_id", "seed", "prefix")


class ProveMCPServer(MCPServer):
    """An MCP server exposing one PROVE server's tools; every call goes through `Hub.call`."""

    def __init__(self, hub: Hub, server: str) -> None:
        spec = hub.registry.server(server)
        super().__init__(server, instructions=spec.description)
        self.hub, self.server_name = hub, server
        for t in spec.tools:
            self.add_tool(
                t.public_fn,
                name=t.name,
                description=t.description,
                annotations=ToolAnnotations(
                    read_only_hint=not t.write,
                    destructive_hint=t.write,
                    idempotent_hint=not t.write,
                    open_world_hint=False,
                ),
                meta={"prove/write": t.write, "prove/sensitive": list(t.sensitive)},
                structured_output=True,
            )
            # List the hub's own schema (it adds additionalProperties: false).
            self._tool_manager.get_tool(t.name).parameters = t.input_schema

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult:
        meta: dict[str, Any] = {}
        if context is not None:
            try:
                meta = context.request_context.meta or {}
            except (AttributeError, ValueError, LookupError):
                meta = {}
        try:
            logged = self.hub.call(
                name,
                arguments,
                episode_id=meta.get("episode_id"),
                seed=meta.get("seed"),
                prefix=meta.get("prefix"),
                server=self.server_name,
            )
        except EpisodeError as exc:
            return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
        if logged["ok"]:
            result = logged["result"]
            text = json.dumps(result, ensure_ascii=False)
            return CallToolResult(
                content=[TextContent(type="text", text=text)], structured_content=result
            )
        return CallToolResult(content=[TextContent(type="text", text=logged["error"])], is_error=True)


def _json_body(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise EpisodeError("request body must be a JSON object")
    return data


def build_http_app(
    hub: Hub, servers: Iterable[str] | None = None, *, allowed_hosts: list[str] | None = None
) -> Starlette:
    """One Starlette app mounting every server at `/<server>/mcp`, plus `/control/...` routes."""
    names = list(servers) if servers is not None else list(hub.registry.servers)
    security = (
        TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts)
        if allowed_hosts
        else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    mcps = {n: ProveMCPServer(hub, n) for n in names}
    routes: list[Any] = [
        Mount(
            f"/{n}",
            app=s.streamable_http_app(
                streamable_http_path="/mcp",
                json_response=True,
                stateless_http=True,
                transport_security=security,
            ),
        )
        for n, s in mcps.items()
    ]

    def error(exc: Exception, status: int = 400) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=status)

    async def health(request: Request) -> JSONResponse:
        return JSONResponse(
            {"ok": True, "servers": names, "tools": sum(len(hub.registry.server(n).tools) for n in names),
             "episodes": len(hub.store)}
        )

    async def tools(request: Request) -> JSONResponse:
        return JSONResponse(
            {t.name: t.server for n in names for t in hub.registry.server(n).tools}
        )

    async def open_episode(request: Request) -> JSONResponse:
        try:
            body = _json_body(await request.json())
            logged = hub.open(body.get("episode_id"), body.get("seed", 0), body.get("prefix"))
        except (EpisodeError, json.JSONDecodeError) as exc:
            return error(exc)
        return JSONResponse({"episode_id": body["episode_id"], "prefix": logged})

    async def close_episode(request: Request) -> JSONResponse:
        return JSONResponse({"closed": hub.close(request.path_params["episode_id"])})

    async def episode_hash(request: Request) -> JSONResponse:
        raw = request.query_params.get("servers")
        servers_q = [s for s in raw.split(",") if s] if raw else None
        try:
            digest = hub.state_hash(request.path_params["episode_id"], servers_q)
        except EpisodeError as exc:
            return error(exc, 404)
        except KeyError as exc:
            return error(exc)
        return JSONResponse({"hash": digest})

    routes += [
        Route("/control/health", health, methods=["GET"]),
        Route("/control/tools", tools, methods=["GET"]),
        Route("/control/episodes", open_episode, methods=["POST"]),
        Route("/control/episodes/{episode_id}", close_episode, methods=["DELETE"]),
        Route("/control/episodes/{episode_id}/hash", episode_hash, methods=["GET"]),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette):  # mounted sub-app lifespans never run on their own
        async with AsyncExitStack() as stack:
            for s in mcps.values():
                await stack.enter_async_context(s.session_manager.run())
            yield

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.hub = hub
    return app


def run_stdio(server: str, hub: Hub | None = None) -> None:
    """Serve one server over stdio (blocks until stdin closes)."""
    hub = hub if hub is not None else Hub()
    ProveMCPServer(hub, server).run("stdio")
