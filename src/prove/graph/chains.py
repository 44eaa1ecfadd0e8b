"""Tool chains: the one Chain/Edge model, the ToolGraph synthesis looks edges up in, the samplers.

    chains = sample_chains(graph, n=300, seed=7); report = coverage_report(graph, chains)
    tools, chains = graph_chains(500, seed=0)   # what synthesis draws from: ToolGraph + chains

A `Chain` is tools in call order, the server of each, and every `Edge` between two of its members
(same server only; positions, not names). An explicit edge is the declared join that feeds the
later tool: the earlier tool's result `field`, the later tool's parameter (`argument`) and the
entity `kind` both declare (`prove.graph.features`). The join travels from the classifier's
judgement to the graph's edge attributes to the chain: nothing is parsed back out of a reason.

Samplers, both seeded (everything is sorted before it is drawn, randomness comes from one stream):
- `sample_chains(graph, n, seed)`: simple paths along the networkx graph's edges from an entry tool
  (`prove.graph.graph.is_entry`); servers take turns; start tools and next steps are drawn with
  weight 1 / (1 + times used so far), so rarely used tools catch up.
- `walk_chains(tool_graph, n, seed)`: walks that follow explicit edges from any earlier member
  (weighted to the last) and implicit edges from the last one, a share joining two servers.
`compose_chains` turns a share of single-server chains into two-server ones; `graph_chains` is
what synthesis calls: the schema classifier's graph, its chains, the two-server share.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd

from prove.env.registry import Registry, load_registry
from prove.graph.features import join_for, tokens

__all__ = ["Edge", "Chain", "ToolGraph", "LENGTH_WEIGHTS", "sample_chains", "walk_chains",
           "compose_chains", "graph_chains", "coverage_report", "save_chains", "load_chains"]

LENGTH_WEIGHTS: dict[int, float] = {2: 0.30, 3: 0.35, 4: 0.20, 5: 0.15}
"""Share of walked chains by length (the paper samples 2-5 tools)."""

RELATIONS = ("explicit", "implicit")
_PREFER = {"explicit": 0, "implicit": 1}
_EDGE_KEYS = ("source", "target", "relation", "argument", "field", "kind")


@dataclass(frozen=True)
class Edge:
    """`source` -> `target` (positions in a chain). An explicit edge is a declared join: the
    source's result `field` feeds the target's parameter `argument`, both of entity `kind`."""

    source: int
    target: int
    relation: str  # "explicit" | "implicit"
    argument: str | None = None  # the parameter of the target (explicit only)
    field: str | None = None  # the result field of the source, e.g. "accounts[].account_id"
    kind: str | None = None  # the entity kind both declare, e.g. "account"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any] | Sequence[Any], position: Mapping[str, int]) -> Edge:
        """From `to_dict`'s mapping or a (source, target, relation, argument, field, kind) list;
        endpoints may be positions or tool names (looked up in `position`)."""
        if isinstance(raw, Mapping):
            values = [raw.get(k) for k in _EDGE_KEYS]
            values[2] = values[2] or "explicit"
        else:
            values = (list(raw) + [None] * 6)[:6]
        s, t, rel, arg, fld, kind = values
        s = position[s] if isinstance(s, str) else int(s)
        t = position[t] if isinstance(t, str) else int(t)
        return cls(s, t, str(rel), arg or None, fld or None, kind or None)


@dataclass(frozen=True)
class Chain:
    """Ordered tools with their servers and the edges among them (sorted by source, target);
    `segments` are the (start, stop) of each server's run of tools."""

    tools: tuple[str, ...]
    servers: tuple[str, ...]  # the server of each tool, same length as tools
    edges: tuple[Edge, ...] = ()
    segments: tuple[tuple[int, int], ...] = field(default=())

    def __post_init__(self) -> None:
        if len(self.tools) != len(self.servers) or not self.tools:
            raise ValueError("a chain needs at least one tool and one server per tool")
        object.__setattr__(self, "edges", tuple(sorted(self.edges, key=lambda e: (e.source, e.target))))
        if not self.segments:
            bounds, start = [], 0
            for i in range(1, len(self.tools) + 1):
                if i == len(self.tools) or self.servers[i] != self.servers[start]:
                    bounds.append((start, i))
                    start = i
            object.__setattr__(self, "segments", tuple(bounds))

    def __len__(self) -> int:
        return len(self.tools)

    @property
    def chain_id(self) -> str:
        return "|".join(f"{self.servers[a]}:{'>'.join(self.tools[a:b])}" for a, b in self.segments)

    @property
    def server(self) -> str:
        """The server the chain starts on (its only one, unless it joins two)."""
        return self.servers[0]

    @property
    def server_set(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.servers)))

    def step(self, i: int) -> Edge | None:
        """The edge from tool i to tool i+1 (None where the chain moves to another server)."""
        return next((e for e in self.edges if e.source == i and e.target == i + 1), None)

    @property
    def relations(self) -> tuple[str, ...]:
        """The relation of each consecutive step ("" where the chain changes server)."""
        return tuple(e.relation if (e := self.step(i)) else "" for i in range(len(self.tools) - 1))

    def feeds(self, target: int) -> dict[str, Edge]:
        """The explicit edges into `target`, one per argument (the latest source wins)."""
        out: dict[str, Edge] = {}
        for e in self.edges:
            if e.target == target and e.relation == "explicit" and e.argument:
                out[e.argument] = e
        return out

    def consumers(self, source: int) -> list[Edge]:
        return [e for e in self.edges if e.source == source and e.relation == "explicit"]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.chain_id, "tools": list(self.tools), "servers": list(self.servers),
                "edges": [e.to_dict() for e in self.edges],
                "segments": [list(s) for s in self.segments]}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], registry: Registry | None = None) -> Chain:
        """A chain from `to_dict`'s mapping, or any `{"tools", "edges": [...]}` (edges as mappings
        or lists, endpoints as positions or tool names); servers default to the registry's."""
        tools = tuple(data["tools"])
        servers = data.get("servers")
        if servers is None:
            reg = registry or load_registry()
            servers = [reg.tool(t).server for t in tools]
        pos = {t: i for i, t in enumerate(tools)}
        edges = tuple(Edge.from_raw(raw, pos) for raw in data.get("edges", ()))
        segments = tuple((int(a), int(b)) for a, b in data.get("segments", ()))
        return cls(tools, tuple(servers), edges, segments)


