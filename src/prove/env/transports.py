"""The MCP doors of the hub: one `MCPServer` per PROVE server, the HTTP app, and stdio.

    prove serve                      # every server over streamable HTTP at 127.0.0.1:8765/<server>/mcp
    prove serve --stdio banking      # one server over stdio, for desktop MCP clients

The episode travels in the request's `_meta` (`episode_id`, `seed`, `prefix`, `resume`, and for
exactly-once calls `token` and `seq`, see `prove.env.hub`); a call without `_meta` (any stock MCP
client) uses the default episode, seed 0, which is opened lazily and, if it is ever evicted, is
reported lost once and then reseeded (a stock client has no way to rebuild it). Episode control (open/close/hash/effect) lives under `/control/`,
outside MCP, so a policy never sees it in its tool list.

Safe by default (`Guard`, in front of every route): the Host header must name a loopback address
(or a host given with `--allow-host`), so does an Origin header if present (DNS rebinding); a POST
must be `application/json` (no form or text/plain request a web page can send without a
preflight); its body has a size cap per route (`--max-body`, `--max-control-body`) and must arrive
within `body_timeout` seconds (408 otherwise); with a token (`--token` / `PROVE_ENV_TOKEN`,
required off loopback) every route needs `Authorization: Bearer`. Capacity (the episode cap or the
byte budget, every episode in use) is HTTP status 503 on every route; on MCP its body is the
JSON-RPC error -32011 with `data.status` 503.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections import deque
from collections.abc import Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import urlsplit

from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prove.env.effects import effect_hash
from prove.env.hub import MAX_DEPTH, EpisodeError, EpisodeLost, Hub, HubFull, nesting_depth

__all__ = [
    "ProveMCPServer", "build_http_app", "run_stdio", "META_KEYS", "Guard", "LOOPBACK_HOSTS",
    "MAX_BODY", "MAX_CONTROL_BODY", "EPISODE_LOST_CODE", "CAPACITY_CODE", "prove_version",
    "BODY_TIMEOUT", "TOKEN_HEADER", "HEADER_TIMEOUT", "run_http", "header_timeout_protocol",
]

logger = logging.getLogger(__name__)

META_KEYS = ("episode_id", "seed", "prefix", "resume", "token", "seq")
TOKEN_HEADER = "prove-episode-token"
"""Header carrying the episode token on `/control/` hash and close requests."""
BODY_TIMEOUT = 30.0
"""Default seconds a request body may take to arrive once its headers are in (408 after)."""
HEADER_TIMEOUT = 10.0
"""Default seconds a request's headers may take to arrive; the connection is closed after."""
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
MAX_BODY = 1 << 20
"""Default cap on one `/<server>/mcp` request body: 1 MiB (`prove serve --max-body`)."""
MAX_CONTROL_BODY = 4 << 20
"""Default cap on one `/control/` request body: 4 MiB (`prove serve --max-control-body`)."""
EPISODE_LOST_CODE = -32010
"""JSON-RPC error code of a call to an episode that was evicted, expired or lost in a restart."""
CAPACITY_CODE = -32011
"""JSON-RPC error code of a call refused for capacity (HTTP 503 on `/control/`)."""
_INVALID_PARAMS = -32602


def prove_version() -> str:
    try:
        return version("prove")
    except PackageNotFoundError:  # a source tree on sys.path without an install
        return "0+unknown"


