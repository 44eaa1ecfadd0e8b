"""The tool dependency graph: a networkx MultiDiGraph over all tools, saved as plain node-link JSON.

    g = tool_graph(registry, judgements); save_graph(g, "results/graph/tool_graph.json")
    g2 = load_graph("results/graph/tool_graph.json")        # same nodes, edges and attributes

Nodes are tools (server, family, read/write, entry = a chain may start there). An edge A -> B carries
relation (explicit | implicit); for an explicit edge the declared join: argument (the parameter of B
that A feeds), field (the result field of A) and kind (the entity kind both declare), "" when not
known; the classifier that proposed it (also the edge key, so two classifiers' graphs can be
merged) and a reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd

from prove.env.registry import Registry
from prove.env.tool import ToolSpec
from prove.graph.features import parameters
from prove.graph.relations import Judgement

__all__ = ["GRAPH_FORMAT", "is_entry", "tool_graph", "save_graph", "load_graph", "edge_table",
           "edge_counts"]

GRAPH_FORMAT = "prove-tool-graph/1"


def is_entry(spec: ToolSpec) -> bool:
    """Can a chain start here: a read (it only looks at state), or a write whose required
    inputs a user can supply (no declared entity id that must come from an earlier result)."""
    if not spec.write:
        return True
    return not any(p.required and p.identifier for p in parameters(spec).values())


def tool_graph(registry: Registry, judgements: Iterable[Judgement],
               servers: Iterable[str] | None = None) -> nx.MultiDiGraph:
    """Nodes for every tool of `servers` (default: all), an edge per non-"none" judgement."""
    names = sorted(registry.servers) if servers is None else sorted(servers)
    g = nx.MultiDiGraph(format=GRAPH_FORMAT, servers=names)
    for server in names:
        spec = registry.server(server)
        for t in spec.tools:
            g.add_node(t.name, server=server, family=spec.family, kind="write" if t.write else "read",
                       entry=is_entry(t), n_params=len(t.params))
    classifiers: set[str] = set()
    for j in sorted(judgements, key=lambda j: (j.server, j.source, j.target, j.classifier)):
        if j.relation == "none" or j.source not in g or j.target not in g:
            continue
        classifiers.add(j.classifier)
        g.add_edge(j.source, j.target, key=j.classifier, relation=j.relation,
                   argument=j.argument or "", field=j.field or "", kind=j.kind or "",
                   classifier=j.classifier, reason=j.reason)
    g.graph["classifiers"] = sorted(classifiers)
    return g


def save_graph(g: nx.MultiDiGraph, path: str | Path) -> Path:
    """Write node-link JSON (sorted, so the same graph gives the same bytes)."""
    data = nx.node_link_data(g, edges="edges")
    data["nodes"] = sorted(data["nodes"], key=lambda n: (n.get("server", ""), n["id"]))
    data["edges"] = sorted(data["edges"], key=lambda e: (e["source"], e["target"], str(e["key"])))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return path


def load_graph(path: str | Path) -> nx.MultiDiGraph:
    data: dict[str, Any] = json.loads(Path(path).read_text())
    if data.get("graph", {}).get("format") != GRAPH_FORMAT:
        raise ValueError(f"{path} is not a PROVE tool graph (format {GRAPH_FORMAT})")
    return nx.node_link_graph(data, directed=True, multigraph=True, edges="edges")


def edge_table(g: nx.MultiDiGraph) -> pd.DataFrame:
    """One row per edge: server, source, target, relation, argument, field, kind, classifier, reason."""
    keys = ("relation", "argument", "field", "kind", "classifier", "reason")
    rows = [{"server": g.nodes[a]["server"], "source": a, "target": b,
             **{k: d.get(k, "") for k in keys}} for a, b, d in g.edges(data=True)]
    cols = ["server", "source", "target", *keys]
    return pd.DataFrame(rows, columns=cols).sort_values(["server", "source", "target"],
                                                        ignore_index=True)


def edge_counts(g: nx.MultiDiGraph) -> pd.DataFrame:
    """Edges per server and relation, with tool counts and density (edges / ordered pairs)."""
    edges = edge_table(g)
    servers = g.graph.get("servers") or sorted({d["server"] for _, d in g.nodes(data=True)})
    rows = []
    for s in servers:
        n = sum(1 for _, d in g.nodes(data=True) if d["server"] == s)
        sub = edges[edges.server == s]
        ex, im = int((sub.relation == "explicit").sum()), int((sub.relation == "implicit").sum())
        rows.append({"server": s, "tools": n, "explicit": ex, "implicit": im, "edges": ex + im,
                     "density": (ex + im) / (n * (n - 1)) if n > 1 else 0.0})
    return pd.DataFrame(rows)
