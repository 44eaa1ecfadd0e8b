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

An `EpisodeHandle` keeps its call log and calls each tool exactly once. Every call carries the
episode token (an HMAC of the episode id under this process's secret, or `PROVE_EPISODE_SECRET`,
so handles of one process on the same id agree and no other client can touch the episode) and
`_meta.seq` = its number in the log (len(log) + 1). Its first call carries seed + prefix (a prefix
that spans servers is opened through `/control/episodes` first); later calls carry `_meta.resume`,
so a server that lost the episode (evicted, expired, restarted) refuses the call instead of
reseeding it. A timeout is "outcome unknown": the handle asks again under the same seq, and the
server either runs the call (it never arrived) or answers from its record (it ran). On a lost
episode, a conflicting seq (the server applied a call the log does not have), or a server that
dies and comes back, the handle rebuilds the episode by replaying prefix + log (state is a pure
function of seed + calls; each replayed call must come out as logged), off to the side and in
chunks of at most the server's `max_prefix` calls, swapping it in only once the whole replay
succeeded; then it finishes the call it was making. So the server's state is always the replay
of the log.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import logging
import os
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

import httpx2
from mcp.types import CallToolResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from prove.env.hub import EpisodeError, check_episode_id
from prove.env.launch import TOKEN_ENV

__all__ = [
    "EnvClient", "EpisodeHandle", "EnvClientError", "EnvUnavailable", "EpisodeLostError",
    "EnvTimeout", "EpisodeConflictError", "EnvCapacity", "logged_from_result", "worker_urls",
    "SECRET_ENV",
]

EPISODE_LOST_CODE = -32010  # prove.env.transports.EPISODE_LOST_CODE (not imported: no server deps)
CAPACITY_CODE = -32011  # prove.env.transports.CAPACITY_CODE
TOKEN_HEADER = "Prove-Episode-Token"  # prove.env.transports.TOKEN_HEADER
SECRET_ENV = "PROVE_EPISODE_SECRET"
"""Shared secret from which episode tokens are derived (processes that share episodes set it)."""
_PROCESS_SECRET = secrets.token_bytes(32)  # a key, never data or state: tokens are not hashed

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


class EnvTimeout(EnvClientError):
    """No answer in time: the request may or may not have run (outcome unknown)."""


class EpisodeConflictError(EnvClientError):
    """The server's episode does not match the caller's log (seq, call, seed or prefix): 409."""


class EnvCapacity(EnvClientError):
    """The server is at its episode cap or byte budget with every episode in use: 503."""


def worker_urls(host: str, port: int, workers: int) -> list[str]:
    """The URLs `prove serve --workers N --port P` listens on: ports P .. P+N-1."""
    return [f"http://{host}:{port + i}" for i in range(workers)]


