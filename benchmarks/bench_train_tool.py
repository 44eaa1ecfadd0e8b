"""Rollout-side tool cost: PROVE calls per second through VERL's agent-loop call path.

Run: python benchmarks/bench_train_tool.py [--trajectories 64 128] [--calls 8] [--workers 1 2]

Starts `prove serve --workers W` on loopback, loads every tool from a generated YAML with VERL's
tool registry (timed: a rollout worker pays it once), then runs T concurrent trajectories that
each make C calls (reads and writes on their own banking episode, opened from a row's seed and
prefix) through ``ProveAgentLoop._call_tool`` and close their episodes. Prints calls/s and the
p50/p99 latency of one call as a trajectory sees it. No GPU, no model: this is the environment's
share of a GRPO step (a step of the paper config makes ~512 trajectories × a few calls).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any


async def _trajectories(cfg: Any, tokenizer: Any, tools: list, rows: list[dict], n: int, calls: int) -> list[float]:
    from verl.experimental.agent_loop.tool_agent_loop import AgentData
    from verl.experimental.agent_loop.tool_parser import FunctionCall

    from prove.train.rollout import make_agent_loop
    from prove.train.session import close_clients

    latencies: list[float] = []

    async def one(i: int) -> None:
        row = rows[i % len(rows)]
        loop = make_agent_loop(cfg, tokenizer, tools, llm=None)
        data = AgentData(messages=[], image_data=None, video_data=None, audio_data=None,
                         mm_processor_kwargs=None, metrics={}, request_id=uuid.uuid4().hex,
                         tools_kwargs=row["extra_info"]["tools_kwargs"])
        gt = json.loads(row["reward_model"]["ground_truth"])["calls"]
        src, dst = gt[1]["arguments"]["from_account_id"], gt[1]["arguments"]["to_account_id"]
        for k in range(calls):
            call = (FunctionCall(name="get_balance", arguments=json.dumps({"account_id": src})) if k % 2 == 0
                    else FunctionCall(name="transfer_funds", arguments=json.dumps(
                        {"from_account_id": src, "to_account_id": dst, "amount": 1.0})))
            start = time.perf_counter()
            await loop._call_tool(call, data.tools_kwargs, data)
            latencies.append(time.perf_counter() - start)
        await loop._close_episode()

    try:
        await asyncio.gather(*(one(i) for i in range(n)))
    finally:
        await close_clients()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--calls", type=int, default=8, help="calls per trajectory")
    parser.add_argument("--workers", type=int, nargs="+", default=[1])
    args = parser.parse_args()

    from verl.tools.tool_registry import load_all_tools

    from prove.env.launch import EnvServer
    from prove.train.chat_template import load_tokenizer
    from prove.train.compose import check_variant
    from prove.train.config import load_train_config
    from prove.train.demo import demo_examples, demo_rows
    from prove.train.tool_config import write_tool_config

    tokenizer = load_tokenizer()
    rows = [r for r in demo_rows(demo_examples(2)) if r["extra_info"]["turn"] == 1]
    cfg = check_variant(load_train_config("qwen3-4b"), "default", tempfile.mkdtemp())
    print(f"{'workers':>7} {'trajs':>6} {'calls':>6} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for workers in args.workers:
        with EnvServer(workers=workers) as server, tempfile.TemporaryDirectory() as tmp:
            yaml_path = write_tool_config(Path(tmp) / "tools.yaml", server.urls)
            start = time.perf_counter()
            tools = load_all_tools(str(yaml_path), None)
            load_s = time.perf_counter() - start
            for n in args.trajectories:
                start = time.perf_counter()
                lat = asyncio.run(_trajectories(cfg, tokenizer, tools, rows, n, args.calls))
                wall = time.perf_counter() - start
                q = statistics.quantiles(lat, n=100)
                print(f"{workers:>7} {n:>6} {len(lat):>6} {len(lat) / wall:>9.0f} "
                      f"{q[49] * 1e3:>8.1f} {q[98] * 1e3:>8.1f}")
            print(f"        (VERL loaded {len(tools)} tools from the YAML in {load_s:.1f}s)")


if __name__ == "__main__":
    main()
