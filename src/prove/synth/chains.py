"""Tool chains for synthesis: the `Chain` input type, the tool graph, adapters to prove.graph.

    graph, chains = graph_chains(n=500, seed=0)    # prove.graph's graph and chain sampler (default)
    graph, chains = graph_chains(500, 0, source="synth")   # this module's own walk sampler

A chain is an ordered list of tools (one or two servers) with the edges between them; an explicit
edge names the argument of the later tool that an earlier result feeds (and the result field).
`Chain.from_mapping` and `ToolGraph.from_edges` are the adapters for any other graph source: a
mapping `{"tools": [...], "edges": [{"source", "target", "relation", "argument"}]}` or an iterable
of `(source, target, relation, argument[, field])` tuples, so chains extracted by `prove.graph`
(or written by hand) drive the generator unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prove.env.registry import Registry, load_registry
from prove.graph.features import tokens
from prove.synth.records import derived_rng

__all__ = ["Edge", "Chain", "ToolGraph", "sample_chains", "graph_chains", "compose_chains",
           "LENGTH_WEIGHTS"]

LENGTH_WEIGHTS: dict[int, float] = {2: 0.30, 3: 0.35, 4: 0.20, 5: 0.15}
"""Share of chains by length (the paper samples 2-5 tools)."""

_FIELD = re.compile(r"returns (\S+), which")


@dataclass(frozen=True)
class Edge:
    """`source` -> `target` (positions in the chain); explicit edges name the fed argument."""

    source: int
    target: int
    relation: str  # "explicit" | "implicit"
    argument: str | None = None  # parameter of the target tool (explicit only)
    field: str | None = None  # result field of the source, e.g. "accounts[].account_id"

    def to_list(self) -> list[Any]:
        return [self.source, self.target, self.relation, self.argument, self.field]


@dataclass(frozen=True)
class Chain:
    """Ordered tools with their servers and edges; `segments` are the (start, stop) of each server."""

    tools: tuple[str, ...]
    servers: tuple[str, ...]  # the server of each tool, same length as tools
    edges: tuple[Edge, ...] = ()
    segments: tuple[tuple[int, int], ...] = field(default=())

    def __post_init__(self) -> None:
        if len(self.tools) != len(self.servers) or not self.tools:
            raise ValueError("a chain needs at least one tool and one server per tool")
        if not self.segments:
            bounds, start = [], 0
            for i in range(1, len(self.tools) + 1):
                if i == len(self.tools) or self.servers[i] != self.servers[start]:
                    bounds.append((start, i))
                    start = i
            object.__setattr__(self, "segments", tuple(bounds))

    @property
    def chain_id(self) -> str:
        return "|".join(f"{self.servers[a]}:{'>'.join(self.tools[a:b])}" for a, b in self.segments)

    @property
    def server_set(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.servers)))

    def feeds(self, target: int) -> dict[str, Edge]:
        """The explicit edges into `target`, one per argument (the latest source wins)."""
        out: dict[str, Edge] = {}
        for e in sorted(self.edges, key=lambda e: e.source):
            if e.target == target and e.relation == "explicit" and e.argument:
                out[e.argument] = e
        return out

    def consumers(self, source: int) -> list[Edge]:
        return [e for e in self.edges if e.source == source and e.relation == "explicit"]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.chain_id, "tools": list(self.tools), "servers": list(self.servers),
                "edges": [e.to_list() for e in self.edges],
                "segments": [list(s) for s in self.segments]}

    @classmethod
    def from_graph_chain(cls, chain: Any, graph: ToolGraph) -> Chain:
        """Adapter for `prove.graph.chains.Chain` (server, tools, relations, arguments): every
        edge between its members comes from `graph`, not only the consecutive ones."""
        tools = tuple(chain.tools)
        servers = tuple(graph.registry.tool(t).server for t in tools)
        return cls(tools, servers, graph.chain_edges(tools, servers))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], registry: Registry | None = None) -> Chain:
        """A chain from a dict: ours (`to_dict`) or `{"tools", "edges": [{source, target, ...}]}`.

        Edge endpoints may be positions or tool names; servers default to the registry's.
        """
        tools = tuple(data["tools"])
        servers = data.get("servers")
        if servers is None:
            reg = registry or load_registry()
            servers = [reg.tool(t).server for t in tools]
        pos = {t: i for i, t in enumerate(tools)}
        edges = []
        for raw in data.get("edges", ()):
            if isinstance(raw, Mapping):
                s, t = raw["source"], raw["target"]
                rel, arg, fld = raw.get("relation", "explicit"), raw.get("argument"), raw.get("field")
            else:
                s, t, rel, arg, fld = (list(raw) + [None] * 5)[:5]
            s, t = (pos[s] if isinstance(s, str) else int(s)), (pos[t] if isinstance(t, str) else int(t))
            edges.append(Edge(s, t, str(rel), arg, fld))
        segments = tuple(tuple(s) for s in data.get("segments", ()))
        return cls(tools, tuple(servers), tuple(sorted(edges, key=lambda e: (e.source, e.target))),
                   segments)  # type: ignore[arg-type]


class ToolGraph:
    """Directed tool graph: (source, target) -> (relation, argument, field), within each server."""

    def __init__(self, registry: Registry, edges: Iterable[Sequence[Any]]) -> None:
        self.registry = registry
        self.edges: dict[tuple[str, str], tuple[str, str | None, str | None]] = {}
        for raw in edges:
            s, t, rel, arg, fld = (list(raw) + [None] * 5)[:5]
            if rel not in ("explicit", "implicit") or s not in registry.tools or t not in registry.tools:
                continue
            old = self.edges.get((s, t))
            if old is None or (old[0] == "implicit" and rel == "explicit"):
                self.edges[(s, t)] = (rel, arg or None, fld)
        self.explicit: dict[str, list[str]] = {}
        self.implicit: dict[str, list[str]] = {}
        for (s, t), (rel, _, _) in sorted(self.edges.items()):
            (self.explicit if rel == "explicit" else self.implicit).setdefault(s, []).append(t)

    @classmethod
    def build(cls, registry: Registry | None = None) -> ToolGraph:
        """Edges from prove.graph's deterministic schema classifier over every same-server pair."""
        from prove.graph.relations import tool_pairs
        from prove.graph.schema_classifier import SchemaClassifier

        reg = registry or load_registry()
        clf = SchemaClassifier()
        for spec in reg.servers.values():
            clf.use_server(spec)
        rows = []
        for j in clf.classify_sync(tool_pairs(reg)):
            m = _FIELD.search(j.reason) if j.relation == "explicit" else None
            rows.append((j.source, j.target, j.relation, j.argument, m.group(1) if m else None))
        return cls(reg, rows)

    @classmethod
    def from_edges(cls, edges: Iterable[Sequence[Any]], registry: Registry | None = None) -> ToolGraph:
        """Adapter: `(source, target, relation, argument[, field])` tuples from any graph builder."""
        return cls(registry or load_registry(), edges)

    @classmethod
    def from_networkx(cls, graph: Any, registry: Registry | None = None) -> ToolGraph:
        """Adapter: a networkx (Multi)DiGraph with edge attributes `relation` and `argument`, as
        `prove.graph.build_graph` returns; the result field is read off the edge's `reason`."""
        rows = []
        for s, t, d in sorted(graph.edges(data=True), key=lambda e: (e[0], e[1], str(e[2]))):
            m = _FIELD.search(str(d.get("reason", "")))
            rows.append((s, t, d.get("relation", d.get("kind")), d.get("argument") or None,
                         d.get("field") or (m.group(1) if m else None)))
        return cls(registry or load_registry(), rows)

    def to_rows(self) -> list[tuple[str, str, str, str | None, str | None]]:
        return [(s, t, *v) for (s, t), v in sorted(self.edges.items())]

    def edge(self, source: str, target: str) -> tuple[str, str | None, str | None] | None:
        return self.edges.get((source, target))

    def chain_edges(self, tools: Sequence[str], servers: Sequence[str]) -> tuple[Edge, ...]:
        out = []
        for j in range(len(tools)):
            for i in range(j):
                found = self.edges.get((tools[i], tools[j])) if servers[i] == servers[j] else None
                if found is not None:
                    out.append(Edge(i, j, found[0], found[1], found[2]))
        return tuple(out)

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
                   and got[0] == "explicit" and got[1] == e.argument for e in consumers):
                scored.append((-len(own & set(tokens(cand.name))), cand.name))
        return [name for _, name in sorted(scored)[:3]]


