"""Bytes per writing episode (per server) and peak USS under a byte budget, through the hub.

    python benchmarks/bench_env_memory.py [--episodes 300] [--budget-episodes 100000] [--max-memory 2G]

(a) For every server: the USS growth per open episode that has made one successful write there
(bases warmed first and episodes kept open, so only the episodes' own bytes count). (b) Many writing episodes on a hub
with a byte budget (`max_memory`), printing peak USS, how many episodes stayed open and how many
were reported gone. (b) is skipped on code whose Hub has no `max_memory`.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import sys
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).parent))
from bench_soak import working_calls  # noqa: E402

from prove.env import Hub, load_registry  # noqa: E402


def uss() -> int:
    return psutil.Process().memory_full_info().uss


def parse_bytes(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    return int(float(text[:-1]) * units[text[-1]]) if text[-1:] in units else int(text)


def per_server(pairs: list[tuple[dict, dict]], n: int) -> None:
    reg = load_registry()
    hub = Hub(max_episodes=30 * n + 100)
    print(f"(a) bytes per writing episode, {n} episodes per server (seed 0, one write each)")
    total = 0.0
    for _read, write in pairs:
        server = reg.tool(write["name"]).server
        hub.open(f"warm-{server}", 0)
        hub.call(write["name"], write["arguments"], episode_id=f"warm-{server}")
        gc.collect()
        before, counted = uss(), getattr(hub.store, "bytes", 0)
        for i in range(n):
            eid = f"{server}-{i}"
            assert hub.call(write["name"], write["arguments"], episode_id=eid, seed=0)["ok"]
        gc.collect()
        per = (uss() - before) / n
        total += per
        count = f"{(hub.store.bytes - counted) / n / 1024:9.1f} KiB counted" if counted else ""
        print(f"    {server:<13} {write['name']:<28} {per / 1024:9.1f} KiB USS {count}")
    print(f"    mean over {len(pairs)} servers: {total / len(pairs) / 1024:.1f} KiB per writing episode")


def budget(pairs: list[tuple[dict, dict]], n: int, max_memory: int) -> None:
    if "max_memory" not in inspect.signature(Hub.__init__).parameters and not hasattr(Hub, "max_memory"):
        print("(b) skipped: this Hub has no max_memory")
        return
    hub = Hub(max_memory=max_memory, max_episodes=n + 10, busy_seconds=0)
    gc.collect()
    start, peak = uss(), 0
    for i in range(n):
        read, write = pairs[i % len(pairs)]
        hub.call(write["name"], write["arguments"], episode_id=f"b{i}", seed=i % 4)
        if i % 1000 == 999:
            peak = max(peak, uss())
    peak = max(peak, uss())
    print(f"(b) {n:,} writing episodes, max_memory {max_memory / 2**30:.2f} GiB: peak USS "
          f"{peak / 2**20:,.0f} MiB (start {start / 2**20:,.0f} MiB), open at the end "
          f"{len(hub.store):,}, accounted {hub.store.bytes / 2**20:,.0f} MiB, "
          f"evicted {hub.store.evicted:,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=300, help="writing episodes per server in (a)")
    parser.add_argument("--budget-episodes", type=int, default=100_000,
                        help="writing episodes in (b); 0 skips it")
    parser.add_argument("--max-memory", default="2G", help="byte budget in (b), e.g. 2G, 512M")
    args = parser.parse_args()
    pairs = working_calls(Hub())
    per_server(pairs, args.episodes)
    if args.budget_episodes:
        budget(pairs, args.budget_episodes, parse_bytes(args.max_memory))


if __name__ == "__main__":
    main()
