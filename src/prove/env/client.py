"""Async client for PROVE episodes over streamable HTTP (what RL rollouts and evaluation use).

    async with EnvClient("http://127.0.0.1:8765") as env:
        ep = env.episode("rollout-17", seed=3, prefix=[...])
        logged = await ep.call("get_balance", {"account_id": "ACC-0001"})
        digest = await ep.state_hash()
        await ep.close()

One `mcp.Client` per server is shared by all episodes (the 2026-07-28 protocol needs no session),
over one pooled HTTP connection pool; the episode rides in each request's `_meta`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

__all__ = ["EnvClient", "EpisodeHandle", "EnvClientError", "logged_from_result"]

logging.getLogger("httpx2").setLevel(logging.WARNING)


class EnvClientError(RuntimeError):
    """The environment server could not be reached, timed out, or refused a control request."""


def logged_from_result(name: str, arguments: Any, result: CallToolResult) -> dict[str, Any]:
    """Turn an MCP CallToolResult into the logged-call dict of DESIGN.md."""
    if result.is_error:
        text = "".join(getattr(c, "text", "") for c in result.content)
        return {"name": name, "arguments": arguments, "ok": False, "error": text}
    payload = result.structured_content
    if payload is None:
        text = "".join(getattr(c, "text", "") for c in result.content)
        payload = json.loads(text) if text else None
    return {"name": name, "arguments": arguments, "ok": True, "result": payload}


class EnvClient:
    """Connection to a `prove serve` endpoint: tool routing, episode control, pooled MCP clients."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8765",
        *,
        timeout: float = 30.0,
        max_connections: int = 256,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_connections = max_connections
        self.routes: dict[str, str] = {}
        self._stack: AsyncExitStack | None = None
        self._http: httpx2.AsyncClient | None = None
        self._clients: dict[str, Client] = {}

    async def __aenter__(self) -> EnvClient:
        self._stack = AsyncExitStack()
        self._http = await self._stack.enter_async_context(
            httpx2.AsyncClient(
                timeout=httpx2.Timeout(self.timeout),
                limits=httpx2.Limits(
                    max_connections=self.max_connections,
                    max_keepalive_connections=self.max_connections,
                ),
            )
        )
        self.routes = await self._control("GET", "/control/tools")
        # Enter every server's MCP client here, in the task that will also exit them (anyio
        # cancel scopes must be exited by the task that entered them).
        for server in sorted(set(self.routes.values())):
            transport = streamable_http_client(f"{self.base_url}/{server}/mcp", http_client=self._http)
            try:
                self._clients[server] = await self._stack.enter_async_context(
                    Client(transport, read_timeout_seconds=self.timeout)
                )
            except Exception as exc:
                await self._stack.aclose()
                raise EnvClientError(f"could not connect to {self.base_url}/{server}/mcp: {exc!r}") from exc
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._stack is not None:
            await self._stack.aclose()
        self._stack, self._http, self._clients = None, None, {}

    # -- episodes ------------------------------------------------------------------------
    def episode(
        self, episode_id: str, seed: int = 0, prefix: Sequence[Mapping[str, Any]] | None = None
    ) -> EpisodeHandle:
        return EpisodeHandle(self, episode_id, seed, list(prefix or []))

    async def open(
        self, episode_id: str, seed: int = 0, prefix: Sequence[Mapping[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        body = {"episode_id": episode_id, "seed": seed, "prefix": list(prefix or [])}
        return (await self._control("POST", "/control/episodes", body))["prefix"]

    async def close(self, episode_id: str) -> bool:
        return (await self._control("DELETE", f"/control/episodes/{episode_id}"))["closed"]

    async def state_hash(self, episode_id: str, servers: Sequence[str] | None = None) -> str:
        query = f"?servers={','.join(servers)}" if servers else ""
        return (await self._control("GET", f"/control/episodes/{episode_id}/hash{query}"))["hash"]

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        episode_id: str,
        seed: int = 0,
        prefix: Sequence[Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Call a tool in an episode; a tool error comes back as a logged call with ok=False."""
        args = dict(arguments or {})
        server = self.routes.get(name)
        if server is None:  # let the server produce its "unknown tool" message: any endpoint
            server = next(iter(self.routes.values()))
        client = self._clients.get(server)
        if client is None:
            raise EnvClientError("EnvClient is not open; use `async with EnvClient(...)`")
        meta: dict[str, Any] = {"episode_id": episode_id, "seed": seed}
        if prefix:
            meta["prefix"] = list(prefix)
        try:
            result = await client.call_tool(
                name, args, read_timeout_seconds=self.timeout, meta=meta
            )
        except TimeoutError as exc:
            raise EnvClientError(
                f"{name} in episode {episode_id!r} timed out after {self.timeout}s"
            ) from exc
        except (httpx2.HTTPError, OSError, anyio.BrokenResourceError) as exc:
            raise EnvClientError(f"{name} in episode {episode_id!r} failed: {exc!r}") from exc
        return logged_from_result(name, args, result)

    # -- plumbing --------------------------------------------------------------------------
    async def _control(self, method: str, path: str, body: Any = None) -> Any:
        if self._http is None:
            raise EnvClientError("EnvClient is not open; use `async with EnvClient(...)`")
        try:
            response = await self._http.request(method, self.base_url + path, json=body)
        except httpx2.HTTPError as exc:
            raise EnvClientError(f"{method} {self.base_url}{path} failed: {exc!r}") from exc
        data = response.json()
        if response.status_code >= 400:
            raise EnvClientError(f"{method} {path}: {data.get('error', data)}")
        return data


class EpisodeHandle:
    """One episode seen from the client; keeps the log of every call it made."""

    def __init__(
        self, env: EnvClient, episode_id: str, seed: int, prefix: list[Mapping[str, Any]]
    ) -> None:
        self.env, self.episode_id, self.seed, self.prefix = env, episode_id, seed, prefix
        self.log: list[dict[str, Any]] = []

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        logged = await self.env.call(
            name, arguments, episode_id=self.episode_id, seed=self.seed, prefix=self.prefix
        )
        self.log.append(logged)
        return logged

    async def state_hash(self, servers: Sequence[str] | None = None) -> str:
        return await self.env.state_hash(self.episode_id, servers)

    async def close(self) -> bool:
        return await self.env.close(self.episode_id)
