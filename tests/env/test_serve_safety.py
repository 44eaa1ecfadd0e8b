"""`prove serve` is safe by default: each refusal through a real server on loopback, with its
status, its message, and proof that no episode state changed.

Run: .venv/bin/python -m pytest tests/env/test_serve_safety.py -q
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client

from prove.env import Hub, load_registry
from prove.env.client import _ENVELOPE, PROTOCOL, EnvClient, EnvClientError, EpisodeLostError
from prove.env.launch import EnvServer, free_port
from prove.env.transports import EPISODE_LOST_CODE, prove_version

TOKEN = "test-token-0123456789abcdef"
WRITE = {"name": "set_card_status", "arguments": {"card_id": "CRD-0001", "status": "cancelled"}}
READ = {"name": "get_bank_customer", "arguments": {"customer_id": "CUS-0001"}}


def _second_server() -> tuple[str | None, dict]:
    """A selected server besides banking (calendar when selected) and its first read that needs no
    arguments; (None, {}) when no other selected server has one."""
    reg = load_registry()
    for name in sorted(reg.servers, key=lambda n: (n != "calendar", n)):
        if name != "banking":
            read = next((t for t in reg.server(name).tools if not t.write and not t.required), None)
            if read is not None:
                return name, {"name": read.name, "arguments": {}}
    return None, {}


OTHER, OTHER_READ = _second_server()
NEEDS_OTHER = pytest.mark.skipif(OTHER is None, reason="needs a second server besides banking with a "
                                 "read tool that takes no arguments; PROVE_SERVERS selects none")
_ids = itertools.count()
DEEP: Any = 1
for _ in range(40):
    DEEP = [DEEP]


def rpc(base: str, call: dict, meta: dict | None = None, *, server: str = "banking",
        headers: dict | None = None, body: bytes | None = None) -> httpx2.Response:
    """One raw MCP tools/call POST, the way EnvClient sends it."""
    payload = {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call",
               "params": {"_meta": {**_ENVELOPE, **(meta or {})}, **call}}
    hdrs = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL, "Mcp-Method": "tools/call", "Mcp-Name": call["name"],
            **(headers or {})}
    content = body if body is not None else json.dumps(payload).encode()
    return httpx2.post(f"{base}/{server}/mcp", content=content, headers=hdrs, timeout=30)


def control(base: str, method: str, path: str, *, token: str | None = None, **kwargs: Any) -> httpx2.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    headers.update(kwargs.pop("headers", {}))
    return httpx2.request(method, base + path, headers=headers, timeout=30, **kwargs)


def open_ep(base: str, episode_id: str, seed: int = 0, prefix: list | None = None, **kw: Any) -> httpx2.Response:
    return control(base, "POST", "/control/episodes",
                   json={"episode_id": episode_id, "seed": seed, "prefix": prefix or []}, **kw)


def ep_hash(base: str, episode_id: str, servers: str = "banking", **kw: Any) -> httpx2.Response:
    return control(base, "GET", f"/control/episodes/{episode_id}/hash?servers={servers}", **kw)


def reference_hash(seed: int, calls: list[dict], servers: list[str] | None = None) -> str:
    hub = Hub()
    hub.open("ref", seed, calls)
    return hub.state_hash("ref", servers or ["banking"])


@pytest.fixture(scope="module")
def guarded() -> Iterator[EnvServer]:
    """Token, small limits and a cap of 3 episodes with no busy window (LRU evicts at once)."""
    args = ["--servers", ",".join(["banking", *([OTHER] if OTHER else [])]), "--max-prefix", "5", "--max-body", "20000",
            "--max-control-body", "30000", "--max-episodes", "3", "--busy-seconds", "0"]
    with EnvServer(token=TOKEN, extra_args=args) as server:
        yield server


# -- DNS rebinding: Host and Origin ------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/control/health"), ("GET", "/control/tools"), ("POST", "/control/episodes"),
     ("DELETE", "/control/episodes/rebind"), ("GET", "/control/episodes/rebind/hash"),
     ("POST", "/banking/mcp")],
)
def test_foreign_host_or_origin_is_refused_on_every_route(env_server, method: str, path: str) -> None:
    base = env_server.url
    assert open_ep(base, "rebind").status_code == 200
    assert rpc(base, WRITE, {"episode_id": "rebind"}).status_code == 200
    before = ep_hash(base, "rebind").json()["hash"]
    body = json.dumps({"episode_id": "rebind", "seed": 1}).encode() if method == "POST" else None
    if path.endswith("/mcp"):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"_meta": {"episode_id": "rebind"}, **WRITE}}).encode()
    json_type = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    evil_host = control(base, method, path, content=body, headers={**json_type, "Host": "evil.example.com"})
    assert evil_host.status_code == 421
    assert "Host 'evil.example.com' is not allowed" in evil_host.json()["error"]
    assert "--allow-host" in evil_host.json()["error"]
    evil_origin = control(base, method, path, content=body,
                          headers={**json_type, "Origin": "http://evil.example.com"})
    assert evil_origin.status_code == 403
    assert "Origin 'http://evil.example.com' is not allowed" in evil_origin.json()["error"]
    assert ep_hash(base, "rebind").json()["hash"] == before  # not closed, reopened or written
    assert control(base, "DELETE", "/control/episodes/rebind").json() == {"closed": True}


def test_loopback_names_and_origins_are_accepted(env_server) -> None:
    port = env_server.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost"):
        got = control(env_server.url, "GET", "/control/health",
                      headers={"Host": host, "Origin": f"http://localhost:{port}"})
        assert got.status_code == 200, (host, got.text)


def test_allow_host_adds_a_name() -> None:
    with EnvServer(extra_args=["--servers", "banking", "--allow-host", "prove.internal"]) as server:
        ok = control(server.url, "GET", "/control/health", headers={"Host": "prove.internal:80"})
        bad = control(server.url, "GET", "/control/health", headers={"Host": "other.internal"})
        mcp = rpc(server.url, READ, {"episode_id": "allow"}, headers={"Host": "prove.internal"})
    assert ok.status_code == 200 and bad.status_code == 421
    assert mcp.status_code == 200 and "result" in mcp.json()  # the SDK's own check agrees


# -- /control/ takes JSON only -----------------------------------------------------------------
@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None])
def test_control_refuses_non_json_posts(env_server, ctype: str | None) -> None:
    body = json.dumps({"episode_id": "csrf", "seed": 0}).encode()
    headers = {"Content-Type": ctype} if ctype else {}
    got = httpx2.post(f"{env_server.url}/control/episodes", content=body, headers=headers, timeout=10)
    assert got.status_code == 415
    assert got.json()["error"].startswith("Content-Type must be application/json")
    assert ep_hash(env_server.url, "csrf").status_code == 404  # never opened


# -- the token ---------------------------------------------------------------------------------
def test_non_loopback_bind_without_a_token_refuses_to_start() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PROVE_ENV_TOKEN"}
    port = free_port()
    proc = subprocess.run([sys.executable, "-m", "prove", "serve", "--host", "0.0.0.0", "--port", str(port)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2
    assert "refusing to serve on '0.0.0.0' without a token" in proc.stderr
    assert "PROVE_ENV_TOKEN" in proc.stderr
    short = subprocess.run([sys.executable, "-m", "prove", "serve", "--port", str(port), "--token", "abc"],
                           capture_output=True, text=True, timeout=120, env=env)
    assert short.returncode == 2 and "at least 16 characters" in short.stderr


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/control/health"), ("GET", "/control/tools"), ("POST", "/control/episodes"),
     ("DELETE", "/control/episodes/tok"), ("GET", "/control/episodes/tok/hash"), ("POST", "/banking/mcp")],
)
def test_token_is_required_on_every_route(guarded, method: str, path: str) -> None:
    base = guarded.url
    assert open_ep(base, "tok", token=TOKEN).status_code == 200
    before = ep_hash(base, "tok", token=TOKEN).json()["hash"]
    body = json.dumps({"episode_id": "tok", "seed": 1}).encode()
    if path.endswith("/mcp"):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"_meta": {"episode_id": "tok"}, **WRITE}}).encode()
    json_type = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    for token in (None, "wrong-token-0123456789abcdef"):
        got = control(base, method, path, token=token, content=body, headers=json_type)
        assert got.status_code == 401
        assert "missing or wrong bearer token" in got.json()["error"]
        assert got.headers["www-authenticate"].startswith("Bearer")
    assert ep_hash(base, "tok", token=TOKEN).json()["hash"] == before
    assert control(base, "DELETE", "/control/episodes/tok", token=TOKEN).json() == {"closed": True}


def test_client_helpers_pass_the_token(guarded, monkeypatch) -> None:
    async def run(**kwargs: Any) -> dict:
        async with EnvClient(guarded.url, **kwargs) as env:
            ep = env.episode("tok-client", seed=1)
            out = await ep.call(**WRITE)
            assert await ep.close()
            return out

    assert asyncio.run(run(token=TOKEN))["ok"]
    monkeypatch.setenv("PROVE_ENV_TOKEN", TOKEN)
    assert asyncio.run(run())["ok"]  # read from PROVE_ENV_TOKEN by default
    monkeypatch.delenv("PROVE_ENV_TOKEN")
    with pytest.raises(EnvClientError, match="missing or wrong bearer token"):
        asyncio.run(run())


# -- limits ------------------------------------------------------------------------------------
def test_prefix_longer_than_the_limit_is_refused_at_both_doors(guarded) -> None:
    prefix = [READ] * 6
    got = open_ep(guarded.url, "long", prefix=prefix, token=TOKEN)
    assert got.status_code == 400
    assert got.json()["error"] == "prefix has 6 calls; this server replays at most 5 (prove serve --max-prefix)"
    meta = rpc(guarded.url, WRITE, {"episode_id": "long", "prefix": prefix}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert meta.status_code == 400 and "at most 5 (prove serve --max-prefix)" in meta.json()["error"]["message"]
    assert ep_hash(guarded.url, "long", token=TOKEN).status_code == 404  # nothing opened, nothing written
    assert open_ep(guarded.url, "long", prefix=[READ] * 5, token=TOKEN).json()["prefix_calls"] == 5
    control(guarded.url, "DELETE", "/control/episodes/long", token=TOKEN)


@pytest.mark.parametrize(("route", "limit", "flag"), [("control", 30000, "--max-control-body"), ("mcp", 20000, "--max-body")])
@pytest.mark.parametrize("chunked", [False, True])
def test_body_over_the_route_limit_is_refused(guarded, route: str, limit: int, flag: str, chunked: bool) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    body = json.dumps({"episode_id": "big", "seed": 0, "prefix": [{**READ, "pad": "x" * limit}]}).encode()
    content: Any = iter([body[:1000], body[1000:]]) if chunked else body  # no Content-Length when chunked
    path = "/control/episodes" if route == "control" else "/banking/mcp"
    got = httpx2.post(guarded.url + path, content=content, headers=auth, timeout=30)
    assert got.status_code == 413
    assert got.json()["error"] == (f"request body is larger than this route's limit of {limit} bytes "
                                   f"(prove serve {flag})")
    assert ep_hash(guarded.url, "big", token=TOKEN).status_code == 404


def test_open_answers_without_echoing_the_prefix_results(env_server) -> None:
    got = open_ep(env_server.url, "echo", seed=2, prefix=[READ] * 50)
    assert got.status_code == 200
    assert got.json() == {"episode_id": "echo", "seed": 2, "prefix_calls": 50}
    control(env_server.url, "DELETE", "/control/episodes/echo")


def test_a_long_prefix_replay_does_not_block_other_clients(env_server) -> None:
    """While one request replays a 1000-call prefix, another client's calls keep being answered."""
    prefix = [WRITE, *[READ] * 999]

    async def run() -> tuple[int, dict]:
        async with httpx2.AsyncClient(timeout=120) as http:
            opening = asyncio.ensure_future(http.post(
                f"{env_server.url}/control/episodes",
                json={"episode_id": "slow-open", "seed": 3, "prefix": prefix}))
            await asyncio.sleep(0)
            answered = 0
            async with EnvClient(env_server.url) as env:
                ep = env.episode("bystander", seed=3)
                while not opening.done():
                    assert (await ep.call(**READ))["ok"]
                    answered += 1
            return answered, (await opening).json()

    answered, opened = asyncio.run(run())
    assert opened == {"episode_id": "slow-open", "seed": 3, "prefix_calls": 1000}
    assert answered > 1, "no other call was answered while the prefix replayed"
    assert ep_hash(env_server.url, "slow-open").json()["hash"] == reference_hash(3, [WRITE])
    for eid in ("slow-open", "bystander"):
        control(env_server.url, "DELETE", f"/control/episodes/{eid}")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"episode_id": "m\xff", "seed": 0}', "request body is not valid UTF-8 (byte 17)"),
        (b"[" * 100_000 + b"]" * 100_000, "nests too deeply"),
        (json.dumps({"episode_id": "m", "prefix": [{"name": "get_bank_customer", "arguments": {"a": DEEP}}]}).encode(),
         "nests more than 32 levels deep"),
        (b'{"episode_id": "m", "seed": 0', "request body is not JSON"),
        (b'["m", 0]', "request body must be a JSON object with episode_id, seed, prefix, token, replace, seq, append, final, got list"),
        (b'{"episode_id": "m", "sede": 0}', "unknown field(s) 'sede'; valid fields: episode_id, seed, prefix, token, replace, seq, append, final"),
        (b'{"episode_id": "m", "seed": "0"}', "seed must be an integer"),
        (b'{"episode_id": "m", "prefix": {"name": "x"}}', "prefix must be a list of calls, got dict"),
    ],
)
def test_malformed_control_bodies_get_a_400_with_a_message(env_server, body: bytes, message: str) -> None:
    got = httpx2.post(f"{env_server.url}/control/episodes", content=body,
                      headers={"Content-Type": "application/json"}, timeout=30)
    assert got.status_code == 400, got.text
    assert message in got.json()["error"]
    assert ep_hash(env_server.url, "m").status_code == 404
    assert control(env_server.url, "GET", "/control/health").json()["ok"] is True


