"""Per-call overhead of each framework adapter against `EnvClient` directly, on one live `prove serve`.

    python benchmarks/bench_integrations.py [--calls 300] [--rows results/synth/val.parquet]

Rows come from ``--rows`` or from a small synthesis run (banking, email, shop; seed 3). Every path
runs the same read-only ground-truth call of one row ``--calls`` times in one episode, after a warm-up
of 20: (1) ``EnvClient`` directly (``EpisodeHandle.call``), (2) the adapters' core
``prove.integrations.turn.Turn.call``, then (3) each adapter in ``benchmarks/integrations/<name>.py``
whose framework is installed (a module exposes ``FRAMEWORK``, ``available() -> str | None`` (why
not, or None) and ``measure(env_url, row, call, n) -> list[float]``, seconds per call in that
framework's own step path). Prints median and p90 milliseconds per call and the median overhead
over ``EnvClient``; an adapter whose framework is missing is listed with the reason.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from prove.env.client import EnvClient
from prove.env.launch import EnvServer
from prove.integrations.turn import Turn, TurnRow
from prove.rows import read_rows

HERE = Path(__file__).resolve().parent
WARMUP = 20


def rows_for(path: str | None) -> list[dict[str, Any]]:
    if path:
        return read_rows(path)
    from prove.synth.pipeline import SynthConfig, synthesize

    out = Path(tempfile.mkdtemp(prefix="bench-integrations-"))
    synthesize(SynthConfig(sizes={"multi_turn": 6, "clarification": 0, "abstention": 0}, seed=3, n_chains=60,
                           n_worlds=2, servers=("banking", "email", "shop"), chunk_size=8, workers=1), out)
    return [r for split in ("train", "val") for r in read_rows(out / f"{split}.parquet")]


def read_call(rows: list[dict[str, Any]]) -> tuple[TurnRow, dict[str, Any]]:
    """A row and a read-only ground-truth call of it (a name starting get_/list_/search_)."""
    for raw in rows:
        row = TurnRow.from_row(raw)
        for call in row.ground_truth.get("calls", []):
            if call["name"].split("_")[0] in ("get", "list", "search"):
                args = call["arguments"]
                return row, {"name": call["name"], "arguments": json.loads(args) if isinstance(args, str) else args}
    raise SystemExit("no row has a read-only ground-truth call; pass --rows with one")


def env_client(url: str, row: TurnRow, call: dict[str, Any], n: int) -> list[float]:
    async def go() -> list[float]:
        async with EnvClient(url) as client:
            handle = client.episode("bench-envclient", row.spec.seed, list(row.spec.prefix))
            out = []
            for i in range(WARMUP + n):
                start = time.perf_counter()
                await handle.call(call["name"], call["arguments"])
                if i >= WARMUP:
                    out.append(time.perf_counter() - start)
            await client.close("bench-envclient")
            return out

    return asyncio.run(go())


def core(url: str, row: TurnRow, call: dict[str, Any], n: int) -> list[float]:
    async def go() -> list[float]:
        turn = Turn(row, url, episode_id="bench-core")
        out = []
        for i in range(WARMUP + n):
            start = time.perf_counter()
            await turn.call(call["name"], call["arguments"])
            if i >= WARMUP:
                out.append(time.perf_counter() - start)
        await turn.close()
        return out

    return asyncio.run(go())


def adapters() -> list[Any]:
    mods = []
    for path in sorted((HERE / "integrations").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"bench_integration_{path.stem}", path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mods.append(mod)
    return mods


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rows", default=None, help="a training-rows parquet (default: a small synthesis run)")
    args = ap.parse_args(argv)
    row, call = read_call(rows_for(args.rows))
    print(f"# {args.calls} calls of {call['name']} (row {row.id}) after {WARMUP} warm-up calls; "
          f"python {sys.version.split()[0]}")
    with EnvServer() as server:
        results: list[tuple[str, list[float] | str]] = [
            ("EnvClient (direct)", env_client(server.url, row, call, args.calls)),
            ("prove.integrations.turn.Turn", core(server.url, row, call, args.calls)),
        ]
        for mod in adapters():
            why = mod.available()
            results.append((mod.FRAMEWORK, why if why else mod.measure(server.url, row, call, args.calls)))
    base = statistics.median(results[0][1])  # type: ignore[arg-type]
    print("| path | median ms/call | p90 ms/call | overhead vs EnvClient (median) |")
    print("|---|---|---|---|")
    for name, seconds in results:
        if isinstance(seconds, str):
            print(f"| {name} | not run: {seconds} | | |")
            continue
        qs = statistics.quantiles(seconds, n=10)
        med = statistics.median(seconds)
        print(f"| {name} | {med * 1e3:.2f} | {qs[-1] * 1e3:.2f} | {(med - base) * 1e3:+.2f} ms |")


if __name__ == "__main__":
    main()
