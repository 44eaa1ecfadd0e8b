"""Perturbations and script building: distractor tools, enum values removed from schema text,
irrelevant queries (abstention), withheld required information (clarification).

    pool = ChainPool(chains, registry)          # once per process: groups and similar names
    script = build_script(kind, index, pool, seed=seed, n_worlds=n_worlds, rates=rates)

Every decision is drawn from the example's own `random.Random` and recorded on the example's
`perturbations` list, e.g. `{"type": "distractor_tools", "tools": [...]}`,
`{"type": "enum_removed", "tool": ..., "param": ..., "values": [...]}`,
`{"type": "irrelevant_query", "source": "app"|"generic"|"tool", ...}`,
`{"type": "withheld_information", "tool", "param", "value", "turn", "supplied_in_turn"}`.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prove.env.registry import Registry
from prove.graph.chains import Chain
from prove.graph.features import tokens
from prove.synth import phrasing as P
from prove.synth.intents import intents_of
from prove.synth.machine import Script, TurnSpec
from prove.synth.records import chain_split, example_id, example_rng
from prove.synth.sampling import schema_enum

__all__ = ["PerturbationRates", "ChainPool", "build_script", "offered_tools", "distractors_for",
           "name_similarity", "name_score", "strip_enum", "split_turns"]


@dataclass(frozen=True)
class PerturbationRates:
    """Probabilities of the optional perturbations (the kind-defining ones are always applied)."""

    distractors: float = 0.4
    enum_removed: float = 0.3
    min_distractors: int = 2
    max_distractors: int = 4
    abstain_after_turn: float = 0.4  # share of abstention examples that follow a normal turn


Shape = tuple[frozenset[str], frozenset[str]]


def _shape(name: str, memo: dict[str, Shape] | None = None) -> Shape:
    """(name tokens, character trigrams) of a tool name; kept in ``memo`` when given."""
    got = memo.get(name) if memo is not None else None
    if got is None:
        text = f"_{name}_"
        got = (frozenset(tokens(name)), frozenset(text[i:i + 3] for i in range(len(text) - 2)))
        if memo is not None:
            memo[name] = got
    return got


def name_similarity(a: str, b: str, shapes: dict[str, Shape] | None = None) -> tuple[float, float]:
    """(shared name words, shared character trigrams) of two tool names, each a Jaccard index in
    [0, 1]: ``list_food_orders`` and ``get_food_order`` share ``food``, and most trigrams."""
    own, grams = _shape(a, shapes)
    words, theirs = _shape(b, shapes)
    return len(own & words) / max(1, len(own | words)), len(grams & theirs) / max(1, len(grams | theirs))


def _score(overlap: float, ratio: float) -> float:
    return round(overlap + 0.5 * ratio, 4)


def name_score(a: str, b: str, shapes: dict[str, Shape] | None = None) -> float:
    """How alike two tool names read: shared words plus half the shared trigrams (0 .. 1.5)."""
    return _score(*name_similarity(a, b, shapes))


def distractors_for(tool: str, registry: Registry, shapes: dict[str, Shape] | None = None
                    ) -> list[tuple[float, str]]:
    """Tools of *other* servers with similar names, most similar first (at most 12)."""
    spec = registry.tool(tool)
    scored = []
    for other in sorted(registry.tools.values(), key=lambda t: t.name):
        if other.server == spec.server:
            continue
        overlap, ratio = name_similarity(tool, other.name, shapes)
        if overlap > 0 or ratio >= 0.4:
            scored.append((-_score(overlap, ratio), other.name))
    return [(-s, n) for s, n in sorted(scored)[:12]]


class ChainPool:
    """The chains scripts are drawn from, over one registry, and what :func:`build_script` derives
    from them once: the chains grouped by first server (all of them, or only those whose first
    tool has a required parameter, which a clarification can withhold) and each tool's
    similar-named tools on other servers (the distractor candidates). Build one per synthesis
    process; its memos live and die with it."""

    def __init__(self, chains: Sequence[Chain], registry: Registry) -> None:
        if not chains:
            raise ValueError("a ChainPool needs at least one chain")
        self.chains = list(chains)
        self.registry = registry
        self._groups: dict[bool, tuple[list[str], dict[str, list[Chain]]]] = {}
        self._similar: dict[str, list[tuple[float, str]]] = {}
        self._shapes: dict[str, Shape] = {}

    def groups(self, clarifiable: bool) -> tuple[list[str], dict[str, list[Chain]]]:
        """(servers sorted, server -> its chains); with ``clarifiable``, chains whose first tool
        has a required parameter (all chains when none has)."""
        if clarifiable not in self._groups:
            groups: dict[str, list[Chain]] = {}
            for c in self.chains:
                if not clarifiable or self.registry.tool(c.tools[0]).required:
                    groups.setdefault(c.servers[0], []).append(c)
            if not groups:
                for c in self.chains:
                    groups.setdefault(c.servers[0], []).append(c)
            self._groups[clarifiable] = (sorted(groups), groups)
        return self._groups[clarifiable]

    def similar(self, tool: str) -> list[tuple[float, str]]:
        """:func:`distractors_for` ``tool``, computed once."""
        if tool not in self._similar:
            self._similar[tool] = distractors_for(tool, self.registry, self._shapes)
        return self._similar[tool]


def strip_enum(schema: dict[str, Any], param: str) -> dict[str, Any]:
    """A copy of an OpenAI tool schema whose parameter `param` lists no enum values."""
    out = copy.deepcopy(schema)
    prop = out["function"]["parameters"]["properties"][param]

    def drop(node: dict[str, Any]) -> None:
        node.pop("enum", None)
        for option in node.get("anyOf", ()):
            drop(option)
        if isinstance(node.get("items"), dict):
            drop(node["items"])

    drop(prop)
    return out


def offered_tools(servers: Sequence[str], registry: Registry, perturbations: Sequence[Mapping[str, Any]],
                  rng: random.Random) -> list[dict[str, Any]]:
    """The OpenAI schemas offered: every tool of the servers, distractors inserted at seeded
    positions, enum-removed parameters stripped."""
    tools = [t.openai_schema() for s in sorted(servers) for t in registry.server(s).tools]
    for pert in perturbations:
        if pert.get("type") == "enum_removed":
            for i, schema in enumerate(tools):
                if schema["function"]["name"] == pert["tool"]:
                    tools[i] = strip_enum(schema, pert["param"])
        elif pert.get("type") == "distractor_tools":
            for name in pert["tools"]:
                tools.insert(rng.randrange(len(tools) + 1), registry.tool(name).openai_schema())
    return tools


def split_turns(chain: Chain, rng: random.Random, min_turns: int) -> list[tuple[int, ...]]:
    """Consecutive groups of chain positions, one per user turn; a server change starts a turn."""
    groups: list[list[int]] = []
    for a, b in chain.segments:
        groups.append(list(range(a, b)))
    while len(groups) < min_turns:
        splittable = [i for i, g in enumerate(groups) if len(g) > 1]
        if not splittable:
            break
        i = rng.choice(splittable)
        cut = rng.randrange(1, len(groups[i]))
        groups[i:i + 1] = [groups[i][:cut], groups[i][cut:]]
    # a few more splits so turns hold 1-3 calls
    for _ in range(2):
        big = [i for i, g in enumerate(groups) if len(g) > 3 or (len(g) > 1 and rng.random() < 0.3)]
        if not big:
            break
        i = big[0]
        cut = rng.randrange(1, len(groups[i]))
        groups[i:i + 1] = [groups[i][:cut], groups[i][cut:]]
    return [tuple(g) for g in groups]


def _enum_target(chain: Chain, registry: Registry, rng: random.Random) -> dict[str, Any] | None:
    options = []
    for tool in sorted(set(chain.tools)):
        spec = registry.tool(tool)
        for param in spec.required:
            values = schema_enum(spec.input_schema["properties"][param])
            if values and len(values) > 1:
                options.append((tool, param, values))
    if not options:
        return None
    tool, param, values = rng.choice(options)
    return {"type": "enum_removed", "tool": tool, "param": param, "values": values}


def _distractors(chain: Chain, pool: ChainPool, rng: random.Random, rates: PerturbationRates,
                 exclude_servers: set[str]) -> dict[str, Any] | None:
    best: dict[str, float] = {}
    for tool in chain.tools:
        for score, name in pool.similar(tool)[:6]:
            if pool.registry.tool(name).server not in exclude_servers:
                best[name] = max(best.get(name, 0.0), score)
    if not best:
        return None
    ranked = [n for _, n in sorted((-s, n) for n, s in best.items())][:8]
    k = min(len(ranked), rng.randint(rates.min_distractors, rates.max_distractors))
    return {"type": "distractor_tools", "tools": sorted(rng.sample(ranked, k))}


def _off_topic(chain: Chain, registry: Registry, rng: random.Random) -> dict[str, Any]:
    """What the user asks that no offered tool serves: half the time something a user of the
    conversation's own app would ask (data/intents `off_tool`), else a generic question or a
    request for another family's tool."""
    families = {registry.server(s).family for s in chain.servers}
    draw = rng.random()
    if draw < 0.5:
        asks = [(s, a) for s in sorted(set(chain.servers)) if (i := intents_of(s)) for a in i.off_tool]
        if asks:
            server, text = asks[rng.randrange(len(asks))]
            return {"source": "app", "server": server, "text": text}
    if draw < 0.75:
        return {"source": "generic", "text": rng.choice(P.GENERIC_OFF_TOPIC)}
    servers = sorted(s for s, spec in registry.servers.items() if spec.family not in families)
    if not servers:
        return {"source": "generic", "text": rng.choice(P.GENERIC_OFF_TOPIC)}
    server = rng.choice(servers)
    tool = rng.choice([t.name for t in registry.server(server).tools if t.write]
                      or registry.server(server).tool_names())
    return {"source": "tool", "server": server, "tool": tool}