@pytest.mark.parametrize("body", [b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "\xff"}}',
                                  b"[" * 100_000 + b"]" * 100_000])
def test_malformed_mcp_bodies_are_refused_cleanly(env_server, body: bytes) -> None:
    got = rpc(env_server.url, READ, body=body)
    assert 400 <= got.status_code < 500 or "error" in got.json()
    assert got.status_code < 500


# -- no silent state loss ----------------------------------------------------------------------
def test_evicted_episode_fails_loudly_and_the_client_rebuilds_it(guarded) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}

    async def run() -> tuple[dict, str, int]:
        async with EnvClient(guarded.url, token=TOKEN) as env:
            owner = env.episode("owner", seed=4)
            assert (await owner.call(**WRITE))["ok"]
            for i in range(3):  # a stranger fills the cap of 3
                await env.open(f"stranger-{i}", 0)
            plain = rpc(guarded.url, READ, {"episode_id": "owner", "seed": 4, "resume": True}, headers=auth).json()
            await owner.call(**READ)  # refused, rebuilt from its log, then run
            return plain, await owner.state_hash(["banking"]), owner.rebuilds

    plain, digest, rebuilds = asyncio.run(run())
    assert plain["error"]["code"] == EPISODE_LOST_CODE
    assert "episode 'owner' was evicted: the server keeps at most 3 open episodes" in plain["error"]["message"]
    assert "this call did not run" in plain["error"]["message"]
    assert rebuilds == 1
    assert digest == reference_hash(4, [WRITE])  # the write survived: not a reseeded world


