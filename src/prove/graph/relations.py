"""The pair-classification contract: relations, one judgement per ordered tool pair, the interface.

    pairs = tool_pairs(load_registry())            # ordered pairs within each server
    judgements = await SchemaClassifier().classify(pairs)

Pairs are formed *within one server only*: a tool of one server cannot read another server's state
and no output of one server is an argument of another, so cross-server pairs are "none" by
construction and never sent to a classifier (20 servers x ~17^2 pairs ~ 5,800 pairs at full size).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

from prove.env.registry import Registry
from prove.env.tool import ToolSpec

__all__ = ["RELATIONS", "Relation", "Judgement", "PairClassifier", "tool_pairs", "sample_tool_pairs"]

Relation = Literal["explicit", "implicit", "none"]
RELATIONS: tuple[Relation, ...] = ("explicit", "implicit", "none")


@dataclass(frozen=True)
class Judgement:
    """A classifier's answer for the ordered pair (source, target)."""

    source: str
    target: str
    relation: Relation
    argument: str | None  # the parameter of `target` that `source` feeds (explicit only)
    reason: str
    classifier: str  # "schema", "llm:<model>"
    server: str = ""
    field: str | None = None  # the result field of `source` that feeds `argument` (explicit only)
    kind: str | None = None  # the entity kind both declare (explicit only)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class PairClassifier(Protocol):
    """Anything that labels ordered tool pairs: `await clf.classify(pairs)`, one answer per pair."""

    name: str

    async def classify(self, pairs: Sequence[tuple[ToolSpec, ToolSpec]]) -> list[Judgement]: ...


def tool_pairs(registry: Registry, servers: Iterable[str] | None = None) -> list[tuple[ToolSpec, ToolSpec]]:
    """Every ordered pair (A, B), A != B, of tools of the same server, in a stable order."""
    names = sorted(registry.servers) if servers is None else list(servers)
    return [
        (a, b)
        for name in names
        for a in registry.server(name).tools
        for b in registry.server(name).tools
        if a.name != b.name
    ]


def sample_tool_pairs(pairs: Sequence[tuple[ToolSpec, ToolSpec]], n: int | None,
                      seed: int = 0) -> list[tuple[ToolSpec, ToolSpec]]:
    """At most `n` of `pairs` (all when n is None or n >= len), drawn with `seed`, in their own order.

    What a size-capped LLM graph judges (``graph.max_pairs``): the same pairs for the same seed."""
    if n is None or n >= len(pairs):
        return list(pairs)
    if n < 1:
        raise ValueError(f"max_pairs must be a positive number of pairs or None (every pair), not {n}")
    keep = set(random.Random(seed).sample(range(len(pairs)), n))
    return [p for i, p in enumerate(pairs) if i in keep]
