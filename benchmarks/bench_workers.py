"""Scale-out: HTTP calls/s with `prove serve --workers 1` and `--workers 2` under the same load.

    python benchmarks/bench_workers.py [--episodes 128] [--calls 20]

The load generator (one process, asyncio) runs on the same 2 cores as the workers, so it competes
with them: read the figures as "what one more worker buys on this machine", not as a ceiling.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time

from prove.env.client import EnvClient
from prove.env.launch import EnvServer

logging.getLogger("httpx2").setLevel(logging.WARNING)
CALL = ("get_bank_customer", {"customer_id": "CUS-0001"})


async def load(urls: list[str], episodes: int, calls: int) -> float:
    async with EnvClient(urls, timeout=120) as env:
        async def one(i: int) -> None:
            for _ in range(calls):
                out = await env.call(*CALL, episode_id=f"w-{i}", seed=i % 4)
                assert out["ok"], out
        await one(-1)
        t = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(episodes)))
        return episodes * calls / (time.perf_counter() - t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=128, help="concurrent episodes")
    parser.add_argument("--calls", type=int, default=20, help="calls per episode")
    args = parser.parse_args()
    rates = {}
    for workers in (1, 2):
        with EnvServer(workers=workers, extra_args=["--servers", "banking"]) as server:
            rates[workers] = asyncio.run(load(server.urls, args.episodes, args.calls))
        print(f"--workers {workers}: {rates[workers]:8.0f} calls/s "
              f"({args.episodes} concurrent episodes x {args.calls} calls)", flush=True)
    print(f"speed-up with 2 workers: {rates[2] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()