def test_a_call_to_a_lost_episode_runs_nothing(guarded) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    got = rpc(guarded.url, WRITE, {"episode_id": "never-seen", "resume": True}, headers=auth).json()
    assert got["error"]["code"] == EPISODE_LOST_CODE
    assert "is not open on this server" in got["error"]["message"]
    assert ep_hash(guarded.url, "never-seen", token=TOKEN).status_code == 404


def test_expired_episode_fails_loudly_then_rebuilds() -> None:
    with EnvServer(extra_args=["--servers", "banking", "--idle-seconds", "1"]) as server:
        async def run() -> tuple[str, str]:
            async with EnvClient(server.url) as env:
                ep = env.episode("sleepy", seed=5)
                assert (await ep.call(**WRITE))["ok"]
                await asyncio.sleep(1.5)
                await env.open("waker", 0)  # opening sweeps idle episodes
                with pytest.raises(EpisodeLostError, match="'sleepy' expired after more than 1 s idle"):
                    await env.call(READ["name"], READ["arguments"], episode_id="sleepy", seed=5, resume=True)
                await ep.call(**READ)
                return await ep.state_hash(["banking"]), str(ep.rebuilds)

        digest, rebuilds = asyncio.run(run())
    assert digest == reference_hash(5, [WRITE]) and rebuilds == "1"


