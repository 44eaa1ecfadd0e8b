"""Three doors, one implementation: in-process, streamable HTTP (uvicorn on loopback) and stdio."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import urllib.request

import httpx2
import pytest
from mcp import Client, StdioServerParameters

from prove.env import Hub, load_registry
from prove.env.client import EnvClient, EnvClientError, logged_from_result
from prove.env.effects import effect_hash
from prove.env.sampling import ValuePool, random_calls

REG = load_registry()
SERVERS = sorted(REG.servers)


_REPLAY_HUB = Hub()  # sequential reference replays; one episode id per replay
_POOLS: dict[tuple[str, int], ValuePool] = {}


def _sequence(server: str, seed: int, n: int, rng_seed: int) -> list[dict]:
    if (server, seed) not in _POOLS:
        _REPLAY_HUB.open(f"probe-{server}-{seed}", seed)
        _POOLS[server, seed] = ValuePool.of(_REPLAY_HUB, f"probe-{server}-{seed}", server)
    return random_calls(list(REG.server(server).tools), _POOLS[server, seed], random.Random(rng_seed), n)


def _replay(seed: int, calls: list[dict], servers: list[str]) -> tuple[list[dict], str]:
    out, digest, _ = _replay_with_effect(seed, calls, servers)
    return out, digest


def _replay_with_effect(seed: int, calls: list[dict], servers: list[str]
                        ) -> tuple[list[dict], str, dict]:
    eid = f"replay-{len(_REPLAY_HUB.store)}-{id(calls)}"
    _REPLAY_HUB.open(eid, seed)
    out = [_REPLAY_HUB.call(c["name"], c["arguments"], episode_id=eid) for c in calls]
    digest = _REPLAY_HUB.state_hash(eid, servers)
    effect = _REPLAY_HUB.effect(eid, servers)
    _REPLAY_HUB.close(eid)
    return out, digest, effect


def test_same_calls_same_results_and_hash_in_process_and_over_http(env_server) -> None:
    seed = 9
    calls = [c for s in SERVERS for c in _sequence(s, seed, 25, 1)]
    expected, expected_hash, expected_effect = _replay_with_effect(seed, calls, SERVERS)
    assert any(e["ok"] for e in expected) and any(not e["ok"] for e in expected)
    assert any(expected_effect.values())  # some write went through

    async def run() -> tuple[list[dict], str, dict]:
        async with EnvClient(env_server.url) as env:
            ep = env.episode("door-http", seed=seed)
            got = [await ep.call(c["name"], c["arguments"]) for c in calls]
            digest = await ep.state_hash(SERVERS)
            effect = await ep.effect(SERVERS)
            assert await ep.close()
            return got, digest, effect

    got, digest, effect = asyncio.run(run())
    assert got == expected
    assert digest == expected_hash
    assert effect == {"effect": expected_effect, "hash": effect_hash(expected_effect)}


def test_same_calls_same_results_and_hash_over_stdio() -> None:
    seed = 5
    calls = _sequence("banking", seed, 40, 2)
    expected, _ = _replay(seed, calls, ["banking"])
    hub = Hub()
    hub.open("default", seed)
    for c in calls:
        hub.call(c["name"], c["arguments"])

    async def run() -> list[dict]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "prove", "serve", "--stdio", "banking"],
                                        env=dict(os.environ))
        async with Client(params) as client:
            listed = await client.list_tools()
            assert len(listed.tools) == len(REG.server("banking").tools)
            got = []
            for c in calls:
                res = await client.call_tool(c["name"], c["arguments"], meta={"episode_id": "s", "seed": seed})
                got.append(logged_from_result(c["name"], c["arguments"], res))
            return got

    assert asyncio.run(run()) == expected


def test_concurrent_episodes_are_isolated(env_server) -> None:
    """200 episodes at once over HTTP, random sequences; each hash equals its sequential replay."""
    n_episodes, per_episode = 200, 8
    rng = random.Random(0)
    plans = []
    for i in range(n_episodes):
        server, seed = rng.choice(SERVERS), rng.randrange(3)
        plans.append((f"iso-{i}", seed, server, _sequence(server, seed, per_episode, i)))

    async def run() -> list[tuple[str, list[dict]]]:
        async with EnvClient(env_server.url) as env:
            async def one(eid: str, seed: int, server: str, calls: list[dict]) -> tuple[str, list[dict]]:
                ep = env.episode(eid, seed=seed)
                out = []
                for c in calls:
                    out.append(await ep.call(c["name"], c["arguments"]))
                    await asyncio.sleep(0)
                return await ep.state_hash([server]), out
            return await asyncio.gather(*(one(*p) for p in plans))

    results = asyncio.run(run())
    mismatches = []
    writes_ok = 0
    for (eid, seed, server, calls), (digest, out) in zip(plans, results, strict=True):
        expected, expected_hash = _replay(seed, calls, [server])
        writes_ok += sum(o["ok"] and REG.tool(o["name"]).write for o in out)
        if digest != expected_hash or out != expected:
            mismatches.append(eid)
    assert mismatches == []
    assert writes_ok > 100, "the test must exercise successful writes to mean anything"


def _post(url: str, body: bytes, headers: dict[str, str] | None = None) -> httpx2.Response:
    hdrs = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28", **(headers or {})}
    return httpx2.post(url, content=body, headers=hdrs, timeout=10)


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[]",
        b'{"jsonrpc": "1.0", "id": 1, "method": "tools/call"}',
        b'{"jsonrpc": "2.0", "id": 1}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "oops"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "no/such/method", "params": {}}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}}',
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "get_balance", "arguments": {"account_id": "x" * 100_000}}}).encode(),
    ],
)
def test_malformed_json_rpc_never_500s_and_server_keeps_serving(env_server, body: bytes) -> None:
    url = f"{env_server.url}/banking/mcp"
    before = httpx2.get(f"{env_server.url}/control/episodes/default/hash").status_code
    response = _post(url, body)
    assert response.status_code < 500, response.text
    with urllib.request.urlopen(env_server.url + "/control/health", timeout=5) as health:
        assert json.load(health)["ok"] is True
    assert before in (200, 404)


@pytest.mark.parametrize(
    ("name", "args", "fragments"),
    [
        ("get_balance", {"account_id": 42}, ["argument 'account_id' must be a string", "got 42"]),
        ("get_balance", {}, ["missing required argument 'account_id'"]),
        ("get_balance", {"account_id": "ACC-0001", "pin": "1234"}, ["unknown argument(s) 'pin'", "valid arguments: account_id"]),
        ("get_balanse", {"account_id": "ACC-0001"}, ["unknown tool", "did you mean get_balance"]),
        ("get_balance", {"account_id": "ACC-9999"}, ["account 'ACC-9999' not found", "ACC-0001"]),
        ("transfer_funds", {"from_account_id": "ACC-0001", "to_account_id": "ACC-0002", "amount": "lots"},
         ["argument 'amount' must be a number", "lots"]),
        ("add_payee", {"customer_id": "CUS-0001", "name": "y" * 5000, "account_number": "1234567890"},
         ["'name' is 5000 characters long", "limit is 4096"]),
    ],
)
def test_bad_arguments_over_http_are_explained_and_change_nothing(env_server, name, args, fragments) -> None:
    async def run() -> tuple[dict, str, str]:
        async with EnvClient(env_server.url) as env:
            await env.open(f"bad-{name}-{len(args)}-{abs(hash(json.dumps(args))) % 10**6}", 0)
            eid = f"bad-{name}-{len(args)}-{abs(hash(json.dumps(args))) % 10**6}"
            before = await env.state_hash(eid, ["banking"])
            out = await env.call(name, args, episode_id=eid)
            after = await env.state_hash(eid, ["banking"])
            await env.close(eid)
            return out, before, after

    out, before, after = asyncio.run(run())
    assert out["ok"] is False
    for frag in fragments:
        assert frag in out["error"], (frag, out["error"])
    assert before == after


def test_control_surface_errors_and_hidden_from_tool_list(env_server) -> None:
    async def run() -> None:
        async with EnvClient(env_server.url) as env:
            with pytest.raises(EnvClientError, match="seed must be an integer"):
                await env.open("ctl", seed=-3)
            with pytest.raises(EnvClientError, match="not open"):
                await env.state_hash("never-opened")
            await env.open("ctl", 1)
            with pytest.raises(EnvClientError, match="already open"):
                await env.open("ctl", 1)
            with pytest.raises(EnvClientError, match="unknown server"):
                await env.state_hash("ctl", ["atlantis"])
            assert await env.close("ctl") is True
            async with Client(f"{env_server.url}/banking/mcp") as client:
                names = [t.name for t in (await client.list_tools()).tools]
                flags = {t.name: t.annotations.read_only_hint for t in (await client.list_tools()).tools}
            assert names == REG.server("banking").tool_names()
            assert not any("episode" in n or "hash" in n for n in names)
            assert flags["transfer_funds"] is False and flags["get_balance"] is True
            # A call without _meta lands in the default episode, as any stock MCP client would.
            async with Client(f"{env_server.url}/banking/mcp") as client:
                res = await client.call_tool("get_bank_customer", {"customer_id": "CUS-0001"})
                assert not res.is_error and res.structured_content["customer_id"] == "CUS-0001"

    asyncio.run(run())
    bad = httpx2.post(f"{env_server.url}/control/episodes", content=b"nope", timeout=5,
                      headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and "not JSON" in bad.json()["error"]


def test_client_reports_an_unreachable_server_clearly() -> None:
    from prove.env.launch import free_port

    async def run() -> None:
        async with EnvClient(f"http://127.0.0.1:{free_port()}", timeout=2):
            pass

    with pytest.raises(EnvClientError, match="failed"):
        asyncio.run(run())
