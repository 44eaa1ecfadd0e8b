"""Exactly-once over HTTP: late replies past the client's timeout, kill -9 and restart, tokens.

    .venv/bin/python -m pytest tests/env/test_exactly_once_http.py -q

Every episode's state on the server must end equal to the replay of its handle's log, however
many calls timed out (and ran) or were lost in a restart.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from prove.env import Hub, load_registry
from prove.env.client import EnvClient, EpisodeHandle
from prove.env.launch import free_port, stop_child, wait_until_up
from prove.env.sampling import ValuePool, random_calls

REG = load_registry()
# banking, shop and tasks when selected, else banking and whichever servers PROVE_SERVERS selects.
SERVERS = sorted(REG.servers, key=lambda n: (n not in ("banking", "shop", "tasks"), n != "banking", n))[:3]
HELPER = Path(__file__).with_name("delaying_server.py")


class Server:
    """tests/env/delaying_server.py as a child process that can be killed and started again."""

    def __init__(self, delay: float, every: int) -> None:
        self.port, self.delay, self.every = free_port(), delay, every
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HELPER), str(self.port), str(self.delay), str(self.every),
             ",".join(SERVERS)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until_up(self.url + "/control/health", 60, self.proc)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()  # SIGKILL: every episode it held is gone
        self.proc.wait(10)

    def stop(self) -> None:
        stop_child(self.proc, None)


def plans(n: int, per_episode: int) -> list[tuple[str, int, list[dict]]]:
    reference = Hub(REG.subset(SERVERS))
    rng = random.Random(7)
    out = []
    for i in range(n):
        server, seed = SERVERS[i % len(SERVERS)], rng.randrange(3)
        reference.open(f"plan{i}", seed)
        pool = ValuePool.of(reference, f"plan{i}", server)
        calls = random_calls(list(REG.server(server).tools), pool, random.Random(i), per_episode)
        out.append((f"ep-{i}", seed, calls))
    return out


def replayed_hash(handle: EpisodeHandle, servers: list[str]) -> str:
    """The state hash of a fresh in-process replay of the handle's prefix + log."""
    hub = Hub(REG.subset(SERVERS), max_prefix=100_000)
    hub.open(handle.episode_id, handle.seed, handle.replay_calls())
    return hub.state_hash(handle.episode_id, servers)


async def run_episodes(server: Server, todo: list[tuple[str, int, list[dict]]], timeout: float,
                       kill_at: int | None = None) -> list[tuple[EpisodeHandle, str]]:
    async with EnvClient(server.url, timeout=timeout) as env:
        done = 0
        killed = asyncio.Event()

        async def one(eid: str, seed: int, calls: list[dict]) -> tuple[EpisodeHandle, str]:
            nonlocal done
            handle = env.episode(eid, seed)
            handle.reconnect_seconds = 120
            handle.max_attempts = 40
            for c in calls:
                await handle.call(c["name"], c["arguments"])
                done += 1
            for _ in range(40):  # the final hash may itself time out under load: ask again
                try:
                    return handle, await handle.state_hash(SERVERS)
                except Exception:  # noqa: BLE001 - a timeout or a restart: retry
                    await asyncio.sleep(0.2)
            raise AssertionError(f"no hash for {eid}")

        async def killer() -> None:
            while done < (kill_at or 0):
                await asyncio.sleep(0.01)
            await asyncio.to_thread(server.kill)
            await asyncio.to_thread(server.start)
            killed.set()

        task = asyncio.create_task(killer()) if kill_at is not None else None
        results = await asyncio.gather(*(one(*p) for p in todo))
        if task is not None:
            await task
        return results


def test_late_replies_past_the_client_timeout_are_never_applied_twice() -> None:
    server = Server(delay=1.5, every=3)
    server.start()
    try:
        results = asyncio.run(run_episodes(server, plans(12, 9), timeout=0.5))
    finally:
        server.stop()
    assert sum(h.retries for h, _ in results) >= 12  # every episode hit a late reply
    mismatched = [h.episode_id for h, digest in results if digest != replayed_hash(h, SERVERS)]
    assert mismatched == []