def test_episodes_in_use_are_never_evicted_new_ones_are_refused(env_server) -> None:
    with EnvServer(extra_args=["--servers", "banking", "--max-episodes", "2"]) as server:
        for eid in ("busy-a", "busy-b"):
            assert open_ep(server.url, eid, prefix=[WRITE]).status_code == 200
        got = open_ep(server.url, "busy-c")
        lazy = rpc(server.url, READ, {"episode_id": "busy-c"}).json()
        hashes = [ep_hash(server.url, e).json()["hash"] for e in ("busy-a", "busy-b")]
        missing = ep_hash(server.url, "busy-c").status_code
    assert got.status_code == 503
    assert "cap of 2 open episodes" in got.json()["error"] and "every one is in use" in got.json()["error"]
    assert "cap of 2 open episodes" in lazy["error"]["message"]
    assert hashes == [reference_hash(0, [WRITE])] * 2 and missing == 404


@NEEDS_OTHER
def test_prefix_on_one_servers_endpoint_cannot_touch_another_server(guarded) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    got = rpc(guarded.url, READ, {"episode_id": "cross", "prefix": [WRITE, OTHER_READ]}, headers=auth).json()
    assert (f"prefix[1] calls '{OTHER_READ['name']}' of server '{OTHER}', but this is the 'banking' endpoint"
            in got["error"]["message"])
    assert ep_hash(guarded.url, "cross", token=TOKEN).status_code == 404

    async def run() -> str:  # EnvClient opens a cross-server prefix through /control/ instead
        async with EnvClient(guarded.url, token=TOKEN) as env:
            ep = env.episode("cross", seed=0, prefix=[WRITE, OTHER_READ])
            assert (await ep.call(**READ))["ok"]
            digest = await ep.state_hash(["banking", OTHER])
            await ep.close()
            return digest

    assert asyncio.run(run()) == reference_hash(0, [WRITE, OTHER_READ], ["banking", OTHER])