class ToolGraph:
    """The dependency graph as synthesis looks it up: (source tool, target tool) -> the Edge of
    the two-tool chain (source 0, target 1), within each server; explicit wins over implicit.

    An explicit edge given without its field (an LLM's answer, a hand-written row) gets the declared
    join of its argument (`prove.graph.features.join_for`)."""

    def __init__(self, registry: Registry, edges: Iterable[Mapping[str, Any] | Sequence[Any]]) -> None:
        self.registry = registry
        self.edges: dict[tuple[str, str], Edge] = {}
        for raw in edges:
            if isinstance(raw, Mapping):
                s, t = raw["source"], raw["target"]
                e = Edge.from_raw({**raw, "source": 0, "target": 1}, {})
            else:
                s, t = raw[0], raw[1]
                e = Edge.from_raw([0, 1, *list(raw)[2:]], {})
            if e.relation not in RELATIONS or s not in registry.tools or t not in registry.tools:
                continue
            if e.relation == "explicit" and e.argument and e.field is None:
                join = join_for(registry.tool(s), registry.tool(t), e.argument)
                if join is not None:
                    e = replace(e, field=join.field, kind=join.kind)
            old = self.edges.get((s, t))
            if old is None or (old.relation == "implicit" and e.relation == "explicit"):
                self.edges[(s, t)] = e
        self.explicit: dict[str, list[str]] = {}
        self.implicit: dict[str, list[str]] = {}
        for (s, t), e in sorted(self.edges.items()):
            (self.explicit if e.relation == "explicit" else self.implicit).setdefault(s, []).append(t)

    @classmethod
    def build(cls, registry: Registry | None = None) -> ToolGraph:
        """Edges from the deterministic schema classifier over every same-server pair."""
        from prove.graph.relations import tool_pairs
        from prove.graph.schema_classifier import SchemaClassifier

        reg = registry or load_registry()
        clf = SchemaClassifier()
        for spec in reg.servers.values():
            clf.use_server(spec)
        return cls(reg, [(j.source, j.target, j.relation, j.argument, j.field, j.kind)
                         for j in clf.classify_sync(tool_pairs(reg))])

    @classmethod
    def from_edges(cls, edges: Iterable[Mapping[str, Any] | Sequence[Any]],
                   registry: Registry | None = None) -> ToolGraph:
        """From `(source, target, relation, argument[, field, kind])` rows or mappings."""
        return cls(registry or load_registry(), edges)

    @classmethod
    def from_networkx(cls, graph: nx.MultiDiGraph, registry: Registry | None = None) -> ToolGraph:
        """From a graph `prove.graph.build_graph` returns (edge attributes relation, argument,
        field, kind)."""
        rows = [(s, t, d.get("relation"), d.get("argument"), d.get("field"), d.get("kind"))
                for s, t, _, d in sorted(graph.edges(keys=True, data=True), key=_edge_order)]
        return cls(registry or load_registry(), rows)

    def to_rows(self) -> list[tuple[str, str, str, str | None, str | None, str | None]]:
        return [(s, t, e.relation, e.argument, e.field, e.kind) for (s, t), e in sorted(self.edges.items())]

    def edge(self, source: str, target: str) -> Edge | None:
        """The edge source -> target as the two-tool chain's (positions 0 -> 1), or None."""
        return self.edges.get((source, target))

    def chain_edges(self, tools: Sequence[str], servers: Sequence[str]) -> tuple[Edge, ...]:
        """Every edge between two members of a chain (same server), by position."""
        out = []
        for j in range(len(tools)):
            for i in range(j):
                found = self.edges.get((tools[i], tools[j])) if servers[i] == servers[j] else None
                if found is not None:
                    out.append(replace(found, source=i, target=j))
        return tuple(out)

    def chain(self, tools: Sequence[str], servers: Sequence[str] | None = None) -> Chain:
        """The chain of `tools` with every edge of this graph among them."""
        srv = tuple(servers) if servers is not None else tuple(self.registry.tool(t).server for t in tools)
        return Chain(tuple(tools), srv, self.chain_edges(tools, srv))

    def alternatives(self, chain: Chain, position: int, exclude: Iterable[str] = ()) -> list[str]:
        """Read tools that could stand in for the read at chain step `position`: same server,
        feeding the same argument to every later step that step feeds (best name overlap first).
        Writes have no stand-in: a write that fails is a failed request, not a lookup to reroute."""
        tool = chain.tools[position]
        spec = self.registry.tool(tool)
        consumers = [e for e in chain.consumers(position) if e.argument]
        if spec.write or not consumers:
            return []
        skip = set(chain.tools) | set(exclude)
        own = set(tokens(tool))
        scored = []
        for cand in self.registry.server(spec.server).tools:
            if cand.name in skip or cand.write:
                continue
            if all((got := self.edges.get((cand.name, chain.tools[e.target]))) is not None
                   and got.relation == "explicit" and got.argument == e.argument for e in consumers):
                scored.append((-len(own & set(tokens(cand.name))), cand.name))
        return [name for _, name in sorted(scored)[:3]]


