"""Figures for notebooks/02_graph: edges per server, one server's graph, chain lengths.

    fig = draw_server_graph(graph, "flights"); fig.savefig("figures/graph_flights.png")
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import networkx as nx
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

__all__ = ["COLORS", "plot_edge_counts", "draw_server_graph", "plot_chain_lengths"]

COLORS = {"explicit": "#1f77b4", "implicit": "#ff7f0e", "read": "#d9ead3", "write": "#f4cccc"}


def plot_edge_counts(counts: pd.DataFrame) -> Figure:
    """Stacked bars: explicit and implicit edges per server."""
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(counts) + 2), 4))
    ax.bar(counts.server, counts.explicit, color=COLORS["explicit"], label="explicit")
    ax.bar(counts.server, counts.implicit, bottom=counts.explicit, color=COLORS["implicit"],
           label="implicit")
    ax.set_ylabel("edges (ordered tool pairs)")
    ax.set_title("Dependency edges per server")
    ax.tick_params(axis="x", rotation=45)
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def _layout(nodes: list[str], g: nx.MultiDiGraph) -> dict[str, tuple[float, float]]:
    """A circle: reads on the left half, writes on the right, each group sorted by name."""
    reads = sorted(n for n in nodes if g.nodes[n]["kind"] == "read")
    writes = sorted(n for n in nodes if g.nodes[n]["kind"] == "write")
    pos: dict[str, tuple[float, float]] = {}
    for group, lo, hi in ((reads, 100.0, 260.0), (writes, 80.0, -80.0)):
        for i, n in enumerate(group):
            angle = math.radians(lo + (hi - lo) * (i + 0.5) / len(group))
            pos[n] = (math.cos(angle), math.sin(angle))
    return pos


def draw_server_graph(g: nx.MultiDiGraph, server: str) -> Figure:
    """Reads on the left arc, writes on the right; blue = explicit (A's result feeds B), orange
    dashed = implicit (A changes state B reads). Edges curve so both directions stay visible."""
    nodes = sorted(n for n, d in g.nodes(data=True) if d["server"] == server)
    if not nodes:
        raise ValueError(f"no tools of server {server!r} in the graph")
    sub = g.subgraph(nodes)
    pos = _layout(nodes, g)
    fig, ax = plt.subplots(figsize=(12, 11))
    for rel, style in (("implicit", "dashed"), ("explicit", "solid")):
        edges = sorted({(a, b) for a, b, d in sub.edges(data=True) if d["relation"] == rel})
        nx.draw_networkx_edges(sub, pos, edgelist=edges, ax=ax, edge_color=COLORS[rel], style=style,
                               alpha=0.6, width=1.1, arrowsize=11, node_size=260,
                               connectionstyle="arc3,rad=0.1")
    for kind in ("read", "write"):
        group = [n for n in nodes if g.nodes[n]["kind"] == kind]
        nx.draw_networkx_nodes(sub, pos, nodelist=group, ax=ax, node_color=COLORS[kind],
                               node_size=260, edgecolors="#444444")
    for n, (x, y) in pos.items():
        ax.text(1.09 * x, 1.09 * y, n, fontsize=10, va="center",
                ha="left" if x >= 0 else "right")
    ax.legend(handles=[
        Line2D([0], [0], color=COLORS["explicit"], label="explicit: result feeds an argument"),
        Line2D([0], [0], color=COLORS["implicit"], ls="--", label="implicit: write changes what B reads"),
        Line2D([0], [0], marker="o", ls="", color=COLORS["read"], markeredgecolor="#444", ms=10,
               label="read tool"),
        Line2D([0], [0], marker="o", ls="", color=COLORS["write"], markeredgecolor="#444", ms=10,
               label="write tool"),
    ], loc="lower center", bbox_to_anchor=(0.5, -0.06), ncol=2, frameon=False, fontsize=10)
    n_ex = sum(1 for *_, d in sub.edges(data=True) if d["relation"] == "explicit")
    ax.set_title(f"{server}: {len(nodes)} tools, {n_ex} explicit and "
                 f"{sub.number_of_edges() - n_ex} implicit edges", fontsize=13)
    ax.set_xlim(-2.0, 2.0)
    ax.set_ylim(-1.2, 1.2)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout()
    return fig


def plot_chain_lengths(report: Mapping[str, Any]) -> Figure:
    """Bar chart of chain lengths from `coverage_report`."""
    hist = report["length_histogram"]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    lengths = list(range(2, 6))
    bars = ax.bar([str(n) for n in lengths], [hist.get(n, 0) for n in lengths], color="#4c72b0")
    ax.bar_label(bars)
    ax.margins(y=0.15)
    ax.set_xlabel("tools in chain")
    ax.set_ylabel("chains")
    ax.set_title(f"{report['chains']} chains; {report['coverage']:.0%} of tools covered")
    fig.tight_layout()
    return fig