@pytest.mark.parametrize("door", ["control", "meta"])
def test_a_failing_prefix_entry_fails_the_open(guarded, door: str) -> None:
    bad = {"name": "set_card_status", "arguments": {"card_id": "CRD-9999", "status": "cancelled"}}
    prefix = [WRITE, bad]
    if door == "control":
        got = open_ep(guarded.url, "failing", prefix=prefix, token=TOKEN)
        assert got.status_code == 400
        message = got.json()["error"]
    else:
        message = rpc(guarded.url, READ, {"episode_id": "failing", "prefix": prefix},
                      headers={"Authorization": f"Bearer {TOKEN}"}).json()["error"]["message"]
    assert message.startswith("prefix[1] set_card_status failed: ") and "CRD-9999" in message
    assert "the episode was not opened" in message
    assert ep_hash(guarded.url, "failing", token=TOKEN).status_code == 404
    # A logged failure replays as one: "ok": false must fail, and does.
    expected = [WRITE, {**bad, "ok": False}]
    assert open_ep(guarded.url, "failing", prefix=expected, token=TOKEN).status_code == 200
    control(guarded.url, "DELETE", "/control/episodes/failing", token=TOKEN)


# -- episode ids -------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["a?b", "a#b", "a b", "a%2Fb", "x" * 129, "a//b", "a/../b", "/a", "é"])
def test_episode_ids_outside_the_alphabet_are_refused_at_every_door(env_server, bad: str) -> None:
    message = "episode id must be a non-empty string of 1-128 characters from A-Z a-z 0-9 . _ : -"
    meta = rpc(env_server.url, WRITE, {"episode_id": bad}).json()
    assert message in meta["error"]["message"]
    opened = open_ep(env_server.url, bad)
    assert opened.status_code == 400 and message in opened.json()["error"]
    with pytest.raises(EnvClientError, match="episode id must be"):
        asyncio.run(EnvClient(env_server.url).close(bad))
    with pytest.raises(Exception, match="episode id must be"):
        Hub().open(bad)
    assert control(env_server.url, "GET", "/control/health").json()["episodes"] >= 0