class ProveMCPServer(MCPServer):
    """An MCP server exposing one PROVE server's tools; every call goes through `Hub.acall`.

    It serves tools only: no prompts, resources or subscriptions are advertised or answered.
    """

    def __init__(self, hub: Hub, server: str) -> None:
        spec = hub.registry.server(server)
        super().__init__(server, instructions=spec.description, version=prove_version(),
                         subscriptions=False)
        handlers = self._lowlevel_server._request_handlers
        for method in [m for m in handlers if m.startswith(("prompts/", "resources/"))]:
            del handlers[method]
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
            resume = meta.get("resume", False)
            if not isinstance(resume, bool):
                raise EpisodeError(f"_meta.resume must be true or false, got {resume!r:.40}")
            logged = await self.hub.acall(
                name,
                arguments,
                episode_id=meta.get("episode_id"),
                seed=meta.get("seed"),
                prefix=meta.get("prefix"),
                server=self.server_name,
                resume=resume,
                token=meta.get("token"),
                seq=meta.get("seq"),
            )
        except EpisodeError as exc:  # the caller's episode handling, not the model's tool use
            code = (EPISODE_LOST_CODE if isinstance(exc, EpisodeLost)
                    else CAPACITY_CODE if isinstance(exc, HubFull) else _INVALID_PARAMS)
            raise MCPError(code, str(exc), {"status": exc.status}) from None
        if logged["ok"]:
            result = logged["result"]
            text = json.dumps(result, ensure_ascii=False)
            return CallToolResult(
                content=[TextContent(type="text", text=text)], structured_content=result
            )
        return CallToolResult(content=[TextContent(type="text", text=logged["error"])], is_error=True,
                              structured_content=logged["detail"])  # the facts (prove.env.errors)