def build_script(kind: str, index: int, pool: ChainPool, *, seed: int, n_worlds: int,
                 rates: PerturbationRates = PerturbationRates(), val_fraction: float = 0.1) -> Script:
    """The seeded plan of example (kind, index): a server drawn uniformly, one of its chains, the
    world seed, turn layout and perturbations."""
    registry = pool.registry
    rng = example_rng(seed, kind, index)
    servers, groups = pool.groups(kind == "clarification")
    candidates = groups[rng.choice(servers)]  # servers equally often, whatever their chain counts
    chain = candidates[rng.randrange(len(candidates))]
    world = seed * 1000 + rng.randrange(n_worlds)
    perturbations: list[dict[str, Any]] = []
    turns: list[TurnSpec] = []
    exclude = set(chain.servers)
    if kind == "multi_turn":
        groups = split_turns(chain, rng, min_turns=2)
        turns = [TurnSpec("act", g) for g in groups]
    elif kind == "clarification":
        groups = split_turns(chain, rng, min_turns=1)
        turns = [TurnSpec("clarify", groups[0]), TurnSpec("act", groups[0], supplies=True)]
        turns += [TurnSpec("act", g) for g in groups[1:]]
        perturbations.append({"type": "withheld_information", "turn": 0, "supplied_in_turn": 1})
    elif kind == "abstention":
        topic = _off_topic(chain, registry, rng)
        if rng.random() < rates.abstain_after_turn:
            first = split_turns(chain, rng, min_turns=1)[0]
            turns.append(TurnSpec("act", first))
        turns.append(TurnSpec("abstain", (), off_topic=topic))
        perturbations.append({"type": "irrelevant_query", **topic})
        if topic["source"] == "tool":
            exclude.add(topic["server"])
    else:
        raise ValueError(f"unknown kind {kind!r}")
    if rng.random() < rates.distractors:
        found = _distractors(chain, pool, rng, rates, exclude)
        if found:
            perturbations.append(found)
    if kind != "abstention" and rng.random() < rates.enum_removed:
        found = _enum_target(chain, registry, rng)
        if found:
            perturbations.append(found)
    tools = offered_tools(sorted(set(chain.servers)), registry, perturbations, rng)
    split = chain_split(chain.chain_id, val_fraction, seed)
    return Script(example_id(kind, index), kind, index, world, chain, turns, perturbations, tools,
                  split, seed, val_fraction)
