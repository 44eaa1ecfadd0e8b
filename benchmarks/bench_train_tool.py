"""Rollout-side tool cost: PROVE calls per second through VERL's agent-loop call path vs raw HTTP.

Run: python benchmarks/bench_train_tool.py [--quick] [--trajectories 64 128] [--calls 8] [--workers 1 2] [--synth DIR]

Starts `prove serve --workers W` on loopback, loads every tool from a generated YAML with VERL's
tool registry (timed: a rollout worker pays it once), then runs T concurrent trajectories that
each make C calls (reads and writes on their own banking episode, opened from a training row's
seed and prefix: the later-turn rows of a small banking synthesis run made first, or of the
export at ``--synth``; each moves money between two accounts of its episode) through
``ProveAgentLoop._call_tool`` and close their episodes. Prints calls/s and the
p50/p99 latency of one call as a trajectory sees it. The same trajectories also run through the raw
HTTP episode client (``EnvClient.episode(...).call``, no VERL) against the same server, alternating
rounds so both see the same machine load; the last line is ``ratio X`` = ProveTool rate / raw rate
(each rate = all its rounds' calls / their summed wall time; target >= 0.8). Agent loops are built
before a round's clock starts (VERL builds one per sample; that cost is not the call path). No GPU, no model: this is the environment's share of a GRPO
step (a step of the paper config makes ~512 trajectories x a few calls). ``--quick``: 64
trajectories x 8 calls, 1 worker, 4 rounds.
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


class _Clock:
    """Set when a path's untimed setup is done; the round's wall time starts there."""

    def __init__(self) -> None:
        self.t = 0.0

    def set(self) -> None:
        self.t = time.perf_counter()


start_line = _Clock()


async def _trajectories(cfg: Any, tokenizer: Any, tools: list, rows: list[dict], n: int, calls: int) -> list[float]:
    from verl.experimental.agent_loop.tool_agent_loop import AgentData
    from verl.experimental.agent_loop.tool_parser import FunctionCall

    from prove.train.rollout import make_agent_loop
    from prove.train.session import close_clients

    latencies: list[float] = []
    # One agent loop per trajectory, as VERL's AgentLoopWorker makes them; built before the
    # clock starts: what is measured is the call path, _call_tool -> ProveTool -> prove serve.
    loops = [make_agent_loop(cfg, tokenizer, tools, llm=None) for _ in range(n)]
    start_line.set()

    async def one(i: int) -> None:
        row = rows[i % len(rows)]
        loop = loops[i]
        data = AgentData(messages=[], image_data=None, video_data=None, audio_data=None,
                         mm_processor_kwargs=None, metrics={}, request_id=uuid.uuid4().hex,
                         tools_kwargs=row["extra_info"]["tools_kwargs"])
        src, dst = row["pair"]
        for k in range(calls):
            call = (FunctionCall(name="get_balance", arguments=json.dumps({"account_id": src})) if k % 2 == 0
                    else FunctionCall(name="transfer_funds", arguments=json.dumps(
                        {"from_account_id": src, "to_account_id": dst, "amount": 1.0})))
            start = time.perf_counter()
            response, _, metrics = await loop._call_tool(call, data.tools_kwargs, data)
            latencies.append(time.perf_counter() - start)
            assert metrics.get("ok"), response.text
        await loop._close_episode()

    try:
        await asyncio.gather(*(one(i) for i in range(n)))
    finally:
        await close_clients()
    return latencies


async def _raw(urls: list[str], rows: list[dict], n: int, calls: int) -> list[float]:
    """The same trajectories through the raw HTTP episode client (no VERL, no tool objects)."""
    from prove.env.client import EnvClient

    latencies: list[float] = []
    start_line.set()
    async with EnvClient(urls) as env:
        async def one(i: int) -> None:
            row = rows[i % len(rows)]
            create = row["extra_info"]["tools_kwargs"]["prove"]["create_kwargs"]
            prefix = create.get("prefix") or []
            ep = env.episode(uuid.uuid4().hex, int(create["seed"]),
                             json.loads(prefix) if isinstance(prefix, str) else prefix)
            src, dst = row["pair"]
            for k in range(calls):
                start = time.perf_counter()
                if k % 2 == 0:
                    out = await ep.call("get_balance", {"account_id": src})
                else:
                    out = await ep.call("transfer_funds", {"from_account_id": src, "to_account_id": dst,
                                                           "amount": 1.0})
                latencies.append(time.perf_counter() - start)
                assert out["ok"], out
            await ep.close()

        await asyncio.gather(*(one(i) for i in range(n)))
    return latencies


def _synth_rows(synth: str | None) -> list[dict]:
    """Banking rows at a later turn (a replayed prefix) of an export; a small run when none is given."""
    import pyarrow.parquet as pq

    from prove.synth.pipeline import SynthConfig, synthesize

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(synth) if synth else Path(tmp)
        if not synth:
            synthesize(SynthConfig(sizes={"multi_turn": 4, "clarification": 0, "abstention": 0}, seed=3,
                                   n_chains=60, n_worlds=2, servers=("banking",), workers=1), out)
        rows = [r for split in ("train", "val") for r in pq.read_table(out / f"{split}.parquet").to_pylist()]
    rows = [r for r in rows if "banking" in r["extra_info"]["servers"] and r["extra_info"]["turn"] >= 1]
    if not rows:
        raise SystemExit("no banking row at a later turn in the export")
    return rows


def _transfer_pair(row: dict, amount: float) -> tuple[str, str]:
    """Two active accounts of one currency in the row's episode (seed, prefix replayed) that can
    move ``amount`` (times the calls of a trajectory)."""
    from prove.env.hub import Hub
    from prove.rows import episode_spec

    spec = episode_spec(row["extra_info"]["tools_kwargs"]["prove"]["create_kwargs"])
    hub = Hub()
    hub.open("pair", spec.seed, list(spec.prefix))
    accounts = [a for a in hub.state("pair", "banking")["accounts"].values() if a["status"] == "active"]
    hub.close("pair")
    for src in accounts:
        if min(src["balance"] + src["credit_limit"], src["daily_transfer_limit"] - src["transferred_today"]) >= amount:
            for dst in accounts:
                if dst["account_id"] != src["account_id"] and dst["currency"] == src["currency"]:
                    return src["account_id"], dst["account_id"]
    raise SystemExit(f"no account pair can move {amount} in {row['extra_info']['example_id']}")


def _row(label: str, workers: int, n: int, lat: list[float], wall: float) -> None:
    q = statistics.quantiles(lat, n=100)
    rate = len(lat) / wall
    print(f"{label:>9} {workers:>7} {n:>6} {len(lat):>6} {rate:>9.0f} {q[49] * 1e3:>8.1f} {q[98] * 1e3:>8.1f}",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="64 trajectories x 8 calls, 1 worker, 4 rounds")
    parser.add_argument("--trajectories", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--calls", type=int, default=8, help="calls per trajectory")
    parser.add_argument("--workers", type=int, nargs="+", default=[1])
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds per path")
    parser.add_argument("--synth", default=None, help="a synthesis export to take rows from (default: a small run)")
    args = parser.parse_args()
    if args.quick:
        args.trajectories, args.calls, args.workers, args.rounds = [64], 8, [1], 4

    from verl.tools.tool_registry import load_all_tools

    from prove.env.launch import EnvServer
    from prove.train.chat_template import load_tokenizer
    from prove.train.compose import check_variant
    from prove.train.config import load_train_config
    from prove.train.tool_config import write_tool_config

    tokenizer = load_tokenizer()
    rows = _synth_rows(args.synth)
    # every transfer is 1.0 and at most half a trajectory's calls; rounds reuse fresh episodes
    for row in rows:
        row["pair"] = _transfer_pair(row, float(args.calls))
    cfg = check_variant(load_train_config("qwen3-4b"), "default", tempfile.mkdtemp())
    print(f"{'path':>9} {'workers':>7} {'trajs':>6} {'calls':>6} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    total: dict[str, list[float]] = {"ProveTool": [0, 0.0], "raw HTTP": [0, 0.0]}  # calls, seconds
    for workers in args.workers:
        with EnvServer(workers=workers) as server, tempfile.TemporaryDirectory() as tmp:
            yaml_path = write_tool_config(Path(tmp) / "tools.yaml", server.urls)
            start = time.perf_counter()
            tools = load_all_tools(str(yaml_path), None)
            load_s = time.perf_counter() - start
            asyncio.run(_raw(server.urls, rows, 4, 2))  # warm both paths once
            asyncio.run(_trajectories(cfg, tokenizer, tools, rows, 4, 2))
            for n in args.trajectories:
                for _ in range(args.rounds):
                    for label in ("raw HTTP", "ProveTool"):
                        if label == "raw HTTP":
                            lat = asyncio.run(_raw(server.urls, rows, n, args.calls))
                        else:
                            lat = asyncio.run(_trajectories(cfg, tokenizer, tools, rows, n, args.calls))
                        wall = time.perf_counter() - start_line.t
                        _row(label, workers, n, lat, wall)
                        total[label][0] += len(lat)
                        total[label][1] += wall
            print(f"        (VERL loaded {len(tools)} tools from the YAML in {load_s:.1f}s)")
    rate = {label: calls / seconds for label, (calls, seconds) in total.items()}
    print(f"calls/s over all rounds: ProveTool {rate['ProveTool']:.0f}, raw HTTP {rate['raw HTTP']:.0f}")
    print(f"ratio {rate['ProveTool'] / rate['raw HTTP']:.2f}")


if __name__ == "__main__":
    main()