def _capacity_as_503(send: Send) -> Send:
    """``send`` for an MCP route whose JSON-RPC capacity error (:data:`CAPACITY_CODE`) goes out
    with HTTP status 503, as ``/control/`` answers it, instead of the transport's 200; the body (the
    JSON-RPC error an MCP client reads) is unchanged. The server answers JSON (``json_response``), one
    body per request: the start is held until the body shows which status it is."""
    start: Message | None = None

    async def wrapped(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start" and message.get("status") == 200:
            start = message
            return
        if start is not None and message["type"] == "http.response.body":
            held, start = start, None
            body = message.get("body", b"")
            if b"%d" % CAPACITY_CODE in body and _is_capacity_error(body):
                held = {**held, "status": 503,
                        "headers": [*held.get("headers", []), (b"retry-after", b"1")]}
            await send(held)
        await send(message)

    return wrapped


def _is_capacity_error(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    error = message.get("error") if isinstance(message, dict) else None
    return isinstance(error, dict) and error.get("code") == CAPACITY_CODE


async def _receive_within(receive: Receive, seconds: float) -> Message | None:
    """The next ASGI message, or None if none came within `seconds`.

    A starved event loop can fire the timer in the same turn as the data it was waiting for, so
    on a timeout the message is looked for once more before giving up (a cancelled `receive`
    consumed nothing).
    """
    try:
        if hasattr(asyncio, "timeout"):
            async with asyncio.timeout(max(seconds, 0.001)):
                return await receive()
        return await asyncio.wait_for(receive(), max(seconds, 0.001))
    except (TimeoutError, asyncio.TimeoutError):
        pass
    late = asyncio.ensure_future(receive())
    for _ in range(3):
        await asyncio.sleep(0)
        if late.done():
            return late.result()
    late.cancel()
    return None


def _host_name(value: str) -> str:
    """The host part of a Host header or authority, lower-cased, without brackets or port."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Guard:
    """ASGI gate in front of every route: Host/Origin, bearer token, JSON-only POST, body caps.

    A refused request gets a JSON `{"error": ...}` with 421 (Host), 403 (Origin), 401 (token),
    415 (Content-Type), 413 (body too large) or 408 (body slower than `body_timeout` seconds); an
    MCP route's capacity error (JSON-RPC -32011) goes out with status 503, as `/control/` answers
    it. A client that disconnects mid-body is logged in one line and the app never sees the request.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Iterable[str] = (),
        token: str | None = None,
        max_body: int = MAX_BODY,
        max_control_body: int = MAX_CONTROL_BODY,
        body_timeout: float = BODY_TIMEOUT,
    ) -> None:
        if body_timeout <= 0:
            raise ValueError(f"body_timeout must be > 0 seconds, got {body_timeout}")
        self.body_timeout = body_timeout
        extra = {_host_name(h) for h in allowed_hosts if h.strip()}
        self.app = app
        self.any_host = "*" in extra
        self.hosts = frozenset(LOOPBACK_HOSTS) | (extra - {"*"})
        self._auth = f"Bearer {token}".encode() if token else None
        self.max_body, self.max_control_body = max_body, max_control_body
        shown = sorted(self.hosts - set(LOOPBACK_HOSTS))
        self._hosts_text = ", ".join([*LOOPBACK_HOSTS, *shown])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not self.any_host and _host_name(host) not in self.hosts:
            return await self._refuse(scope, receive, send, 421, (
                f"Host {host!r:.100} is not allowed; this server answers to {self._hosts_text} "
                "(add names with prove serve --allow-host)"))
        origin = headers.get("origin")
        if origin is not None and not self.any_host and (urlsplit(origin).hostname or "") not in self.hosts:
            return await self._refuse(scope, receive, send, 403, (
                f"Origin {origin!r:.100} is not allowed; only pages served from {self._hosts_text} "
                "may call this server (add names with prove serve --allow-host)"))
        if self._auth is not None:
            given = headers.get("authorization", "").encode("latin-1", "replace")
            if not hmac.compare_digest(given, self._auth):
                return await self._refuse(scope, receive, send, 401, (
                    "missing or wrong bearer token: send 'Authorization: Bearer <token>' with the "
                    "token prove serve was started with (--token or PROVE_ENV_TOKEN)"),
                    [(b"www-authenticate", b'Bearer realm="prove"')])
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            return await self._refuse(scope, receive, send, 415, (
                f"Content-Type must be application/json, got {ctype or 'none'!r:.60}"))
        control = scope["path"].startswith("/control/")
        limit = self.max_control_body if control else self.max_body
        flag = "--max-control-body" if control else "--max-body"
        too_large = (f"request body is larger than this route's limit of {limit} bytes "
                     f"(prove serve {flag})")
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return await self._refuse(scope, receive, send, 413, too_large)
        body = bytearray()
        deadline = asyncio.get_running_loop().time() + self.body_timeout
        while True:
            left = deadline - asyncio.get_running_loop().time()
            message = await _receive_within(receive, left)
            if message is None:
                return await self._refuse(scope, receive, send, 408, (
                    f"request body did not arrive within {self.body_timeout:g} s "
                    f"({len(body)} bytes received)"))
            if message["type"] == "http.disconnect":
                logger.info("client disconnected after %d bytes of a POST %s body; request dropped",
                            len(body), scope["path"])
                return
            body += message.get("body", b"")
            if len(body) > limit:
                return await self._refuse(scope, receive, send, 413, too_large)
            if not message.get("more_body", False):
                break
        pending: deque[Message] = deque([{"type": "http.request", "body": bytes(body), "more_body": False}])

        async def replay() -> Message:
            return pending.popleft() if pending else await receive()

        await self.app(scope, replay, send if control else _capacity_as_503(send))

    @staticmethod
    async def _refuse(
        scope: Scope, receive: Receive, send: Send, status: int, message: str,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        logger.info("refused %s %s: %d %s", scope.get("method"), scope.get("path"), status, message)
        response = JSONResponse({"error": message}, status_code=status)
        response.raw_headers.extend(headers or [])
        await response(scope, receive, send)


class BadBody(EpisodeError):
    """A control request body that is not a JSON object of the documented fields."""


_OPEN_FIELDS = ("episode_id", "seed", "prefix", "token", "replace", "seq", "append", "final")


async def _json_object(request: Request, fields: tuple[str, ...]) -> dict[str, Any]:
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadBody(f"request body is not valid UTF-8 (byte {exc.start}): send JSON text") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise BadBody(f"request body nests too deeply; the limit is {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise BadBody(f"request body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadBody(f"request body must be a JSON object with {', '.join(fields)}, "
                      f"got {type(data).__name__}")
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise BadBody(f"unknown field(s) {', '.join(map(repr, unknown))}; valid fields: {', '.join(fields)}")
    return data


def _sdk_security(hosts: Iterable[str], any_host: bool) -> TransportSecuritySettings:
    """The SDK's own DNS-rebinding check, allowing exactly what `Guard` allows (defence in depth)."""
    if any_host:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = [f"[{h}]" if ":" in h else h for h in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[p for n in names for p in (n, f"{n}:*")],
        allowed_origins=[p for n in names for s in ("http", "https") for p in (f"{s}://{n}", f"{s}://{n}:*")],
    )


def build_http_app(
    hub: Hub,
    servers: Iterable[str] | None = None,
    *,
    allowed_hosts: Iterable[str] = (),
    token: str | None = None,
    max_body: int = MAX_BODY,
    max_control_body: int = MAX_CONTROL_BODY,
    body_timeout: float = BODY_TIMEOUT,
) -> ASGIApp:
    """One app mounting every server at `/<server>/mcp`, plus `/control/...`, behind `Guard`.

    `allowed_hosts` adds Host/Origin names to the loopback ones (`"*"`: any); `token`, if set, is
    required on every route as `Authorization: Bearer <token>`.
    """
    names = list(servers) if servers is not None else list(hub.registry.servers)
    mcps = {n: ProveMCPServer(hub, n) for n in names}
    guard_args = dict(allowed_hosts=list(allowed_hosts), token=token, max_body=max_body,
                      max_control_body=max_control_body, body_timeout=body_timeout)
    probe = Guard(lambda *a: None, **guard_args)  # type: ignore[arg-type]
    security = _sdk_security(probe.hosts, probe.any_host)
    routes: list[Any] = [
        Mount(
            f"/{n}",
            app=s.streamable_http_app(
                streamable_http_path="/mcp",
                json_response=True,
                stateless_http=True,
                transport_security=security,
                max_request_body_size=max_body,
            ),
        )
        for n, s in mcps.items()
    ]

    def error(exc: EpisodeError | KeyError) -> JSONResponse:
        status = exc.status if isinstance(exc, EpisodeError) else 400
        text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        return JSONResponse({"error": text}, status_code=status)

    async def health(request: Request) -> JSONResponse:
        return JSONResponse(
            {"ok": True, "version": prove_version(), "servers": names,
             "tools": sum(len(hub.registry.server(n).tools) for n in names),
             "episodes": len(hub.store), "max_episodes": hub.store.max_episodes,
             "evicted": hub.store.evicted, "expired": hub.store.expired,
             "max_prefix": hub.max_prefix, "max_body": max_body, "max_control_body": max_control_body,
             "max_memory": hub.store.max_memory, "episode_bytes": hub.store.bytes}
        )

    async def tools(request: Request) -> JSONResponse:
        return JSONResponse(
            {t.name: t.server for n in names for t in hub.registry.server(n).tools}
        )

    async def open_episode(request: Request) -> JSONResponse:
        try:
            body = await _json_object(request, _OPEN_FIELDS)
            if nesting_depth(body, MAX_DEPTH + 3) > MAX_DEPTH + 3:
                raise BadBody(f"request body nests more than {MAX_DEPTH} levels deep inside its calls")
            seed = body.get("seed", 0)
            flags = {k: body.get(k, d) for k, d in (("replace", False), ("append", False),
                                                      ("final", True))}
            for key, value in flags.items():
                if not isinstance(value, bool):
                    raise BadBody(f"{key} must be true or false, got {value!r:.40}")
            n = await hub.open_async(body.get("episode_id"), seed, body.get("prefix"),
                                     token=body.get("token"), seq=body.get("seq", 0), **flags)
        except EpisodeError as exc:
            return error(exc)
        # No echo of the prefix's results: a failing call already failed the open.
        return JSONResponse({"episode_id": body["episode_id"], "seed": seed, "prefix_calls": n})

    async def close_episode(request: Request) -> JSONResponse:
        try:
            closed = hub.close(request.path_params["episode_id"], request.headers.get(TOKEN_HEADER))
            return JSONResponse({"closed": closed})
        except EpisodeError as exc:
            return error(exc)

    def episode_read(read: Any) -> Any:
        """A GET on one episode: `read(episode_id, servers, token)`'s JSON, or the error."""
        async def endpoint(request: Request) -> JSONResponse:
            raw = request.query_params.get("servers")
            servers_q = [s for s in raw.split(",") if s] if raw else None
            try:
                return JSONResponse(read(request.path_params["episode_id"], servers_q,
                                         request.headers.get(TOKEN_HEADER)))
            except (EpisodeError, KeyError) as exc:
                return error(exc)
        return endpoint

    def effect_of(episode_id: str, servers_q: list[str] | None, token: str | None) -> dict[str, Any]:
        effect = hub.effect(episode_id, servers_q, token)
        return {"effect": effect, "hash": effect_hash(effect)}

    episode_hash = episode_read(lambda e, s, t: {"hash": hub.state_hash(e, s, t)})
    episode_effect = episode_read(effect_of)

    routes += [
        Route("/control/health", health, methods=["GET"]),
        Route("/control/tools", tools, methods=["GET"]),
        Route("/control/episodes", open_episode, methods=["POST"]),
        Route("/control/episodes/{episode_id:path}/hash", episode_hash, methods=["GET"]),
        Route("/control/episodes/{episode_id:path}/effect", episode_effect, methods=["GET"]),
        Route("/control/episodes/{episode_id:path}", close_episode, methods=["DELETE"]),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette):  # mounted sub-app lifespans never run on their own
        async with AsyncExitStack() as stack:
            for s in mcps.values():
                await stack.enter_async_context(s.session_manager.run())
            yield

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.hub = hub
    return Guard(app, **guard_args)


def header_timeout_protocol(seconds: float = HEADER_TIMEOUT) -> type:
    """uvicorn's HTTP protocol, closing a connection whose request headers take over `seconds`.

    uvicorn waits for headers forever: a client that sends half a request line holds a
    connection (and reaches nothing, not even the token check) until it gives up. The protocol is
    the one uvicorn's ``http="auto"`` picks: httptools where it is installed (a request costs about
    half of h11's at one call in flight), h11 otherwise; both keep the request in ``self.cycle``.
    """
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Protocol
    except ImportError:
        from uvicorn.protocols.http.h11_impl import H11Protocol as Protocol

    if seconds <= 0:
        raise ValueError(f"header timeout must be > 0 seconds, got {seconds}")

    class HeaderTimeoutProtocol(Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            if self.cycle is not before:  # a request's headers are complete
                self._disarm()
            elif self._header_timer is None and (self.cycle is None or self.cycle.response_complete):
                self._header_timer = self.loop.call_later(seconds, self._expire)

        def _expire(self) -> None:
            self._header_timer = None
            if self.cycle is None or self.cycle.response_complete:
                logger.info("closed a connection whose request headers took over %g s", seconds)
                self.transport.close()

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeaderTimeoutProtocol


def run_http(
    app: ASGIApp, host: str, port: int, *, log_level: str = "info",
    header_timeout: float = HEADER_TIMEOUT,
) -> None:
    """Serve `app` with uvicorn as `prove serve` does, plus the header read timeout."""
    import uvicorn

    # Long keep-alive: RL clients hold pooled connections across slow steps; a server-side close
    # racing a reused connection would surface as a spurious transport error.
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_keep_alive=120,
                backlog=4096, http=header_timeout_protocol(header_timeout))


def run_stdio(server: str, hub: Hub | None = None) -> None:
    """Serve one server over stdio (blocks until stdin closes)."""
    hub = hub if hub is not None else Hub()
    ProveMCPServer(hub, server).run("stdio")
