"""Tool chains of 2-5 steps drawn from the dependency graph, seeded, spread over tools and servers.

    chains = sample_chains(graph, n=300, seed=7); report = coverage_report(graph, chains)

A chain is a simple path along edges (each step explicit or implicit), starting at an entry tool
(`prove.graph.graph.is_entry`). Servers take turns; within a server, start tools and next steps are
drawn with weight 1 / (1 + times used so far), so rarely used tools catch up. Everything is sorted
before it is drawn and randomness comes from one `random.Random(seed)`: a seed gives the same chains.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd

__all__ = ["Chain", "sample_chains", "coverage_report", "save_chains", "load_chains"]

_PREFER = {"explicit": 0, "implicit": 1}


@dataclass(frozen=True)
class Chain:
    """Tools in call order and, per step, how step i+1 depends on step i."""

    server: str
    tools: tuple[str, ...]
    relations: tuple[str, ...]
    arguments: tuple[str, ...]  # "" for implicit steps

    def __len__(self) -> int:
        return len(self.tools)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "length": len(self.tools)}


def _step(g: nx.MultiDiGraph, a: str, b: str, relations: Sequence[str]) -> tuple[str, str] | None:
    found = sorted((_PREFER.get(d["relation"], 9), d["classifier"], d["relation"], d["argument"])
                   for d in g.get_edge_data(a, b, default={}).values() if d["relation"] in relations)
    return (found[0][2], found[0][3]) if found else None


def _pick(rng: random.Random, options: list[str], used: Counter[str]) -> str:
    return rng.choices(options, weights=[1.0 / (1 + used[o]) for o in options])[0]


def sample_chains(
    g: nx.MultiDiGraph,
    n: int,
    seed: int = 0,
    min_len: int = 2,
    max_len: int = 5,
    relations: Sequence[str] = ("explicit", "implicit"),
    servers: Iterable[str] | None = None,
    max_tries: int = 50,
) -> list[Chain]:
    """Up to `n` distinct chains (fewer only when the graph has no more to give)."""
    if not 2 <= min_len <= max_len:
        raise ValueError(f"need 2 <= min_len <= max_len, got {min_len}, {max_len}")
    rng = random.Random(seed)
    succ: dict[str, list[str]] = {
        a: sorted({b for b in g.successors(a) if _step(g, a, b, relations)}) for a in sorted(g)
    }
    starts: dict[str, list[str]] = {}
    for t in sorted(g):
        d = g.nodes[t]
        if d.get("entry") and succ[t]:
            starts.setdefault(d["server"], []).append(t)
    order = sorted(starts) if servers is None else [s for s in sorted(servers) if s in starts]
    used: Counter[str] = Counter()
    seen: set[tuple[str, ...]] = set()
    chains: list[Chain] = []
    failures = 0
    turn = 0
    while len(chains) < n and order and failures < max_tries * max(n, 1):
        server = order[turn % len(order)]
        turn += 1
        target = rng.randint(min_len, max_len)
        path = [_pick(rng, starts[server], used)]
        while len(path) < target:
            options = [b for b in succ[path[-1]] if b not in path]
            if not options:
                break
            path.append(_pick(rng, options, used))
        key = tuple(path)
        if len(path) < min_len or key in seen:
            failures += 1
            continue
        seen.add(key)
        steps = [_step(g, a, b, relations) for a, b in zip(path, path[1:], strict=False)]
        chains.append(Chain(server, key, tuple(s[0] for s in steps if s),
                            tuple(s[1] for s in steps if s)))
        used.update(path)
    return chains


def coverage_report(g: nx.MultiDiGraph, chains: Sequence[Chain], top: int = 10) -> dict[str, Any]:
    """Share of tools in at least one chain, chain-length histogram, most repeated tools, per server."""
    counts = Counter(t for c in chains for t in c.tools)
    tools = sorted(g)
    per_server = []
    for s in sorted({g.nodes[t]["server"] for t in tools}):
        mine = [t for t in tools if g.nodes[t]["server"] == s]
        per_server.append({"server": s, "tools": len(mine),
                           "covered": sum(1 for t in mine if counts[t]),
                           "chains": sum(1 for c in chains if c.server == s)})
    table = pd.DataFrame(per_server)
    if len(table):
        table["coverage"] = table.covered / table.tools
    return {
        "chains": len(chains),
        "tools": len(tools),
        "tools_covered": sum(1 for t in tools if counts[t]),
        "coverage": (sum(1 for t in tools if counts[t]) / len(tools)) if tools else 0.0,
        "length_histogram": dict(sorted(Counter(len(c) for c in chains).items())),
        "relations": dict(sorted(Counter(r for c in chains for r in c.relations).items())),
        "top_tools": counts.most_common(top),
        "per_server": table,
    }


def save_chains(chains: Sequence[Chain], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c.to_dict(), sort_keys=True) + "\n" for c in chains))
    return path


def load_chains(path: str | Path) -> list[Chain]:
    out = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(Chain(row["server"], tuple(row["tools"]), tuple(row["relations"]),
                             tuple(row["arguments"])))
    return out
