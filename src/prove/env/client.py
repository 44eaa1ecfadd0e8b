"""Async client for PROVE episodes over streamable HTTP (what RL rollouts and evaluation use).

    async with EnvClient("http://127.0.0.1:8765") as env:          # or a list of worker URLs
        ep = env.episode("rollout-17", seed=3, prefix=[...])
        logged = await ep.call("get_balance", {"account_id": "ACC-0001"})
        digest = await ep.state_hash()
        await ep.close()

Each call is one self-contained MCP 2026-07-28 `tools/call` POST (no session, no handshake) over a
pooled HTTP connection, with the episode in `_meta`. With several workers (`prove serve --workers N`)
an episode is routed to one worker by a stable hash of its id. The bearer token (`token=`, default
$PROVE_ENV_TOKEN) goes with every request.

An `EpisodeHandle` keeps its call log. Its first call carries seed + prefix (a prefix that spans
servers is opened through `/control/episodes` first); later calls carry `_meta.resume`, so a
server that lost the episode (evicted, expired, restarted) refuses the call instead of reseeding
it. On that refusal, or if the server dies and comes back, the handle rebuilds the episode by
replaying prefix + log (state is a pure function of seed + calls; each replayed call must come out
as logged) and then finishes the call it was making.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

import httpx2
from mcp.types import CallToolResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from prove.env.hub import EpisodeError, check_episode_id
from prove.env.launch import TOKEN_ENV

__all__ = [
    "EnvClient", "EpisodeHandle", "EnvClientError", "EnvUnavailable", "EpisodeLostError",
    "logged_from_result", "worker_urls",
]

EPISODE_LOST_CODE = -32010  # prove.env.transports.EPISODE_LOST_CODE (not imported: no server deps)

logging.getLogger("httpx2").setLevel(logging.WARNING)

PROTOCOL = MODERN_PROTOCOL_VERSIONS[0]
_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "prove-env-client", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class EnvClientError(RuntimeError):
    """The environment refused a request (protocol or control error) or timed out.

    `status` is the HTTP status of a refusal (0 when there was no HTTP answer).
    """

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class EpisodeLostError(EnvClientError):
    """The server no longer holds the episode (evicted, expired or restarted); the call did not run."""


class EnvUnavailable(EnvClientError):
    """The environment server could not be reached (down, restarting, refused the connection)."""


def worker_urls(host: str, port: int, workers: int) -> list[str]:
    """The URLs `prove serve --workers N --port P` listens on: ports P .. P+N-1."""
    return [f"http://{host}:{port + i}" for i in range(workers)]


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
    """Connection to `prove serve` (one URL, or one per worker): tool routing and episode control."""

    def __init__(
        self,
        base_url: str | Sequence[str] = "http://127.0.0.1:8765",
        *,
        timeout: float = 30.0,
        max_connections: int = 256,
        token: str | None = None,
    ) -> None:
        urls = [base_url] if isinstance(base_url, str) else list(base_url)
        if not urls:
            raise ValueError("EnvClient needs at least one server URL")
        self.urls = [u.rstrip("/") for u in urls]
        self.timeout = timeout
        self.max_connections = max_connections
        self.token = token if token is not None else os.environ.get(TOKEN_ENV) or None
        self.routes: dict[str, str] = {}
        self._http: httpx2.AsyncClient | None = None
        self._ids = itertools.count(1)

    async def __aenter__(self) -> EnvClient:
        self._http = httpx2.AsyncClient(
            timeout=httpx2.Timeout(self.timeout),
            headers={"Authorization": f"Bearer {self.token}"} if self.token else None,
            limits=httpx2.Limits(
                max_connections=self.max_connections,
                max_keepalive_connections=self.max_connections,
            ),
        )
        try:
            self.routes = await self._control(self.urls[0], "GET", "/control/tools")
        except BaseException:
            await self._http.aclose()
            self._http = None
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.aclose()
        self._http = None

    def url_for(self, episode_id: str) -> str:
        """The worker that owns an episode: a stable hash of its id (same in every process)."""
        if len(self.urls) == 1:
            return self.urls[0]
        digest = hashlib.sha256(episode_id.encode()).digest()
        return self.urls[int.from_bytes(digest[:8], "big") % len(self.urls)]

    # -- episodes ------------------------------------------------------------------------
    def episode(
        self, episode_id: str, seed: int = 0, prefix: Sequence[Mapping[str, Any]] | None = None
    ) -> EpisodeHandle:
        return EpisodeHandle(self, _episode_id(episode_id), seed, list(prefix or []))

    async def open(
        self, episode_id: str, seed: int = 0, prefix: Sequence[Mapping[str, Any]] | None = None
    ) -> dict[str, Any]:
        """Open an episode and replay `prefix`: `{"episode_id", "seed", "prefix_calls"}`.

        Every prefix call must come out as its `"ok"` says (default true), else the open fails.
        """
        body = {"episode_id": _episode_id(episode_id), "seed": seed, "prefix": list(prefix or [])}
        url = self.url_for(episode_id)
        return await self._control(url, "POST", "/control/episodes", body)

    async def close(self, episode_id: str) -> bool:
        url = self.url_for(_episode_id(episode_id))
        return (await self._control(url, "DELETE", f"/control/episodes/{episode_id}"))["closed"]

    async def state_hash(self, episode_id: str, servers: Sequence[str] | None = None) -> str:
        query = f"?servers={','.join(servers)}" if servers else ""
        url = self.url_for(_episode_id(episode_id))
        return (await self._control(url, "GET", f"/control/episodes/{episode_id}/hash{query}"))["hash"]

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        episode_id: str,
        seed: int = 0,
        prefix: Sequence[Mapping[str, Any]] | None = None,
        resume: bool = False,
    ) -> dict[str, Any]:
        """Call a tool in an episode; a tool error comes back as a logged call with ok=False.

        `prefix` opens the episode lazily if it is not open (through `/control/episodes` first
        when it calls other servers' tools). `resume=True` says calls were already made in this
        episode: if the server lost it, `EpisodeLostError` is raised and nothing runs.
        """
        args = dict(arguments or {})
        # An unknown tool still goes to a server, so the caller gets its "did you mean" message.
        server = self.routes.get(name) or next(iter(self.routes.values()))
        meta: dict[str, Any] = {"episode_id": _episode_id(episode_id), "seed": seed, **_ENVELOPE}
        if resume:
            meta["resume"] = True
        elif prefix:
            if all(self.routes.get(c.get("name")) == server for c in prefix):
                meta["prefix"] = list(prefix)
            else:  # a per-server endpoint only replays its own tools
                try:
                    await self.open(episode_id, seed, prefix)
                except EnvClientError as exc:
                    if exc.status != 409:  # 409: already open, as the caller meant
                        raise
        request_id = next(self._ids)
        body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                "params": {"_meta": meta, "name": name, "arguments": args}}
        url = f"{self.url_for(episode_id)}/{server}/mcp"
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": PROTOCOL,
                   "Mcp-Method": "tools/call", "Mcp-Name": name}
        response = await self._send("POST", url, json=body, headers=headers)
        try:
            message = response.json()
        except ValueError as exc:
            raise EnvClientError(f"{name}: non-JSON reply ({response.status_code})",
                                 response.status_code) from exc
        error = message.get("error") if isinstance(message, dict) else None
        if isinstance(error, str):  # refused before MCP (token, Host, size): {"error": "..."}
            raise EnvClientError(f"{name} in episode {episode_id!r}: {error}", response.status_code)
        if error is not None:
            data = error.get("data") if isinstance(error.get("data"), dict) else {}
            kind = EpisodeLostError if error.get("code") == EPISODE_LOST_CODE else EnvClientError
            raise kind(f"{name} in episode {episode_id!r}: {error.get('message')}",
                       int(data.get("status", response.status_code)))
        return logged_from_result(name, args, CallToolResult.model_validate(message["result"]))

    # -- plumbing --------------------------------------------------------------------------
    async def _send(self, method: str, url: str, **kwargs: Any) -> httpx2.Response:
        if self._http is None:
            raise EnvClientError("EnvClient is not open; use `async with EnvClient(...)`")
        try:
            return await self._http.request(method, url, **kwargs)
        except httpx2.TimeoutException as exc:
            raise EnvClientError(f"{method} {url} timed out after {self.timeout}s") from exc
        except (httpx2.TransportError, OSError) as exc:
            raise EnvUnavailable(f"{method} {url} failed: {exc!r}") from exc

    async def _control(self, url: str, method: str, path: str, body: Any = None) -> Any:
        # GET and DELETE are idempotent: retry them when a pooled connection was closed under us.
        tries = 3 if method in ("GET", "DELETE") else 1
        for attempt in range(tries):
            try:
                response = await self._send(method, url + path, json=body)
                break
            except EnvUnavailable:
                if attempt == tries - 1:
                    raise
                await asyncio.sleep(0.05 * (attempt + 1))
        try:
            data = response.json()
        except ValueError as exc:
            raise EnvClientError(f"{method} {path}: non-JSON reply ({response.status_code})",
                                 response.status_code) from exc
        if response.status_code >= 400:
            detail = data.get("error", data) if isinstance(data, dict) else data
            raise EnvClientError(f"{method} {path}: {detail}", response.status_code)
        return data


class EpisodeHandle:
    """One episode seen from the client; keeps its call log and survives server restarts."""

    def __init__(
        self,
        env: EnvClient,
        episode_id: str,
        seed: int,
        prefix: list[Mapping[str, Any]],
        *,
        reconnect_seconds: float = 60.0,
    ) -> None:
        self.env, self.episode_id, self.seed, self.prefix = env, episode_id, seed, prefix
        self.reconnect_seconds = reconnect_seconds
        self.log: list[dict[str, Any]] = []
        self.rebuilds = 0
        self._rebuilt = False

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        for attempt in range(4):
            try:
                if self.log or self._rebuilt:  # the server must still hold what we built
                    logged = await self.env.call(name, arguments, episode_id=self.episode_id,
                                                 seed=self.seed, resume=True)
                else:
                    logged = await self.env.call(name, arguments, episode_id=self.episode_id,
                                                 seed=self.seed, prefix=self.prefix)
                break
            except (EnvUnavailable, EpisodeLostError):
                if attempt == 3:
                    raise
                await self.rebuild()
        self.log.append(logged)
        return logged

    def replay_calls(self) -> list[dict[str, Any]]:
        """Prefix + logged calls to known tools, each with the outcome it must reproduce."""
        logged = [{"name": c["name"], "arguments": c["arguments"], "ok": bool(c["ok"])}
                  for c in self.log if c.get("name") in self.env.routes]
        return [*self.prefix, *logged]

    async def rebuild(self) -> None:
        """Wait for the server, then recreate this episode from seed + prefix + its call log.

        Whatever the server holds for this id is discarded first: a call whose reply was lost may
        or may not have run, and only the replayed log is known to be right.
        """
        deadline = asyncio.get_running_loop().time() + self.reconnect_seconds
        delay = 0.05
        replay = self.replay_calls()
        while True:
            try:
                await self.env.close(self.episode_id)
                await self.env.open(self.episode_id, self.seed, replay)
                self.rebuilds += 1
                self._rebuilt = True
                return
            except EnvUnavailable:
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    async def state_hash(self, servers: Sequence[str] | None = None) -> str:
        return await self.env.state_hash(self.episode_id, servers)

    async def close(self) -> bool:
        return await self.env.close(self.episode_id)


def _episode_id(episode_id: str) -> str:
    try:
        return check_episode_id(episode_id)
    except EpisodeError as exc:
        raise EnvClientError(str(exc), 400) from None