def _walk(graph: ToolGraph, server: str, length: int, rng: Any) -> list[str]:
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


def sample_chains(
    graph: ToolGraph,
    n: int,
    seed: int,
    *,
    min_len: int = 2,
    max_len: int = 5,
    multi_server_share: float = 0.15,
    servers: Sequence[str] | None = None,
) -> list[Chain]:
    """`n` distinct chains (fewer if the graph has fewer), deterministic for `seed`.

    Walks follow explicit edges from any earlier member (weighted to the last) and implicit edges
    from the last write. A share of chains joins walks on two servers (one conversation, two
    servers); edges never cross servers.
    """
    rng = derived_rng("chains", seed)
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
        chain = Chain(tuple(tools), tuple(srv), graph.chain_edges(tools, srv))
        out.setdefault(chain.chain_id, chain)
    return [out[k] for k in sorted(out)]


def compose_chains(chains: Sequence[Chain], graph: ToolGraph, share: float, seed: int,
                   max_len: int = 5) -> list[Chain]:
    """Replace a seeded `share` of single-server chains by two-server ones: the head of one
    chain (2+ tools) followed by the head of a chain on another server (one conversation that
    moves from one server to the next; edges never cross servers)."""
    rng = derived_rng("compose", seed)
    singles = [c for c in chains if len(c.segments) == 1 and len(c.tools) >= 2]
    out: dict[str, Chain] = {c.chain_id: c for c in chains}
    for _ in range(round(len(chains) * share)):
        a, b = rng.choice(singles), rng.choice(singles)
        if a.servers[0] == b.servers[0] or a.chain_id not in out:
            continue
        k = rng.randrange(2, min(len(a.tools), max_len - 1) + 1)
        m = rng.randrange(1, min(len(b.tools), max_len - k) + 1)
        tools = a.tools[:k] + b.tools[:m]
        servers = a.servers[:k] + b.servers[:m]
        out.pop(a.chain_id, None)
        joined = Chain(tools, servers, graph.chain_edges(tools, servers))
        out[joined.chain_id] = joined
    return [out[k] for k in sorted(out)]


def graph_chains(n: int, seed: int, *, registry: Registry | None = None,
                 servers: Sequence[str] | None = None, multi_server_share: float = 0.15,
                 source: str = "graph") -> tuple[ToolGraph, list[Chain]]:
    """The tool graph and `n` chains. `source`: "graph" = prove.graph's schema-classifier graph and
    its chain sampler (the dependency-graph issue's API), "synth" = this module's sampler, or a
    path to chains saved by `prove.graph.save_chains`."""
    reg = registry or load_registry()
    names = sorted(servers) if servers else None
    if source == "synth":
        graph = ToolGraph.build(reg)
        return graph, sample_chains(graph, n, seed, multi_server_share=multi_server_share,
                                    servers=names)
    from prove.graph import build_graph, load_chains
    from prove.graph import sample_chains as graph_sample

    nxg = build_graph("schema", registry=reg, servers=names)
    graph = ToolGraph.from_networkx(nxg, reg)
    base = load_chains(source) if source != "graph" else graph_sample(nxg, n, seed, servers=names)
    chains = [Chain.from_graph_chain(c, graph) for c in base if all(t in reg.tools for t in c.tools)]
    return graph, compose_chains(chains, graph, multi_server_share, seed)