def logged_from_result(name: str, arguments: Any, result: CallToolResult) -> dict[str, Any]:
    """Turn an MCP CallToolResult into the logged-call dict of DESIGN.md."""
    if result.is_error:
        text = "".join(getattr(c, "text", "") for c in result.content)
        logged = {"name": name, "arguments": arguments, "ok": False, "error": text}
        if isinstance(result.structured_content, dict):  # a PROVE server's facts (prove.env.errors)
            logged["detail"] = result.structured_content
        return logged
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
        episode_secret: str | bytes | None = None,
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
        secret = episode_secret if episode_secret is not None else os.environ.get(SECRET_ENV)
        self._secret = (secret.encode() if isinstance(secret, str) else secret) or _PROCESS_SECRET
        self.max_prefix: int | None = None  # the server's, read from /control/health when needed

    def episode_token(self, episode_id: str) -> str:
        """This client's token for an episode (the same in every handle of this secret)."""
        return hmac.new(self._secret, episode_id.encode(), hashlib.sha256).hexdigest()[:32]

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
        self,
        episode_id: str,
        seed: int = 0,
        prefix: Sequence[Mapping[str, Any]] | None = None,
        *,
        token: str | None = None,
        replace: bool = False,
        seq: int = 0,
        append: bool = False,
        final: bool = True,
    ) -> dict[str, Any]:
        """Open an episode and replay `prefix`: `{"episode_id", "seed", "prefix_calls"}`.

        Every prefix call must come out as its `"ok"` says (default true), else the open fails.
        `token`, `replace`, `seq`, `append`, `final`: see `prove.env.hub.Hub.open`.
        """
        body: dict[str, Any] = {"episode_id": _episode_id(episode_id), "seed": seed,
                                "prefix": list(prefix or [])}
        if token is not None:
            body["token"] = token
        for key, value, default in (("replace", replace, False), ("seq", seq, 0),
                                    ("append", append, False), ("final", final, True)):
            if value != default:
                body[key] = value
        url = self.url_for(episode_id)
        return await self._control(url, "POST", "/control/episodes", body)

    async def close(self, episode_id: str, token: str | None = None) -> bool:
        """Close an episode (with this client's token for it unless `token` is given)."""
        url = self.url_for(_episode_id(episode_id))
        headers = {TOKEN_HEADER: token or self.episode_token(episode_id)}
        path = f"/control/episodes/{episode_id}"
        return (await self._control(url, "DELETE", path, headers=headers))["closed"]

    async def state_hash(
        self, episode_id: str, servers: Sequence[str] | None = None, token: str | None = None
    ) -> str:
        query = f"?servers={','.join(servers)}" if servers else ""
        url = self.url_for(_episode_id(episode_id))
        headers = {TOKEN_HEADER: token or self.episode_token(episode_id)}
        path = f"/control/episodes/{episode_id}/hash{query}"
        return (await self._control(url, "GET", path, headers=headers))["hash"]

    async def effect(
        self, episode_id: str, servers: Sequence[str] | None = None, token: str | None = None
    ) -> dict[str, Any]:
        """What the episode's calls did to `servers`' records (prove.env.effects):
        {"effect": {server: diff}, "hash": effect_hash}."""
        query = f"?servers={','.join(servers)}" if servers else ""
        url = self.url_for(_episode_id(episode_id))
        headers = {TOKEN_HEADER: token or self.episode_token(episode_id)}
        return await self._control(url, "GET", f"/control/episodes/{episode_id}/effect{query}",
                                   headers=headers)

    async def server_max_prefix(self, episode_id: str) -> int:
        """The server's `--max-prefix` (how many calls one open may replay)."""
        if self.max_prefix is None:
            health = await self._control(self.url_for(episode_id), "GET", "/control/health")
            self.max_prefix = int(health.get("max_prefix", 1024))
        return self.max_prefix

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        episode_id: str,
        seed: int = 0,
        prefix: Sequence[Mapping[str, Any]] | None = None,
        resume: bool = False,
        token: str | None = None,
        seq: int | None = None,
    ) -> dict[str, Any]:
        """Call a tool in an episode; a tool error comes back as a logged call with ok=False.

        `prefix` opens the episode lazily if it is not open (through `/control/episodes` first
        when it calls other servers' tools). `resume=True` says calls were already made in this
        episode: if the server lost it, `EpisodeLostError` is raised and nothing runs. `token`
        and `seq` make the call exactly-once (see `EpisodeHandle`, which sends both); a timeout
        raises `EnvTimeout` (the call may have run).
        """
        args = dict(arguments or {})
        # An unknown tool still goes to a server, so the caller gets its "did you mean" message.
        server = self.routes.get(name) or next(iter(self.routes.values()))
        meta: dict[str, Any] = {"episode_id": _episode_id(episode_id), "seed": seed, **_ENVELOPE}
        if token is not None:
            meta["token"] = token
        if seq is not None:
            meta["seq"] = seq
        if resume:
            meta["resume"] = True
        elif prefix:
            if all(self.routes.get(c.get("name")) == server for c in prefix):
                meta["prefix"] = list(prefix)
            else:  # a per-server endpoint only replays its own tools
                try:
                    await self.open(episode_id, seed, prefix, token=token)
                except EnvClientError as exc:
                    # 409 without a token: already open, as the caller meant. With a token a
                    # retried open of the same prefix succeeds, so a 409 is a real conflict.
                    if exc.status != 409 or token is not None:
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
            kind = EnvTimeout if response.status_code == 408 else EnvClientError  # 408: not run
            raise kind(f"{name} in episode {episode_id!r}: {error}", response.status_code)
        if error is not None:
            data = error.get("data") if isinstance(error.get("data"), dict) else {}
            status = int(data.get("status", response.status_code))
            code = error.get("code")
            kind = (EpisodeLostError if code == EPISODE_LOST_CODE
                    else EnvCapacity if code == CAPACITY_CODE
                    else EnvTimeout if status == 425  # being opened by an earlier try: not run
                    else EpisodeConflictError if status == 409 else EnvClientError)
            raise kind(f"{name} in episode {episode_id!r}: {error.get('message')}", status)
        return logged_from_result(name, args, CallToolResult.model_validate(message["result"]))

    # -- plumbing --------------------------------------------------------------------------
    async def _send(self, method: str, url: str, **kwargs: Any) -> httpx2.Response:
        if self._http is None:
            raise EnvClientError("EnvClient is not open; use `async with EnvClient(...)`")
        try:
            return await self._http.request(method, url, **kwargs)
        except httpx2.TimeoutException as exc:
            raise EnvTimeout(f"{method} {url} timed out after {self.timeout}s; it may or may not "
                             "have run") from exc
        except (httpx2.TransportError, OSError) as exc:
            raise EnvUnavailable(f"{method} {url} failed: {exc!r}") from exc

    async def _control(
        self, url: str, method: str, path: str, body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        # GET and DELETE are idempotent: retry them when a pooled connection was closed under us.
        tries = 3 if method in ("GET", "DELETE") else 1
        for attempt in range(tries):
            try:
                response = await self._send(method, url + path, json=body, headers=headers)
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
            status = response.status_code
            kind = {410: EpisodeLostError, 409: EpisodeConflictError, 503: EnvCapacity,
                    425: EnvTimeout}.get(status, EnvClientError)
            raise kind(f"{method} {path}: {detail}", status)
        return data


class EpisodeHandle:
    """One episode seen from the client; keeps its call log and survives server restarts.

    `log` may be replaced by the caller's own list of executed calls (the training session keeps
    one per trajectory and makes a fresh handle per call): the next call's `seq` is always
    len(log) + 1, so any handle of this client on the same id and log carries on exactly.
    """

    def __init__(
        self,
        env: EnvClient,
        episode_id: str,
        seed: int,
        prefix: list[Mapping[str, Any]],
        *,
        reconnect_seconds: float = 60.0,
        token: str | None = None,
        max_attempts: int = 6,
    ) -> None:
        self.env, self.episode_id, self.seed, self.prefix = env, episode_id, seed, prefix
        self.reconnect_seconds = reconnect_seconds
        self.token = token or env.episode_token(episode_id)
        self.max_attempts = max_attempts
        self.log: list[dict[str, Any]] = []
        self.rebuilds = 0
        self.retries = 0  # calls asked again after a timeout (outcome unknown)
        self._rebuilt = False

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Run one call exactly once and log it; retries and rebuilds as the module says."""
        args = dict(arguments or {})
        for attempt in range(self.max_attempts):
            last = attempt == self.max_attempts - 1
            first = not self.log and not self._rebuilt
            try:
                logged = await self.env.call(
                    name, args, episode_id=self.episode_id, seed=self.seed,
                    prefix=self.prefix if first else None, resume=not first,
                    token=self.token, seq=len(self.log) + 1,
                )
                break
            except EnvTimeout:  # outcome unknown: the same seq again runs it at most once
                if last:
                    raise
                self.retries += 1
                await asyncio.sleep(min(0.1 * 2 ** attempt, 2.0))  # an overloaded server: back off
            except (EnvUnavailable, EpisodeLostError, EpisodeConflictError):
                if last:
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

        The replay is built off to the side (in chunks of the server's `max_prefix` when longer)
        and replaces whatever the server holds for this id only once it all succeeded: a call
        whose reply was lost may or may not have run, and only the replayed log is known to be
        right. A transient failure leaves the live episode as it was.
        """
        deadline = asyncio.get_running_loop().time() + self.reconnect_seconds
        delay = 0.05
        replay = self.replay_calls()
        while True:
            try:
                size = await self.env.server_max_prefix(self.episode_id)
                if size < 1 and replay:
                    raise EnvClientError("the server replays no calls (--max-prefix 0): this "
                                         "episode cannot be rebuilt", 400)
                parts = [replay[i:i + size] for i in range(0, len(replay), size)] or [[]]
                for i, part in enumerate(parts):
                    await self.env.open(self.episode_id, self.seed, part, token=self.token,
                                        replace=True, seq=len(self.log), append=i > 0,
                                        final=i == len(parts) - 1)
                self.rebuilds += 1
                self._rebuilt = True
                return
            except (EnvUnavailable, EnvTimeout, EnvCapacity):
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    async def state_hash(self, servers: Sequence[str] | None = None) -> str:
        """The episode's state hash; a server that restarted (or lost the episode) in between is
        waited for and the episode rebuilt from its log first, as a call would be."""
        return await self._read(self.env.state_hash, servers)

    async def effect(self, servers: Sequence[str] | None = None) -> dict[str, Any]:
        """The episode's effect on the records (`EnvClient.effect`), rebuilt first as
        `state_hash` does if the server lost the episode."""
        return await self._read(self.env.effect, servers)

    async def _read(self, read: Any, servers: Sequence[str] | None) -> Any:
        for attempt in range(self.max_attempts):
            try:
                return await read(self.episode_id, servers, token=self.token)
            except (EnvUnavailable, EpisodeLostError, EnvTimeout):
                if attempt == self.max_attempts - 1:
                    raise
                await self.rebuild()
        raise AssertionError("unreachable")  # the loop returns or raises

    async def close(self) -> bool:
        return await self.env.close(self.episode_id, token=self.token)


def _episode_id(episode_id: str) -> str:
    try:
        return check_episode_id(episode_id)
    except EpisodeError as exc:
        raise EnvClientError(str(exc), 400) from None
