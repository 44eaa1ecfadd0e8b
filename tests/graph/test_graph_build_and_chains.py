"""Graph building, plain-file round trip, chain sampling and coverage (pytest tests/graph)."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from prove.env.registry import Registry
from prove.graph import (
    build_graph,
    coverage_report,
    edge_counts,
    edge_table,
    load_chains,
    load_graph,
    sample_chains,
    save_chains,
    save_graph,
)
from prove.graph.build import main

SERVERS = ["banking", "flights", "shop"]


@pytest.fixture(scope="module")
def graph(registry: Registry) -> nx.MultiDiGraph:
    if any(s not in registry.servers for s in SERVERS):
        pytest.skip("banking/flights/shop are not loaded")
    return build_graph("schema", servers=SERVERS, registry=registry)


def _snapshot(g: nx.MultiDiGraph) -> tuple:
    nodes = sorted((n, tuple(sorted(d.items()))) for n, d in g.nodes(data=True))
    edges = sorted((a, b, k, tuple(sorted(d.items()))) for a, b, k, d in g.edges(keys=True, data=True))
    return nodes, edges, sorted((k, str(v)) for k, v in g.graph.items())


def test_graph_covers_every_tool_and_edges_are_labelled(graph: nx.MultiDiGraph, registry: Registry) -> None:
    assert set(graph) == {t.name for s in SERVERS for t in registry.server(s).tools}
    for a, b, d in graph.edges(data=True):
        assert graph.nodes[a]["server"] == graph.nodes[b]["server"]
        assert d["relation"] in ("explicit", "implicit") and d["classifier"] == "schema"
        assert (d["argument"] in registry.tool(b).params) == (d["relation"] == "explicit")
    counts = edge_counts(graph)
    assert counts.edges.sum() == graph.number_of_edges() == len(edge_table(graph))


def test_round_trip_is_exact(graph: nx.MultiDiGraph, tmp_path: Path) -> None:
    path = save_graph(graph, tmp_path / "g.json")
    again = load_graph(path)
    assert isinstance(again, nx.MultiDiGraph)
    assert _snapshot(again) == _snapshot(graph)
    assert save_graph(again, tmp_path / "g2.json").read_bytes() == path.read_bytes()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"graph": {}, "nodes": [], "edges": []}))
    with pytest.raises(ValueError, match="not a PROVE tool graph"):
        load_graph(bad)


def test_chains_follow_edges_and_are_seeded(graph: nx.MultiDiGraph, tmp_path: Path) -> None:
    chains = sample_chains(graph, 60, seed=7)
    assert chains == sample_chains(graph, 60, seed=7)
    assert chains != sample_chains(graph, 60, seed=8)
    assert len(chains) == 60 and len({c.tools for c in chains}) == 60
    for c in chains:
        assert 2 <= len(c) <= 5 and len(set(c.tools)) == len(c)
        assert graph.nodes[c.tools[0]]["entry"] and set(c.servers) == {c.server}
        assert len(c.relations) == len(c) - 1 and all(c.relations)  # every step is an edge
        for e in c.edges:  # every edge among the members, as the graph has it
            data = graph.get_edge_data(c.tools[e.source], c.tools[e.target])
            assert data and any(d["relation"] == e.relation and d["argument"] == (e.argument or "")
                                and d["field"] == (e.field or "") for d in data.values())
            assert (e.relation == "explicit") == bool(e.argument and e.field and e.kind)
        assert len(c.edges) == sum(1 for j in range(len(c)) for i in range(j)
                                   if graph.has_edge(c.tools[i], c.tools[j]))
    assert {c.server for c in chains} == set(SERVERS)
    assert load_chains(save_chains(chains, tmp_path / "c.jsonl")) == chains


def test_coverage_report(graph: nx.MultiDiGraph) -> None:
    chains = sample_chains(graph, 90, seed=1)
    rep = coverage_report(graph, chains)
    assert rep["chains"] == 90 and rep["tools"] == graph.number_of_nodes()
    assert rep["tools_covered"] == len({t for c in chains for t in c.tools})
    assert rep["coverage"] >= 0.9, "usage-weighted sampling should reach almost every tool"
    assert sum(rep["length_histogram"].values()) == 90
    assert set(rep["length_histogram"]) <= {2, 3, 4, 5}
    assert rep["per_server"].chains.sum() == 90
    assert rep["top_tools"][0][1] >= rep["top_tools"][-1][1]


def test_sampler_stops_when_the_graph_runs_out() -> None:
    g = nx.MultiDiGraph()
    g.add_node("a", server="s", entry=True)
    g.add_node("b", server="s", entry=False)
    g.add_edge("a", "b", key="schema", relation="explicit", argument="x", classifier="schema", reason="")
    chains = sample_chains(g, 10, seed=0)
    assert [c.tools for c in chains] == [("a", "b")]
    with pytest.raises(ValueError):
        sample_chains(g, 1, min_len=1)


def test_cli_writes_graph_and_edges(tmp_path: Path, registry: Registry, capsys: pytest.CaptureFixture) -> None:
    if "banking" not in registry.servers:
        pytest.skip("banking is not loaded")
    main(["--servers", "banking", "--out", str(tmp_path)])
    g = load_graph(tmp_path / "tool_graph.json")
    assert g.graph["servers"] == ["banking"] and (tmp_path / "edges.csv").is_file()
    assert "17 tools" in capsys.readouterr().out


def test_synthesis_draws_chains_from_the_graph_02_saved(tmp_path) -> None:
    """graph_chains(graph_file=...) uses the saved graph's edges (02's classifier's, the LLM's on the
    paper profile), not the schema classifier's: a schema graph saved and read back gives the same
    chains as building it; a graph with one edge left gives chains along that edge only."""
    import networkx as nx

    from prove.graph.build import build_graph
    from prove.graph.chains import graph_chains
    from prove.graph.graph import save_graph
    from prove.synth.pipeline import SynthConfig

    schema = build_graph("schema", servers=["banking"])
    saved = save_graph(schema, tmp_path / "schema.json")
    built_tools, built = graph_chains(40, 3, servers=["banking"])
    read_tools, read = graph_chains(40, 3, servers=["banking"], graph_file=saved)
    assert [c.to_dict() for c in read] == [c.to_dict() for c in built]
    assert read_tools.to_rows() == built_tools.to_rows()

    u, v, key, data = next(iter(schema.edges(keys=True, data=True)))
    one = nx.MultiDiGraph(**schema.graph)
    one.add_nodes_from(schema.nodes(data=True))
    one.add_edge(u, v, key=key, **data)
    _, chains = graph_chains(10, 3, servers=["banking"], graph_file=save_graph(one, tmp_path / "one.json"))
    assert chains and all(c.tools == (u, v) for c in chains)

    bad = nx.MultiDiGraph(**schema.graph)
    bad.add_node("no_such_tool_prove", server="nowhere")
    with pytest.raises(ValueError, match="no server declares"):
        graph_chains(5, 0, graph_file=save_graph(bad, tmp_path / "bad.json"))
    fields = SynthConfig(graph_file=str(saved)).data_fields()
    assert "graph_file" not in fields and len(fields["graph_sha256"]) == 64  # by content, not path
    assert "graph_sha256" not in SynthConfig().data_fields()


def test_a_size_capped_graph_judges_the_seeds_draw_of_pairs_and_nothing_else(
        graph: nx.MultiDiGraph, registry: Registry) -> None:
    """``graph.max_pairs`` (the rehearsal's cap on what the LLM judges): the same pairs for the same
    seed, in their own order; the graph has edges on those pairs only, the schema graph's edges there."""
    from prove.graph import sample_tool_pairs, tool_pairs

    pairs = tool_pairs(registry, SERVERS)
    drawn = sample_tool_pairs(pairs, 60, seed=7)
    assert len(drawn) == 60 and drawn == sample_tool_pairs(pairs, 60, seed=7)
    assert drawn != sample_tool_pairs(pairs, 60, seed=8)
    assert [pairs.index(p) for p in drawn] == sorted(pairs.index(p) for p in drawn)
    assert sample_tool_pairs(pairs, None) == pairs == sample_tool_pairs(pairs, len(pairs) + 1)
    with pytest.raises(ValueError, match="positive number of pairs or None"):
        sample_tool_pairs(pairs, 0)

    capped = build_graph("schema", servers=SERVERS, registry=registry, max_pairs=60, seed=7)
    keys = {(a.name, b.name) for a, b in drawn}
    edges = {(a, b) for a, b in capped.edges()}
    assert edges and edges <= keys
    assert edges == {(a, b) for a, b in graph.edges() if (a, b) in keys}
    assert capped.number_of_nodes() == graph.number_of_nodes()  # every tool stays a node