# -- sampling from the networkx graph -----------------------------------------------------------

def _edge_order(e: tuple[str, str, Any, Mapping[str, Any]]) -> tuple:
    """Explicit before implicit, then by classifier (the edge key), for a stable first choice."""
    s, t, key, d = e
    return s, t, _PREFER.get(d.get("relation"), 9), str(key)


def _nx_edge(g: nx.MultiDiGraph, a: str, b: str, relations: Sequence[str]) -> dict[str, Any] | None:
    found = sorted(((a, b, k, d) for k, d in g.get_edge_data(a, b, default={}).items()
                    if d["relation"] in relations), key=_edge_order)
    return found[0][3] if found else None


def _nx_chain(g: nx.MultiDiGraph, path: Sequence[str], relations: Sequence[str]) -> Chain:
    servers = tuple(g.nodes[t]["server"] for t in path)
    edges = []
    for j in range(len(path)):
        for i in range(j):
            d = _nx_edge(g, path[i], path[j], relations) if servers[i] == servers[j] else None
            if d is not None:
                edges.append(Edge(i, j, d["relation"], d.get("argument") or None,
                                  d.get("field") or None, d.get("kind") or None))
    return Chain(tuple(path), servers, tuple(edges))


def _pick(rng: random.Random, options: list[str], used: Counter[str]) -> str:
    return rng.choices(options, weights=[1.0 / (1 + used[o]) for o in options])[0]


