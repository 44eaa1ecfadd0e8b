"""Agreement of pair classifiers with the hand-labelled pairs in data/graph/labels.csv.

    labels = load_labels(); table = agreement_table({"schema": judgements}, labels)

The label file covers every ordered pair of the servers named on its `# servers:` line; a pair it
does not list is "none". Precision/recall are per relation (explicit, implicit) and for "any edge".
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from prove.env.registry import Registry
from prove.env.tool import ToolSpec
from prove.graph.relations import RELATIONS, Judgement, tool_pairs
from prove.profiles import repo_root

__all__ = ["DEFAULT_LABELS", "Labels", "load_labels", "agreement_table", "pairwise_agreement",
           "sample_pairs"]

DEFAULT_LABELS = repo_root() / "data" / "graph" / "labels.csv"


@dataclass(frozen=True)
class Labels:
    """Hand labels: the servers covered and the non-"none" pairs as (source, target) -> (relation, argument)."""

    servers: tuple[str, ...]
    edges: Mapping[tuple[str, str], tuple[str, str | None]]

    def relation(self, source: str, target: str) -> str:
        return self.edges.get((source, target), ("none", None))[0]

    def argument(self, source: str, target: str) -> str | None:
        return self.edges.get((source, target), ("none", None))[1]

    def pairs(self, registry: Registry) -> list[tuple[ToolSpec, ToolSpec]]:
        """Every ordered pair the labels cover (servers missing from the registry are skipped)."""
        return tool_pairs(registry, [s for s in self.servers if s in registry.servers])


def load_labels(path: str | Path = DEFAULT_LABELS) -> Labels:
    """Read a label file; raises ValueError on an unknown relation or a missing `# servers:` line."""
    servers: tuple[str, ...] = ()
    rows: list[str] = []
    for line in Path(path).read_text().splitlines():
        if line.startswith("#"):
            if line[1:].strip().startswith("servers:"):
                servers = tuple(s.strip() for s in line.split(":", 1)[1].split(",") if s.strip())
            continue
        if line.strip():
            rows.append(line)
    if not servers:
        raise ValueError(f"{path}: no '# servers: a,b,c' line says which servers the labels cover")
    edges: dict[tuple[str, str], tuple[str, str | None]] = {}
    for row in csv.DictReader(rows):
        rel = row["relation"].strip()
        if rel not in RELATIONS:
            raise ValueError(f"{path}: relation {rel!r} for {row['source']}->{row['target']} "
                             f"is not one of {RELATIONS}")
        if row["server"] not in servers:
            raise ValueError(f"{path}: server {row['server']!r} is not on the '# servers:' line")
        if rel != "none":
            edges[(row["source"], row["target"])] = (rel, row.get("argument") or None)
    return Labels(servers, edges)


def _scores(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else float("nan")
    r = tp / (tp + fn) if tp + fn else float("nan")
    f1 = 2 * p * r / (p + r) if tp else 0.0
    return p, r, f1


def agreement_table(results: Mapping[str, Sequence[Judgement]], labels: Labels) -> pd.DataFrame:
    """One row per (classifier, relation): n pairs, tp/fp/fn, precision, recall, F1.

    For explicit edges `argument_ok` is the share of true positives that name the labelled argument.
    Only pairs the labels cover are scored.
    """
    rows = []
    covered = set(labels.servers)
    for name, judgements in results.items():
        scored = [j for j in judgements if j.server in covered]
        for rel in ("explicit", "implicit", "any edge"):
            tp = fp = fn = arg_ok = 0
            for j in scored:
                truth = labels.relation(j.source, j.target)
                hit_t = truth != "none" if rel == "any edge" else truth == rel
                hit_p = j.relation != "none" if rel == "any edge" else j.relation == rel
                tp += hit_t and hit_p
                fp += hit_p and not hit_t
                fn += hit_t and not hit_p
                if rel == "explicit" and hit_t and hit_p:
                    arg_ok += j.argument == labels.argument(j.source, j.target)
            p, r, f1 = _scores(tp, fp, fn)
            rows.append({
                "classifier": name, "relation": rel, "pairs": len(scored), "labelled": tp + fn,
                "predicted": tp + fp, "tp": tp, "fp": fp, "fn": fn, "precision": p, "recall": r,
                "f1": f1, "argument_ok": (arg_ok / tp if tp else float("nan")) if rel == "explicit"
                else float("nan"),
            })
    return pd.DataFrame(rows)


def pairwise_agreement(a: Iterable[Judgement], b: Iterable[Judgement]) -> dict[str, float]:
    """Raw agreement and Cohen's kappa of two classifiers over the pairs both judged."""
    left = {(j.source, j.target): j.relation for j in a}
    right = {(j.source, j.target): j.relation for j in b}
    common = sorted(set(left) & set(right))
    if not common:
        return {"pairs": 0, "agreement": float("nan"), "kappa": float("nan")}
    agree = sum(left[k] == right[k] for k in common) / len(common)
    expected = sum(
        (sum(left[k] == rel for k in common) / len(common))
        * (sum(right[k] == rel for k in common) / len(common))
        for rel in RELATIONS
    )
    kappa = (agree - expected) / (1 - expected) if expected < 1 else 1.0
    return {"pairs": len(common), "agreement": agree, "kappa": kappa}


def sample_pairs(labels: Labels, pairs: Sequence[tuple[ToolSpec, ToolSpec]], n: int,
                 seed: int = 0) -> list[tuple[ToolSpec, ToolSpec]]:
    """`n` labelled pairs (all when n < 0 or n >= len), spread evenly over the three relations.

    For scoring a slow classifier (an LLM on a CPU) on a subset; deterministic for a seed.
    """
    if n < 0 or n >= len(pairs):
        return list(pairs)
    rng = random.Random(seed)
    by_rel: dict[str, list[tuple[ToolSpec, ToolSpec]]] = {r: [] for r in RELATIONS}
    for a, b in pairs:
        by_rel[labels.relation(a.name, b.name)].append((a, b))
    for group in by_rel.values():
        rng.shuffle(group)
    picked: list[tuple[ToolSpec, ToolSpec]] = []
    while len(picked) < n and any(by_rel.values()):
        for rel in RELATIONS:
            if by_rel[rel] and len(picked) < n:
                picked.append(by_rel[rel].pop())
    order = {(a.name, b.name): i for i, (a, b) in enumerate(pairs)}
    return sorted(picked, key=lambda p: order[(p[0].name, p[1].name)])
