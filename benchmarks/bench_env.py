"""Environment speed and memory: hub vs SDK in-process, HTTP vs a bare SDK server, episode cost.

    python benchmarks/bench_env.py [--quick]

Prints (a) hub calls/s, (b) the SDK's in-process Client calls/s on the same tools, (c) HTTP calls/s
with 1 and 64 concurrent episodes for PROVE and for a bare MCPServer with a trivial tool, (d) episode
creation p50/p99, (e) resident memory per idle episode over 10,000 episodes, each with its target.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import psutil
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from prove.env import Hub
from prove.env.launch import EnvServer, free_port, wait_until_up
from prove.env.transports import ProveMCPServer

logging.getLogger("httpx2").setLevel(logging.WARNING)

CALL = ("get_bank_customer", {"customer_id": "CUS-0001"})


def bench_hub(n: int) -> float:
    hub = Hub()
    hub.open("bench", 0)
    hub.call(*CALL, episode_id="bench")
    t = time.perf_counter()
    for _ in range(n):
        hub.call(*CALL, episode_id="bench")
    return n / (time.perf_counter() - t)


async def bench_sdk_in_process(n: int) -> float:
    hub = Hub()
    async with Client(ProveMCPServer(hub, "banking")) as client:
        await client.call_tool(*CALL, meta={"episode_id": "bench", "seed": 0})
        t = time.perf_counter()
        for _ in range(n):
            await client.call_tool(*CALL, meta={"episode_id": "bench", "seed": 0})
        return n / (time.perf_counter() - t)


async def bench_http(url: str, tool: str, args: dict, concurrency: int, per_worker: int, meta: bool) -> float:
    limits = httpx2.Limits(max_connections=256, max_keepalive_connections=256)
    async with httpx2.AsyncClient(timeout=60, limits=limits) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            async def worker(i: int) -> None:
                m = {"episode_id": f"w{i}", "seed": 0} if meta else None
                for _ in range(per_worker):
                    res = await client.call_tool(tool, args, meta=m)
                    assert not res.is_error, res
            await worker(-1)
            t = time.perf_counter()
            await asyncio.gather(*(worker(i) for i in range(concurrency)))
            return concurrency * per_worker / (time.perf_counter() - t)


def bench_creation(n: int) -> tuple[float, float]:
    hub = Hub()
    for seed in range(4):  # bases built once per seed, as in training (few seeds, many episodes)
        hub.open(f"warm-{seed}", seed)
    times = []
    for i in range(n):
        t = time.perf_counter()
        hub.open(f"c{i}", i % 4)
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2] * 1e3, times[int(len(times) * 0.99)] * 1e3


def bench_memory(n: int) -> float:
    """Resident bytes per idle episode (each has made one read call) over n episodes."""
    hub = Hub()
    for seed in range(4):
        hub.open(f"warm-{seed}", seed)
        hub.call(*CALL, episode_id=f"warm-{seed}")
    gc.collect()
    proc = psutil.Process()
    before = proc.memory_info().rss
    for i in range(n):
        hub.call(*CALL, episode_id=f"m{i}", seed=i % 4)
    gc.collect()
    return (proc.memory_info().rss - before) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    args = parser.parse_args()
    k = 5 if args.quick else 1
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")

    a = bench_hub(40_000 // k)
    b = asyncio.run(bench_sdk_in_process(4_000 // k))
    print(f"(a) hub in-process             {a:10.0f} calls/s")
    print(f"(b) SDK Client in-process      {b:10.0f} calls/s   a/b = {a / b:.1f}x (target >= 4x)")

    port = free_port()
    bare = subprocess.Popen([sys.executable, str(Path(__file__).with_name("bare_server.py")), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/control/health", 60, bare)
        with EnvServer(extra_args=["--servers", "banking"]) as server:
            rows = []
            for conc, per in ((1, 400 // k), (64, 20 // max(1, k // 2))):
                ours = asyncio.run(bench_http(f"{server.url}/banking/mcp", *CALL, conc, per, meta=True))
                base = asyncio.run(bench_http(f"http://127.0.0.1:{port}/mcp", "echo", {"value": "x"},
                                              conc, per, meta=False))
                rows.append((conc, ours, base))
            for conc, ours, base in rows:
                target = "  (target >= 0.8x)" if conc == 64 else ""
                print(f"(c) HTTP, {conc:>2} concurrent episodes: PROVE {ours:7.0f} calls/s, bare SDK "
                      f"{base:7.0f} calls/s, ratio {ours / base:.2f}{target}")
    finally:
        bare.terminate()
        bare.wait(10)

    p50, p99 = bench_creation(20_000 // k)
    print(f"(d) episode creation           p50 {p50:.3f} ms, p99 {p99:.3f} ms (target p50 <= 1 ms)")
    per = bench_memory(10_000)
    print(f"(e) memory per idle episode    {per / 1024:.2f} KB over 10,000 episodes (target <= 64 KB)")


if __name__ == "__main__":
    main()
