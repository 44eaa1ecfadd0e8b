"""Soak: memory must level off over 1,000,000 opened-and-closed episodes plus 100,000 that expire idle.

    python benchmarks/bench_soak.py [--episodes 1000000] [--http 20000]

Phase 1 runs in this one process through the hub that `prove serve` wraps (1M episodes over HTTP would
take hours on 2 cores): every episode makes a read, every 50th also a write (a copy-on-write state),
then closes; every 11th is left open and expires idle. Phase 2 does the same over HTTP against a
`prove serve` subprocess and samples that server's resident memory. Prints RSS at intervals.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import random
import time

import psutil

from prove.env import Hub, load_registry
from prove.env.client import EnvClient
from prove.env.launch import EnvServer
from prove.env.sampling import ValuePool, random_calls

logging.getLogger("httpx2").setLevel(logging.WARNING)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def working_calls(hub: Hub) -> list[tuple[dict, dict]]:
    """One read and one write per server that succeed on seed 0 (found by sampling)."""
    reg = load_registry()
    pairs = []
    for name, spec in reg.servers.items():
        hub.open(f"probe-{name}", 0)
        pool = ValuePool.of(hub, f"probe-{name}", name)
        found: dict[bool, dict] = {}
        for call in random_calls(list(spec.tools), pool, random.Random(0), 400):
            is_write = reg.tool(call["name"]).write
            if is_write in found:
                continue
            probe = Hub()
            probe.open("p", 0)
            if probe.call(call["name"], call["arguments"], episode_id="p")["ok"]:
                found[is_write] = call
            if len(found) == 2:
                break
        if len(found) == 2:
            pairs.append((found[False], found[True]))
        hub.close(f"probe-{name}")
    return pairs


def rss_mb(proc: psutil.Process) -> float:
    return proc.memory_info().rss / 2**20


def phase_in_process(n: int) -> None:
    clock = Clock()
    hub = Hub(idle_seconds=60.0, clock=clock, max_episodes=500_000)
    pairs = working_calls(hub)
    proc = psutil.Process()
    print(f"phase 1: {n:,} episodes through the hub, {len(pairs)} servers; every 11th left to expire")
    print(f"{'episodes':>10} {'open':>8} {'expired':>8} {'RSS MB':>8} {'s':>6}")
    start, idle = time.perf_counter(), 0
    for i in range(n):
        clock.t += 0.001  # one simulated millisecond per episode: idle ones expire 60,000 later
        read, write = pairs[i % len(pairs)]
        eid = f"e{i}"
        hub.call(read["name"], read["arguments"], episode_id=eid, seed=i % 8)
        if i % 11 == 10:
            idle += 1
        else:
            if i % 50 == 0:
                hub.call(write["name"], write["arguments"], episode_id=eid)
            hub.close(eid)
        if (i + 1) % (n // 10) == 0:
            gc.collect()
            print(f"{i + 1:>10,} {len(hub.store):>8,} {hub.store.expired:>8,} {rss_mb(proc):>8.1f} "
                  f"{time.perf_counter() - start:>6.0f}", flush=True)
    print(f"left idle: {idle:,}; expired: {hub.store.expired:,}; still open: {len(hub.store):,}")


async def phase_http(n: int) -> None:
    with EnvServer(extra_args=["--idle-seconds", "5"]) as server:
        proc = psutil.Process(server.proc.pid)
        pairs = working_calls(Hub())
        print(f"phase 2: {n:,} episodes over HTTP (server idle expiry 5 s); server RSS:")
        print(f"{'episodes':>10} {'RSS MB':>8} {'s':>6}")
        start = time.perf_counter()
        async with EnvClient(server.url) as env:
            sem = asyncio.Semaphore(32)

            async def one(i: int) -> None:
                read, write = pairs[i % len(pairs)]
                async with sem:
                    await env.call(read["name"], read["arguments"], episode_id=f"h{i}", seed=i % 8)
                    if i % 20 == 0:
                        await env.call(write["name"], write["arguments"], episode_id=f"h{i}", seed=i % 8)
                    if i % 11 != 10:
                        await env.close(f"h{i}")

            step = max(1, n // 10)
            for chunk in range(0, n, step):
                await asyncio.gather(*(one(i) for i in range(chunk, min(n, chunk + step))))
                print(f"{min(n, chunk + step):>10,} {rss_mb(proc):>8.1f} "
                      f"{time.perf_counter() - start:>6.1f}", flush=True)
        calls = n + (n + 19) // 20 + n - n // 11
        print(f"phase 2: {calls / (time.perf_counter() - start):.0f} requests/s (calls and closes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=1_100_000,
                        help="total episodes in phase 1 (1/11 left idle: 1.1M = 1M closed + 100k idle)")
    parser.add_argument("--http", type=int, default=20_000, help="episodes in phase 2 (0 skips it)")
    args = parser.parse_args()
    phase_in_process(args.episodes)
    if args.http:
        asyncio.run(phase_http(args.http))


if __name__ == "__main__":
    main()