@pytest.mark.timeout(600)
def test_kill_and_timeouts_during_200_concurrent_episodes_lose_and_double_nothing() -> None:
    server = Server(delay=4.0, every=5)
    server.start()
    todo = plans(200, 6)
    try:
        results = asyncio.run(run_episodes(server, todo, timeout=3.0, kill_at=500))
    finally:
        server.stop()
    assert sum(h.retries for h, _ in results) > 0, "no call timed out"
    assert sum(h.rebuilds for h, _ in results) > 0, "the kill did not hit a live run"
    mismatched = [h.episode_id for h, digest in results if digest != replayed_hash(h, SERVERS)]
    assert mismatched == []
    assert all(len(h.log) == len(calls) for (h, _), (_, _, calls) in zip(results, todo, strict=True))


def test_a_foreign_client_cannot_read_write_close_or_reopen_an_owned_episode() -> None:
    server = Server(delay=0.0, every=10**9)
    server.start()

    async def run() -> None:
        async with EnvClient(server.url) as owner, EnvClient(server.url, episode_secret="another process") as thief:
            mine = owner.episode("owned", 1)
            await mine.call("get_bank_customer", {"customer_id": "CUS-0001"})
            digest = await mine.state_hash(["banking"])
            theirs = thief.episode("owned", 1)
            assert theirs.token != mine.token
            for attempt in (
                thief.call("get_bank_customer", {"customer_id": "CUS-0001"}, episode_id="owned",
                           seed=1, token=theirs.token, seq=2),
                thief.call("get_bank_customer", {"customer_id": "CUS-0001"}, episode_id="owned",
                           seed=1),
                thief.state_hash("owned", ["banking"]),
                thief.close("owned"),
                thief.open("owned", 1, token=theirs.token, replace=True),
            ):
                with pytest.raises(Exception, match="belongs to another owner|already open"):
                    await attempt
            assert await mine.state_hash(["banking"]) == digest
            assert (await mine.call("get_bank_customer", {"customer_id": "CUS-0002"}))["ok"]
            # a stock MCP request without _meta uses the default episode
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "get_bank_customer", "arguments": {"customer_id": "CUS-0001"}}}
            headers = {"Accept": "application/json, text/event-stream",
                       "MCP-Protocol-Version": "2025-06-18"}
            async with httpx2.AsyncClient() as http:
                reply = await http.post(f"{server.url}/banking/mcp", json=body, headers=headers)
            assert reply.status_code == 200 and '"isError":false' in reply.text.replace(" ", "")

    try:
        asyncio.run(run())
    finally:
        server.stop()


def test_half_sent_headers_and_bodies_are_cut_off() -> None:
    import socket
    import time

    server = Server(delay=0.0, every=10**9)
    server.start()
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.settimeout(30)
            start = time.monotonic()
            sock.sendall(b"POST /banking/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
            assert sock.recv(1024) == b""  # closed by the server (2 s header timeout here)
            assert time.monotonic() - start < 20
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.settimeout(30)
            sock.sendall(b"POST /control/episodes HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"epi")
            reply = b""
            while b"did not arrive" not in reply and (chunk := sock.recv(4096)):
                reply += chunk
            assert reply.startswith(b"HTTP/1.1 408") and b"did not arrive within 2 s" in reply
    finally:
        server.stop()


def test_an_episode_longer_than_max_prefix_is_rebuilt_in_chunks() -> None:
    from prove.env.launch import EnvServer

    calls = [{"name": "get_bank_customer", "arguments": {"customer_id": f"CUS-000{i % 9 + 1}"}}
             for i in range(9)]
    calls.insert(4, {"name": "set_card_status",
                     "arguments": {"card_id": "CRD-0001", "status": "cancelled"}})

    async def run(url: str) -> tuple[EpisodeHandle, str]:
        async with EnvClient(url) as env:
            handle = env.episode("long", 0)
            for c in calls:
                assert (await handle.call(c["name"], c["arguments"]))["ok"]
            await env.close("long")  # the server loses it (as an eviction or a restart would)
            await handle.call(*READ_CALL)  # rebuilt from 10 logged calls, 4 per open
            return handle, await handle.state_hash(["banking"])

    with EnvServer(extra_args=["--servers", "banking", "--max-prefix", "4"]) as server:
        handle, digest = asyncio.run(run(server.url))
    assert handle.rebuilds == 1 and len(handle.log) == 11
    assert digest == replayed_hash(handle, ["banking"])


READ_CALL = ("get_bank_customer", {"customer_id": "CUS-0001"})