def test_an_id_with_slashes_works_through_every_route(env_server) -> None:
    eid = "prove-multi_turn-000001/turn:2/rollout-7"
    assert rpc(env_server.url, WRITE, {"episode_id": eid, "seed": 6}).json()["result"]["isError"] is False
    assert ep_hash(env_server.url, eid).json()["hash"] == reference_hash(6, [WRITE])
    assert control(env_server.url, "DELETE", f"/control/episodes/{eid}").json() == {"closed": True}
    assert ep_hash(env_server.url, eid).status_code == 404


# -- small ones --------------------------------------------------------------------------------
def test_client_disconnect_mid_body_logs_no_traceback() -> None:
    server = EnvServer(extra_args=["--servers", "banking", "--log-level", "info"]).start()
    try:
        for path in ("/banking/mcp", "/control/episodes"):
            with socket.create_connection((server.host, server.port)) as sock:
                sock.sendall((f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                              "Content-Length: 5000\r\n\r\n").encode() + b'{"jsonrpc": "2.0", ')
        assert control(server.url, "GET", "/control/health").json()["ok"] is True
    finally:
        log = server.stop()
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]
    assert log.count("client disconnected after 19 bytes of a POST") == 2


def test_server_advertises_tools_only_and_its_real_version(env_server) -> None:
    async def run() -> tuple[Any, Any, str]:
        async with Client(f"{env_server.url}/banking/mcp") as client:
            caps, info = client.server_capabilities, client.server_info
            with pytest.raises(Exception, match="[Mm]ethod not found"):
                await client.list_prompts()
            with pytest.raises(Exception, match="[Mm]ethod not found"):
                await client.list_resources()
            return caps, info, (await client.list_tools()).tools[0].name

    caps, info, first = asyncio.run(run())
    assert caps.tools is not None and caps.prompts is None and caps.resources is None
    assert info is None or info.version == prove_version()
    assert prove_version() != "" and first
    health = control(env_server.url, "GET", "/control/health").json()
    assert health["version"] == prove_version()


def test_workers_inherit_the_token_from_the_environment_not_the_command_line() -> None:
    with EnvServer(workers=2, token=TOKEN, extra_args=["--servers", "banking"]) as server:
        for url in server.urls:
            assert control(url, "GET", "/control/health").status_code == 401
            assert control(url, "GET", "/control/health", token=TOKEN).json()["ok"] is True
        import psutil

        cmdlines = [" ".join(p.cmdline()) for p in psutil.Process(server.proc.pid).children()]
    assert len(cmdlines) == 2 and not any(TOKEN in c for c in cmdlines)