def sample_chains(
    g: nx.MultiDiGraph,
    n: int,
    seed: int = 0,
    min_len: int = 2,
    max_len: int = 5,
    relations: Sequence[str] = RELATIONS,
    servers: Iterable[str] | None = None,
    max_tries: int = 50,
) -> list[Chain]:
    """Up to `n` distinct single-server chains (fewer only when the graph has no more to give);
    each consecutive step is an edge, and the chain holds every edge among its members."""
    if not 2 <= min_len <= max_len:
        raise ValueError(f"need 2 <= min_len <= max_len, got {min_len}, {max_len}")
    rng = random.Random(seed)
    succ: dict[str, list[str]] = {
        a: sorted({b for b in g.successors(a) if _nx_edge(g, a, b, relations)}) for a in sorted(g)
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
        chains.append(_nx_chain(g, path, relations))
        used.update(path)
    return chains


# -- walking the ToolGraph, two-server chains -----------------------------------------------------

def _rng(*parts: Any) -> random.Random:
    """The stream `prove.synth.records.derived_rng(*parts)` gives (same string, same draws), so
    the chains synthesis walks did not change when this code moved here from prove.synth."""
    return random.Random("prove-synth:" + ":".join(str(p) for p in parts))


def _walk(graph: ToolGraph, server: str, length: int, rng: random.Random) -> list[str]:
    starts = sorted(t.name for t in graph.registry.server(server).tools if graph.explicit.get(t.name))
    if not starts:
        return []
    chain = [rng.choice(starts)]
    while len(chain) < length:
        weights: dict[str, float] = {}
        for i, member in enumerate(chain):
            for dst in graph.explicit.get(member, ()):
                if dst not in chain:
                    weights[dst] = weights.get(dst, 0.0) + (3.0 if i == len(chain) - 1 else 1.0)
        for dst in graph.implicit.get(chain[-1], ()):
            if dst not in chain:
                weights[dst] = weights.get(dst, 0.0) + 1.0
        if not weights:
            break
        names = sorted(weights)
        chain.append(rng.choices(names, weights=[weights[n] for n in names])[0])
    return chain


def walk_chains(
    graph: ToolGraph,
    n: int,
    seed: int,
    *,
    min_len: int = 2,
    max_len: int = 5,
    multi_server_share: float = 0.15,
    servers: Sequence[str] | None = None,
) -> list[Chain]:
    """`n` distinct chains (fewer if the graph has fewer), deterministic for `seed`: walks that
    follow explicit edges from any earlier member (weighted to the last) and implicit edges from
    the last; a share joins walks on two servers (edges never cross servers)."""
    rng = _rng("chains", seed)
    names = sorted(servers or graph.registry.servers)
    lengths = [k for k in sorted(LENGTH_WEIGHTS) if min_len <= k <= max_len] or [min_len]
    weights = [LENGTH_WEIGHTS.get(k, 1.0) for k in lengths]
    out: dict[str, Chain] = {}
    attempts = 0
    while len(out) < n and attempts < 40 * n + 100:
        attempts += 1
        length = rng.choices(lengths, weights=weights)[0]
        first = rng.choice(names)
        if len(names) > 1 and length >= 3 and rng.random() < multi_server_share:
            second = rng.choice([s for s in names if s != first])
            split = rng.randrange(2, length) if length > 3 else 2
            a, b = _walk(graph, first, split, rng), _walk(graph, second, length - split, rng)
            if len(a) < 2 or not b:
                continue
            tools = a + b
            srv = [first] * len(a) + [second] * len(b)
        else:
            tools = _walk(graph, first, length, rng)
            srv = [first] * len(tools)
        if len(tools) < min_len:
            continue
        chain = graph.chain(tools, srv)
        out.setdefault(chain.chain_id, chain)
    return [out[k] for k in sorted(out)]


def compose_chains(chains: Sequence[Chain], graph: ToolGraph, share: float, seed: int,
                   max_len: int = 5) -> list[Chain]:
    """Replace a seeded `share` of single-server chains by two-server ones: the head of one
    chain (2+ tools) followed by the head of a chain on another server (one conversation that
    moves from one server to the next; edges never cross servers)."""
    rng = _rng("compose", seed)
    singles = [c for c in chains if len(c.segments) == 1 and len(c.tools) >= 2]
    out: dict[str, Chain] = {c.chain_id: c for c in chains}
    for _ in range(round(len(chains) * share)):
        a, b = rng.choice(singles), rng.choice(singles)
        if a.servers[0] == b.servers[0] or a.chain_id not in out:
            continue
        k = rng.randrange(2, min(len(a.tools), max_len - 1) + 1)
        m = rng.randrange(1, min(len(b.tools), max_len - k) + 1)
        out.pop(a.chain_id, None)
        joined = graph.chain(a.tools[:k] + b.tools[:m], a.servers[:k] + b.servers[:m])
        out[joined.chain_id] = joined
    return [out[k] for k in sorted(out)]


def graph_chains(n: int, seed: int, *, registry: Registry | None = None,
                 servers: Sequence[str] | None = None, multi_server_share: float = 0.15,
                 source: str = "graph", graph_file: str | Path | None = None) -> tuple[ToolGraph, list[Chain]]:
    """The tool graph and `n` chains for synthesis. `source`: "graph" = the graph and
    `sample_chains`, a share composed into two-server chains; "synth" = `walk_chains`; or a path
    to chains saved by `save_chains` (their edges re-read from the graph). The graph is
    `graph_file` (one `save_graph` wrote: 02's, from the profile's classifier) when given, else
    the schema classifier's, built here."""
    reg = registry or load_registry()
    names = sorted(servers) if servers else None
    if source == "synth":
        tools = ToolGraph.build(reg)
        return tools, walk_chains(tools, n, seed, multi_server_share=multi_server_share, servers=names)
    if graph_file is not None:
        from prove.graph.graph import load_graph

        nxg = load_graph(graph_file)
        unknown = sorted(t for t in nxg.nodes if t not in load_registry().tools)
        if unknown:
            raise ValueError(f"{graph_file} has tools no server declares ({unknown[:5]}): it was built "
                             "from other servers; rebuild it with 02 or leave graph_file unset")
        nxg = nxg.subgraph([t for t in nxg.nodes if t in reg.tools]).copy()  # the selected servers'
    else:
        from prove.graph.build import build_graph

        nxg = build_graph("schema", registry=reg, servers=names)
    tools = ToolGraph.from_networkx(nxg, reg)
    if source == "graph":
        base = sample_chains(nxg, n, seed, servers=names)
    else:
        base = [tools.chain(c.tools, c.servers) for c in load_chains(source, reg)
                if all(t in reg.tools for t in c.tools)]
    return tools, compose_chains(base, tools, multi_server_share, seed)


# -- reports and files -------------------------------------------------------------------------

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
        "relations": dict(sorted(Counter(r for c in chains for r in c.relations if r).items())),
        "top_tools": counts.most_common(top),
        "per_server": table,
    }


def save_chains(chains: Sequence[Chain], path: str | Path) -> Path:
    """One chain per line (`Chain.to_dict`, sorted keys)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c.to_dict(), sort_keys=True) + "\n" for c in chains))
    return path


def load_chains(path: str | Path, registry: Registry | None = None) -> list[Chain]:
    """Chains written by `save_chains` (or any JSONL of `Chain.from_mapping` mappings)."""
    return [Chain.from_mapping(json.loads(line), registry)
            for line in Path(path).read_text().splitlines() if line.strip()]
