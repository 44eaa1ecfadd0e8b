"""Speed and scale of the tool graph: schema classification, graph round trip, chain sampling.

    PROVE_SERVERS=... python benchmarks/bench_graph.py [--chains 20000]

Prints pairs/s of the schema classifier, the graph's size and save/load time, and chains/s with
the coverage reached at the paper's chain count. Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from prove.env import load_registry
from prove.graph import (
    SchemaClassifier,
    coverage_report,
    load_graph,
    sample_chains,
    save_graph,
    tool_graph,
    tool_pairs,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, default=20000, help="chains to sample (paper: 20000)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    reg = load_registry()
    pairs = tool_pairs(reg)
    t = time.perf_counter()
    judgements = SchemaClassifier().classify_sync(pairs)
    dt = time.perf_counter() - t
    print(f"schema classifier: {len(pairs)} pairs over {len(reg.servers)} servers in {dt:.2f}s "
          f"({len(pairs) / dt:,.0f} pairs/s)")
    g = tool_graph(reg, judgements)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        path = save_graph(g, Path(tmp) / "g.json")
        load_graph(path)
        print(f"graph: {g.number_of_nodes()} tools, {g.number_of_edges()} edges, "
              f"{path.stat().st_size / 1024:.0f} KiB; save+load {time.perf_counter() - t:.2f}s")
    t = time.perf_counter()
    chains = sample_chains(g, args.chains, seed=args.seed)
    dt = time.perf_counter() - t
    rep = coverage_report(g, chains)
    print(f"chains: {len(chains)} in {dt:.2f}s ({len(chains) / dt:,.0f}/s); coverage "
          f"{rep['coverage']:.1%}; lengths {rep['length_histogram']}; top {rep['top_tools'][:3]}")


if __name__ == "__main__":
    main()
