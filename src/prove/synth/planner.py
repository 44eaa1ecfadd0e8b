"""Planning for the programmatic teacher: rehearse a chain on a live fork episode, choosing
every argument from earlier results, the live sampling context, the schema and the clock.

    Planner(convo, attempts=8, params=ToolParams()).run()   # fills convo.scratch["plans"] (per turn)

Arguments come from earlier results along the chain's explicit edges (an item picked from a list
and described by a distinguishing field, e.g. "the account named 'Everyday'"), from a lookup (the
user names a thing instead of giving its id; a listing of its kind, scoped by the conversation's
ids, resolves it and becomes a call of the turn, `Planned.lookups`), from the live sampling context
(ids, cities, emails that exist), the schema (enums, bounds) and the simulated clock (dates). A new
id is preferred where it belongs with the ids the conversation already uses (one record of the
seed's state holds both, `StateLinks`: the guest's own reservation, the customer's account).

A step that fails is retried: the error is read like a careful assistant reads it (valid values it
lists, parameters it asks for, the states it wants) and the named parameters are drawn again. A
read that cannot succeed is replaced by an alternative tool from the graph (the failed call is kept
so the conversation shows the switch); a step that still fails ends the conversation early when
what came before is a complete example, and otherwise the chain is infeasible on this seed. Deterministic: every draw uses the example's own random stream.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from prove.env.registry import ServerSpec
from prove.env.state import canonical_json
from prove.env.tool import ToolSpec
from prove.env.types import declared_format
from prove.graph.chains import Edge
from prove.graph.features import PAGING, Param, parameters, server_features, singular
from prove.synth import phrasing as P
from prove.synth.intents import placeholders, tool_intents
from prove.synth.machine import Conversation, Infeasible, State, TurnSpec
from prove.synth.records import derived_rng
from prove.synth.sampling import SamplingContext, StateLinks, param_kind, schema_enum

__all__ = ["Planner", "Planned", "Resolvers", "ToolParams", "turn_calls", "user_value"]

_DESCRIPTORS = ("name", "full_name", "title", "subject", "display_name", "username", "handle",
                "label", "headline", "nickname", "city", "email", "code", "sku")
_ID_LIKE = re.compile(r"^[A-Z]{2,6}-\d+$|^[0-9a-f]{7,}$")
_EXAMPLE = re.compile(r"e\.g\. '([^']+)'")
_ID_PREFIX = re.compile(r"'([A-Z]{2,5})-\d{2,}'")  # an id example in a description: 'USR-0004'
_TITLES = ("Quarterly planning", "Team sync", "Budget review", "Onboarding checklist",
           "Release notes draft", "Client follow-up", "Weekly report", "Design review",
           "Travel plans", "Launch prep", "Vendor call", "Sprint retro")
_BODIES = ("Please take a look when you have a moment.", "Following up on our conversation from "
           "yesterday.", "This needs to be done before Friday.", "Thanks for the quick help!",
           "Let me know if anything is unclear.", "Adding a few notes for the record.",
           "Can we discuss this in the next meeting?", "Everything looks good on my side.")
_REASONS = ("No longer needed", "Plans changed", "Ordered by mistake", "Found a better option",
            "Incorrect details")
_NAMES = ("Jordan Lee", "Sam Patel", "Alex Kim", "Maria Lopez", "Chris Novak", "Priya Shah")
_WORDS = ("alpha", "launch", "budget", "review", "travel", "support")
LOOKUP_RATE = 0.5  # how often an id the user supplies is named instead, where a listing resolves it
_TEXTY = ("body", "text", "message", "content", "comment", "note", "notes", "description",
          "details", "instructions", "justification", "resolution", "memo", "summary")


@dataclass
class Planned:
    """One rehearsed call: the tool, its arguments, how the user will mention them, its result."""

    step: int
    tool: str
    arguments: dict[str, Any]
    mentions: list[tuple[str, str, Any, dict[str, Any]]]  # (param, kind, value, info)
    words: dict[str, str] = field(default_factory=dict)  # enum param -> the user's words
    result: Any = None
    intent: str = ""  # the chain's tool (differs from `tool` after an alternative switch)
    failed_first: dict[str, Any] | None = None
    template: str | None = None  # the user's request (data/intents), when the server has intents
    lookups: dict[str, Planned] = field(default_factory=dict)  # param -> the read that finds its id


def turn_calls(plans: list[Planned]) -> list[Planned]:
    """A turn's calls in the order the assistant makes them: each planned call's lookups (the reads
    that turn a name the user gave into the id the call needs), then the call."""
    return [q for p in plans for q in (*p.lookups.values(), p)]


def _base(schema: dict[str, Any]) -> dict[str, Any]:
    options = [s for s in schema.get("anyOf", ()) if s.get("type") != "null"]
    return {**schema, **options[0]} if options else schema



class ToolParams:
    """`prove.graph.features.parameters` read once per tool: a tool's parameters as the graph
    features see them. The programmatic teacher holds one, so the memo lives as long as the run
    (one registry) instead of growing in a module for as long as the process does."""

    def __init__(self) -> None:
        self._by_tool: dict[str, dict[str, Param]] = {}

    def __call__(self, spec: ToolSpec) -> dict[str, Param]:
        params = self._by_tool.get(spec.name)
        if params is None:
            params = self._by_tool[spec.name] = parameters(spec)
        return params


class Resolvers:
    """Per (server, entity kind): the listings that show things of that kind by name, as
    (tool, the listed objects' id field). A listing qualifies when it is a read that pages, is
    about the kind (`focus`: a review listing's objects start with the guest's id but describe
    reviews), each listed object's own id is of the kind, and it takes no id of that kind itself
    (the children of a page are not a way to find a page by name). Read once per server."""

    def __init__(self) -> None:
        self._by_server: dict[str, dict[str, list[tuple[str, str]]]] = {}

    def __call__(self, server: ServerSpec, kind: str) -> list[tuple[str, str]]:
        found = self._by_server.get(server.name)
        if found is None:
            found = self._by_server[server.name] = {}
            for f in server_features(server).values():
                if f.write or not f.pages:
                    continue
                for o in f.fields:
                    if o.entity and o.in_list and o.path in f.primary and o.entity not in f.kinds_in \
                            and o.entity in f.focus:
                        found.setdefault(o.entity, []).append((f.name, o.name))
        return found.get(kind, [])


# -- value generation ----------------------------------------------------------------------

def _date_format(schema: dict[str, Any]) -> str | None:
    """'date', 'datetime' or 'time', from the declared format (prove.env.types) or a clock pattern."""
    declared = declared_format(schema)
    if declared == "date-time":
        return "datetime"
    if declared == "date":
        return "date"
    if str(schema.get("pattern", "")).startswith("^([01]\\d|2[0-3]):"):
        return "time"
    return None


def _date_value(fmt: str, param: str, now: str, args: dict[str, Any], rng: Any,
                past: bool = False) -> str:
    try:
        base = datetime.fromisoformat(now) if now else datetime(2026, 3, 16, 9, 0)
    except ValueError:
        base = datetime(2026, 3, 16, 9, 0)
    if fmt == "time":
        return f"{rng.randrange(7, 22):02d}:{rng.choice((0, 15, 30, 45)):02d}"
    ending = any(w in param for w in ("end", "until", "return", "check_out", "ends"))
    start = None
    if ending:
        for key, value in args.items():
            if isinstance(value, str) and key != param and re.match(r"\d{4}-\d\d-\d\d", value):
                start = datetime.fromisoformat(value)
    if "expiry" in param:
        when = base + timedelta(days=700 + rng.randrange(300))
    elif start is not None:
        hours = rng.choice((1, 2)) if fmt == "datetime" and "end" in param else 24 * rng.randrange(1, 4)
        when = start + timedelta(hours=hours)
    else:
        days = rng.randrange(1, 12)
        when = (base + timedelta(days=-days if past else days)).replace(
            hour=rng.randrange(9, 17), minute=rng.choice((0, 30)))
    return when.strftime("%Y-%m-%dT%H:%M" if fmt == "datetime" else "%Y-%m-%d")


def _number(param: str, schema: dict[str, Any], rng: Any, integer: bool) -> float | int:
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))

    def fits(v: float) -> bool:
        low = lo is None or v > lo or ("minimum" in schema and v >= lo)
        return low and (hi is None or v < hi or ("maximum" in schema and v <= hi))

    if any(w in param for w in ("amount", "price", "tip", "budget", "cost")):
        pool = [5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 80, 100, 120, 150, 200, 250]
    elif "pct" in param or "percent" in param:
        pool = list(range(50, 95, 5))
    elif "temp" in param or "threshold" in param:
        pool = [18, 19, 20, 21, 22, 23, 24]
    elif "brightness" in param:
        pool = list(range(20, 101, 10))
    elif any(w in param for w in ("rating", "stars", "score")):
        pool = [1, 2, 3, 4, 5]
    elif "odometer" in param:
        pool = [12000 + 250 * i for i in range(40)]
    else:
        pool = [1, 2, 3]
    ok = [v for v in pool if fits(v)]
    if not ok:
        start = int(lo) + 1 if lo is not None else 1
        ok = [start] if hi is None or start <= hi else [hi]
    value = rng.choice(ok)
    return int(value) if integer else value


def user_value(spec: ToolSpec, param: str, ctx: SamplingContext, rng: Any, args: dict[str, Any],
               past: bool = False, wanted: set[str] | None = None,
               params: Callable[[ToolSpec], dict[str, Param]] = parameters,
               belongs: Belonging | None = None,
               ) -> tuple[Any, str, str | None] | None:
    """(value, mention kind, enum words) for a parameter the user supplies, or None. `params`
    reads a tool's parameters (pass a `ToolParams` to read each tool once); `belongs` says which
    ids fit the conversation's world: a probed one that does is preferred, else one the state
    links to the conversation's ids, else any."""
    schema = spec.input_schema.get("properties", {}).get(param, {})
    feat = params(spec)[param]
    enum = schema_enum(schema)
    base = _base(schema)
    is_array = base.get("type") == "array"
    if enum:
        value = rng.choice(enum)
        words = P.enum_words(value, rng)
        return ([value] if is_array else value), "enum", words
    kind = _base(base.get("items", {})).get("type", "string") if is_array else base.get("type")
    if kind == "boolean":
        return rng.random() < 0.5, "bool", None
    entity = param_kind(spec, param)
    if kind in ("integer", "number"):
        if entity is not None:
            cands = [v for v, _ in ctx.candidates(param, entity) if isinstance(v, (int, float))
                     and not isinstance(v, bool)]
            if cands:
                return rng.choice(cands[:30]), "id", None
        return _number(param, base, rng, kind == "integer"), "number", None
    desc = feat.description
    fmt = _date_format(base)
    server = spec.server
    if fmt:
        value: Any = _date_value(fmt, param, ctx.now.get(server, ""), args, rng, past)
        return ([value] if is_array else value), "value", None
    cands = [v for v, _ in ctx.candidates(singular(param) if is_array and entity is None else param, entity)
             if isinstance(v, str) and v]
    example = _EXAMPLE.search(desc)
    if entity is not None or feat.sensitive:
        if entity is not None:  # another id than this call's others of the kind (from, to)
            cands = [v for v in cands if v not in args.values()] or cands
        if belongs is not None and entity is not None:  # the conversation's world (see Planner)
            cands = [v for v in cands if belongs(entity, v, None)] or [
                v for v in belongs.linked(entity) if v not in args.values()] or cands
        if wanted:
            cands = [v for v in cands if ctx.attrs.get(v, frozenset()) & wanted] or cands
        if is_array and cands:
            n = min(len(cands), max(1, int(base.get("minItems", 1))))
            return rng.sample(cands[:40], n), "id", None
        if cands:
            value = rng.choice(cands[:40])
        elif example:
            value = example.group(1)
        else:
            return None
        return ([value] if is_array else value), "id", None
    if param in ("query", "q", "keyword", "search", "hashtag", "tag", "label"):
        pool = [v for name in ("name", "title", "full_name", "subject", "tag", "label", "city")
                for v, _ in ctx.values.get(name, ()) if isinstance(v, str)] or cands
        if pool:
            word = [w for w in re.split(r"\W+", rng.choice(pool[:40])) if len(w) >= 3]
            value = rng.choice(word) if word else rng.choice(_WORDS)
        else:
            value = rng.choice(_WORDS)
        return ([value] if is_array else value), "text", None
    if cands and not any(t in param for t in _TEXTY):
        value = rng.choice(cands[:40])
        return ([value] if is_array else value), "value", None
    written = tool_intents(spec.server, spec.name)
    if written is not None and written.text.get(param):
        value = rng.choice(written.text[param])
        return ([value] if is_array else value), "text", None
    if example and rng.random() < 0.5:
        value = example.group(1)
    elif "reason" in param:
        value = rng.choice(_REASONS)
    elif any(t in param for t in ("title", "subject", "name")):
        value = rng.choice(_NAMES) if "name" in param and "full" in desc.lower() else rng.choice(_TITLES)
    elif any(t in param for t in _TEXTY):
        value = rng.choice(_BODIES)
    else:
        value = example.group(1) if example else rng.choice(_WORDS)
    return ([value] if is_array else value), "text", None


# -- the planner ---------------------------------------------------------------------------

def _find_key(node: Any, name: str, path: str = "", parent: list[Any] | None = None
              ) -> list[tuple[Any, str, dict[str, Any] | None, list[Any] | None]]:
    """(value, path, containing object, the list that object sits in) for every `name` leaf."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            sub = f"{path}.{k}" if path else k
            if k == name:
                if isinstance(v, list):
                    out.extend((x, f"{sub}[{i}]", None, v) for i, x in enumerate(v)
                               if isinstance(x, (str, int, float)) and not isinstance(x, bool))
                elif isinstance(v, (str, int, float)) and not isinstance(v, bool):
                    out.append((v, sub, node, parent))
            elif isinstance(v, (dict, list)):
                out.extend(_find_key(v, name, sub, None))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_find_key(v, name, f"{path}[{i}]", node))
    return out


def _strings(item: dict[str, Any] | None) -> set[str]:
    """A listed object's string values (ids among them), for telling which objects belong together."""
    return {v for v in item.values() if isinstance(v, str)} if item is not None else set()


def _descriptor(item: dict[str, Any], siblings: list[Any], value: Any) -> tuple[str, str] | None:
    """(field, value) that tells `item` apart from its siblings, the way a person would pick it
    out: a name or title first, a date or time only when nothing else does."""
    others = [s for s in siblings if isinstance(s, dict) and s is not item]
    keys = [k for k in _DESCRIPTORS if k in item] + sorted(k for k in item if k not in _DESCRIPTORS)
    found = []
    for key in keys:
        v = item.get(key)
        if not isinstance(v, str) or v == value or not 3 <= len(v) <= 40 or _ID_LIKE.match(v):
            continue
        if "'" in v or any(o.get(key) == v for o in others):
            continue
        found.append((key, v))
    return next((f for f in found if not _WHEN.match(f[1])), found[0] if found else None)


_WHEN = re.compile(r"^\d{4}-\d\d-\d\d|^\d\d:\d\d")  # a date or a time of day
_LISTED_ID = re.compile(r"\b([A-Z]{2,6})-\d{2,}\b")
_EG = re.compile(r"e\.g\. '([^']+)'")


def _listed(error: str, args: dict[str, Any], named: set[str]) -> dict[str, list[Any]]:
    """Values an error offers as valid, for the argument they replace: a trailing list
    ("...; branches: main, dev", "their vehicles: VEH-0003, VEH-0007"), ids of the same kind
    ("owners: USR-0010, USR-0021") or an example ("e.g. 'API_TIMEOUT'")."""
    quoted = {p for p, v in args.items() if isinstance(v, (str, int)) and f"'{v}'" in error}
    mentioned = {p for p, v in args.items() if isinstance(v, str) and len(v) > 2 and v in error}
    tail = error.rsplit(": ", 1)[-1] if ": " in error else ""
    items = [re.sub(r" \(.*?\)", "", x).strip() for x in re.sub(r" \(and \d+ more\)$", "", tail).split(", ")]
    items = [x for x in items if x and " " not in x and "'" not in x and len(x) < 80]
    out: dict[str, list[Any]] = {}
    if items and len(items) == len(tail.split(", ")):
        for param in sorted(named or (quoted | mentioned)):
            value = args.get(param)
            pool = [x for x in items if x != value]
            if isinstance(value, str) and pool and _same_shape(value, pool[0]):
                out[param] = pool
        if out:
            return out
    m = _EG.search(error)
    if m:
        for param in sorted(named or quoted):
            if isinstance(args.get(param), str):
                out[param] = [m.group(1)]
        if out:
            return out
    found: dict[str, list[str]] = {}
    for m2 in _LISTED_ID.finditer(error):
        found.setdefault(m2.group(1), [])
        if m2.group(0) not in found[m2.group(1)]:
            found[m2.group(1)].append(m2.group(0))
    for param, value in args.items():
        if isinstance(value, str) and "-" in value and (param in quoted or not quoted):
            listed = [v for v in found.get(value.split("-", 1)[0], ()) if v != value]
            if listed:
                out[param] = listed
    return out


def _same_shape(a: str, b: str) -> bool:
    """Two values of one kind: same id prefix, both emails, or both free-form tokens."""
    ma, mb = _LISTED_ID.match(a), _LISTED_ID.match(b)
    if ma or mb:
        return bool(ma and mb and ma.group(1) == mb.group(1))
    return ("@" in a) == ("@" in b)


def _reusable(spec: ToolSpec, param: str) -> bool:
    """Who or what the user acts on (a parameter that declares an entity kind: `user_id`, `repo`,
    `organizer_email`) carries over to later steps; attributes of a new thing (`email`, `name`,
    `phone`) do not."""
    return param_kind(spec, param) is not None


@dataclass(frozen=True)
class Belonging:
    """Whether an id fits the conversation's world: one record of the seed's state holds it and
    an id the conversation uses (`StateLinks`: the guest's own reservation), or the listed object
    it comes from holds one, or a probe showed it beside one. Ids made during the conversation are
    not in the initial state; the probe and the listing cover those."""

    held: dict[str, frozenset[int]]  # 'kind:id' -> records of the seed's state holding it
    mine: frozenset[int]  # the records holding an id the conversation uses
    ids: set[str]  # the ids the conversation uses
    attrs: dict[str, frozenset[str]]  # probe: id -> the short strings shown beside it

    def __call__(self, kind: str, value: Any, item: dict[str, Any] | None = None) -> bool:
        return bool(self.held.get(f"{kind}:{value}", frozenset()) & self.mine
                    or _strings(item) & self.ids or self.attrs.get(str(value), frozenset()) & self.ids)

    def linked(self, kind: str) -> list[str]:
        """The ids of `kind` in the seed's state that one record links to the conversation's."""
        prefix = f"{kind}:"
        return sorted(k[len(prefix):] for k, recs in self.held.items()
                      if k.startswith(prefix) and recs & self.mine)


class Planner:
    """Rehearses every act turn of a script on a fork episode (see the module docstring)."""

    def __init__(self, convo: Conversation, attempts: int = 8, params: ToolParams | None = None,
                 resolvers: Resolvers | None = None, links: StateLinks | None = None,
                 lookup_rate: float = LOOKUP_RATE) -> None:
        self.c, self.attempts, self.lookup_rate = convo, attempts, lookup_rate
        self.params = params if params is not None else ToolParams()
        self.resolvers = resolvers if resolvers is not None else Resolvers()
        self.links = links if links is not None else StateLinks(convo.env.registry)
        self.hub, self.reg = convo.env.hub, convo.env.registry
        self.rng = derived_rng("plan", convo.script.example_id, convo.script.seed)
        self.fork = f"{convo.script.example_id}/plan"
        self.by_step: dict[int, Planned] = {}
        self.given: dict[tuple[str, str], tuple[Any, str, dict[str, Any]]] = {}
        turns = convo.script.turns
        # the call a clarification is about: its ids are written (one of them is withheld and
        # asked for), not named, or nothing would be left to withhold
        self.asked_step = next((turns[k + 1].steps[0] for k, t in enumerate(turns[:-1])
                                if t.kind == "clarify" and turns[k + 1].steps), None)
        # (server, param) -> (value, mention kind, info) the user gave, for reuse in later steps

    def run(self) -> None:
        script, c = self.c.script, self.c
        plans: list[list[Planned]] = [[] for _ in script.turns]
        self.hub.close(self.fork)
        self.hub.open(self.fork, script.seed)
        try:
            for k, turn in enumerate(script.turns):
                if turn.kind != "act":
                    continue
                for step in turn.steps:
                    try:
                        plans[k].append(self._step(step))
                    except Infeasible as exc:
                        plans = self._truncate(step, plans, exc)
                        break
                else:
                    continue
                break
        finally:
            self.hub.close(self.fork)
        c.scratch["plans"] = plans
        c.scratch["enum_removed"] = {(p["tool"], p["param"]) for p in script.perturbations
                                     if p.get("type") == "enum_removed"}
        for k, turn in enumerate(script.turns):
            if turn.kind == "clarify":
                c.scratch["withheld"] = self._withhold(plans[k + 1], k)
                break

    def _truncate(self, stop: int, plans: list[list[Planned]], exc: Infeasible
                  ) -> list[list[Planned]]:
        """End the conversation before the step that cannot run, when what is left still makes
        an example of its kind (>= 2 calls; >= 2 user turns for multi-turn); else re-raise."""
        script = self.c.script
        kind = script.kind
        least = {"multi_turn": 2, "clarification": 1, "abstention": 0}[kind]
        if stop < least or (kind == "clarification" and stop <= script.turns[1].steps[0]):
            raise exc
        original = script.chain.chain_id
        script.truncate(stop, keep_last=kind == "abstention")
        acts = [t for t in script.turns if t.kind == "act"]
        if kind == "multi_turn" and len(acts) < 2:
            only = acts[0]
            cut = max(1, len(only.steps) // 2)
            script.turns = [TurnSpec("act", only.steps[:cut]), TurnSpec("act", only.steps[cut:])]
        by_step = {p.step: p for row in plans for p in row}
        self.c.go(State.PREPARE, "truncated", at_step=stop, error=str(exc)[:160],
                  **{"from": original})
        return [[by_step[s] for s in t.steps] if t.kind == "act" else [] for t in script.turns]

    def _withhold(self, plans: list[Planned], k: int) -> dict[str, Any]:
        if not plans:
            raise Infeasible("clarification turn without calls")
        first = plans[0]
        spec = self.reg.tool(first.tool)
        order = {"id": 0, "number": 1, "value": 2, "enum": 3, "text": 4}
        cands = [(order[kind] - (param in spec.sensitive), n, param, value, info)
                 for n, (param, kind, value, info) in enumerate(first.mentions)
                 if kind in order and param in spec.required]
        if not cands:
            raise Infeasible(f"nothing the user supplies to withhold in {first.tool}")
        _, _, param, value, info = min(cands, key=lambda x: (x[0], x[1]))
        out = {"turn": k, "tool": first.tool, "param": param, "value": value,
               "supplied_in_turn": k + 1}
        if info.get("words"):
            out["words"] = info["words"]
        for pert in self.c.script.perturbations:
            if pert.get("type") == "withheld_information":
                pert.update(out)
        return out

    def _feeds(self, spec: ToolSpec, step: int, intent: str) -> dict[str, Edge]:
        chain = self.c.script.chain
        if spec.name == intent:
            return chain.feeds(step)
        out = {}
        for src in sorted(self.by_step):
            if chain.servers[src] != chain.servers[step]:
                continue
            got = self.c.env.graph.edge(self.by_step[src].tool, spec.name)
            if got and got.relation == "explicit" and got.argument:
                out[got.argument] = replace(got, source=src, target=step)
        return out

    def _step(self, step: int) -> Planned:
        chain = self.c.script.chain
        intent = chain.tools[step]
        primary, last = self._try(self.reg.tool(intent), step, intent, self.attempts)
        if primary is not None:
            self._remember(primary)
            return primary
        for alt in self.c.env.graph.alternatives(chain, step) if last is not None else ():
            got, _ = self._try(self.reg.tool(alt), step, intent, 3)
            if got is not None:
                got.failed_first = {"name": last["name"], "arguments": last["arguments"]}
                self.c.go(State.PREPARE, "planned_alternative",
                          step=step, tool=intent, alternative=alt)
                self._remember(got)
                return got
        err = (last or {}).get("error", "no arguments")
        raise Infeasible(f"step {step} ({intent}) fails on seed {self.c.script.seed}: {str(err)[:160]}")

    def _learn(self, err: str, spec: ToolSpec, args: dict[str, Any], pinned: dict[str, list[Any]],
               forced: set[str]) -> set[str] | None:
        """Read a failed rehearsal's error like a careful assistant would: values it lists as
        valid, parameters it asks for, values it rejects, the states it wants ("only open
        orders"), the direction of time. Returns the parameters to draw again (None: all)."""
        named = set(re.findall(r"(?:parameter|argument) '(\w+)'", err)) & set(args)
        missing = [p for p in spec.params if p not in args and p not in PAGING and p not in forced
                   and re.search(rf"(?<![\w.]){re.escape(p)}(?![\w])", err)]
        if missing:
            forced.add(self.rng.choice(missing))
        listed = _listed(err, args, named)
        if listed:
            pinned.update(listed)
            return set(listed)
        redraw = set(named)
        for param, value in args.items():
            if isinstance(value, (str, int, float)) and f"'{value}'" in err:
                self.tried.setdefault(param, set()).add(repr(value))
                redraw.add(param)
        if "in the future" in err:
            self.past = True
        for words in re.findall(r"\bonly ([a-z_ ,]+)", err):
            self.wanted |= {w for w in re.split(r"[ ,]+", words) if len(w) > 2} - {"the", "and"}
        return redraw or None

    def _remember(self, planned: Planned) -> None:
        self.by_step[planned.step] = planned
        spec = self.reg.tool(planned.tool)
        server = spec.server
        for param, kind, value, info in planned.mentions:
            if kind in ("id", "value", "named") and _reusable(spec, param) \
                    and (server, param) not in self.given:
                self.given[(server, param)] = (value, kind, info)

    def _try(self, spec: ToolSpec, step: int, intent: str, attempts: int
             ) -> tuple[Planned | None, dict[str, Any] | None]:
        """(planned call, None) on success; (None, last failed call) after `attempts`, or
        (None, None) when no arguments could be filled at all."""
        feeds = self._feeds(spec, step, intent)
        last: dict[str, Any] | None = None
        redraw: set[str] | None = None
        prev: Planned | None = None
        pinned: dict[str, list[Any]] = {}
        forced: set[str] = set()
        self.tried: dict[str, set[str]] = {}
        self.past: bool = False
        self.wanted: set[str] = set()
        fallback: Planned | None = None
        for _ in range(attempts):
            planned = self._fill(spec, step, intent, feeds, prev, redraw, pinned, forced)
            if planned is None:
                break
            logged = self.hub.call(spec.name, planned.arguments, episode_id=self.fork)
            if logged["ok"]:
                planned.result = logged["result"]
                if spec.write or self._feeds_downstream(step, planned.result):
                    return planned, None
                fallback, redraw = fallback or planned, None
            else:
                err = str(logged["error"])
                last = {"name": spec.name, "arguments": planned.arguments, "error": err}
                redraw = self._learn(err, spec, planned.arguments, pinned, forced)
            prev = planned
        if fallback is not None:  # a read that works but feeds nothing: later steps ask the user
            return fallback, None
        return None, last

    def _feeds_downstream(self, step: int, result: Any) -> bool:
        for e in self.c.script.chain.consumers(step):
            name = (e.field or e.argument or "").split(".")[-1].replace("[]", "")
            if not _find_key(result, name) and not _find_key(result, e.argument or ""):
                return False
        return True

    def _fed(self, edge: Edge, spec: ToolSpec, param: str, allowed: list[Any] | None = None
             ) -> tuple[Any, str, dict[str, Any]] | None:
        src = self.by_step.get(edge.source)
        if src is None:
            return None
        name = (edge.field or param).split(".")[-1].replace("[]", "")
        hits = _find_key(src.result, name) or _find_key(src.result, param)
        schema = _base(spec.input_schema.get("properties", {}).get(param, {}))
        want = _base(schema.get("items", {})).get("type") if schema.get("type") == "array" else schema.get("type")
        hits = [h for h in hits if want in (None, "string") and isinstance(h[0], str)
                or want in ("integer", "number") and isinstance(h[0], (int, float))]
        if allowed is not None:
            hits = [h for h in hits if h[0] in allowed]
        bad = getattr(self, "tried", {}).get(param, set())
        hits = [h for h in hits if repr(h[0]) not in bad] if bad else hits
        wanted = getattr(self, "wanted", set())
        if wanted:
            hits = [h for h in hits if wanted & _strings(h[2])] or hits
        belongs = self._belongs(spec, {})
        kind = param_kind(spec, param)
        if belongs is not None and kind is not None:  # the guest's reservation, not another's
            hits = [h for h in hits if belongs(kind, h[0], h[2])] or hits
        if not hits:
            return None
        source_entity = P.entity_of(name)
        distinct = {repr(h[0]) for h in hits}
        if len(distinct) == 1:
            value, info, kind = hits[0][0], {"source_entity": source_entity}, "result-single"
        else:
            value, _, item, siblings = hits[self.rng.randrange(min(len(hits), 8))]
            descr = _descriptor(item, siblings or [], value) if item is not None else None
            if descr is None:
                value, kind, info = hits[0][0], "result-ordinal", {"source_entity": source_entity}
            else:
                path = hits[0][1]
                owner = re.findall(r"(\w+)\[\d+\]", path)
                kind, info = "result-item", {"descr_field": descr[0], "descr": descr[1],
                                             "source_entity": source_entity,
                                             "item": P.entity_of(singular(owner[-1])) if owner else ""}
        if schema.get("type") == "array":
            value = [value]
        return value, kind, info

    def _fill(self, spec: ToolSpec, step: int, intent: str, feeds: dict[str, Edge],
              prev: Planned | None, redraw: set[str] | None, pinned: dict[str, list[Any]],
              forced: set[str]) -> Planned | None:
        ctx, rng = self.c.ctx, self.rng
        args: dict[str, Any] = {}
        mentions: list[tuple[str, str, Any, dict[str, Any]]] = []
        words: dict[str, str] = {}
        lookups: dict[str, Planned] = {}
        old = {m[0]: m for m in prev.mentions} if prev is not None else {}
        template = prev.template if prev is not None else self._template(spec, feeds)
        asked = set(placeholders(template)) if template is not None else set()
        for param in spec.params:
            if param in PAGING:
                continue
            required = param in spec.required
            if prev is not None and param in old and (redraw is None and old[param][1].startswith(
                    "result") or redraw is not None and param not in redraw):
                _, kind, value, info = old[param]
                args[param] = value
                mentions.append(old[param])
                if prev is not None and param in prev.lookups:
                    lookups[param] = prev.lookups[param]
                if kind == "enum" and info.get("words"):
                    words[param] = info["words"]
                continue
            if prev is not None and param not in old and param not in forced and (
                    redraw is None or param not in redraw) and not required:
                continue
            if param in feeds:
                got = self._fed(feeds[param], spec, param, pinned.get(param))
                if got is not None:
                    args[param] = got[0]
                    mentions.append((param, got[1], got[0], got[2]))
                    continue
            if not required and param not in forced and (
                    param not in asked if template is not None else not self._optional(spec, param)):
                continue
            if param in pinned:
                value = rng.choice(pinned[param])
                args[param] = value
                mentions.append((param, "id", value, {}))
                continue
            gkey = (spec.server, param)
            if gkey in self.given and param not in (redraw or ()) and rng.random() < 0.95 \
                    and repr(self.given[gkey][0]) not in self.tried.get(param, ()):
                value, kind, info = self.given[gkey]
                args[param] = value
                mentions.append((param, kind, value, {**info, "repeat": True}))
                continue
            found = self._lookup(spec, step, param, args, lookups) \
                if rng.random() < self.lookup_rate and step != self.asked_step else None
            if found is not None:
                value, info, call = found
                if call is not None:
                    lookups[param] = call
                args[param] = value
                mentions.append((param, "named", value, info))
                continue
            got = None
            belongs = self._belongs(spec, args)
            for _ in range(4):
                got = user_value(spec, param, ctx, rng, args, past=self.past,
                                 wanted=self.wanted, params=self.params, belongs=belongs)
                if got is None or repr(got[0]) not in self.tried.get(param, ()):
                    break
            if got is None:
                if required:
                    return None
                continue
            value, kind, w = got
            args[param] = value
            info = {"words": w} if w else {}
            mentions.append((param, kind, value, info))
            if w:
                words[param] = w
        return Planned(step, spec.name, args, mentions, words, intent=intent, template=template,
                       lookups=lookups)

    def _used(self, spec: ToolSpec, args: dict[str, Any]) -> list[tuple[str, Any]]:
        """(entity kind, id) for every id the conversation has used on `spec`'s server, in order:
        earlier calls, then this call's arguments so far."""
        out = []
        for p in [*(self.by_step[s] for s in sorted(self.by_step)), None]:
            tool = self.reg.tool(p.tool) if p is not None else spec
            if tool.server != spec.server:
                continue
            for param, value in (p.arguments if p is not None else args).items():
                kind = param_kind(tool, param)
                if kind is not None:
                    out.extend((kind, v) for v in (value if isinstance(value, list) else [value])
                               if isinstance(v, (str, int)) and not isinstance(v, bool))
        return out

    def _belongs(self, spec: ToolSpec, args: dict[str, Any]) -> Belonging | None:
        """What fits the conversation's world on `spec`'s server (None: the conversation has no
        id there yet, so anything does)."""
        used = self._used(spec, args)
        if not used:
            return None
        held = self.links.records(spec.server, self.c.script.seed)
        mine = frozenset().union(*(held.get(f"{k}:{v}", frozenset()) for k, v in used))
        return Belonging(held, mine, {str(v) for _, v in used}, self.c.ctx.attrs)

    def _lookup(self, spec: ToolSpec, step: int, param: str, args: dict[str, Any],
                pending: dict[str, Planned]) -> tuple[Any, dict[str, Any], Planned | None] | None:
        """The user names the thing instead of giving its id: a listing of its kind, scoped by the
        ids the conversation already uses (the customer's accounts), is called on the fork and one
        listed object, told apart from the others by a field ("the account named 'Everyday'"),
        gives the id. A listing the conversation already called with the same arguments (earlier,
        or for another parameter of this call: `pending`) is read again instead of called twice.
        Returns (id, mention info, the lookup call or None when it reuses one) or None when no
        listing of the kind can be called with what the conversation knows, or none tells its
        objects apart."""
        kind = param_kind(spec, param)
        schema = _base(spec.input_schema.get("properties", {}).get(param, {}))
        if kind is None or schema.get("type") not in ("string", "integer"):
            return None
        known = dict(self._used(spec, args))  # kind -> the latest id of it
        made = {(q.tool, canonical_json(q.arguments)): q
                for q in [*(q for p in self.by_step.values() for q in p.lookups.values()),
                          *pending.values()]}
        belongs = self._belongs(spec, args)
        bad = self.tried.get(param, set())
        for tool, id_field in self.resolvers(self.reg.server(spec.server), kind):
            rspec = self.reg.tool(tool)
            feats = self.params(rspec)
            scoped = {q: known[f.entity] for q, f in feats.items()
                      if q not in PAGING and f.entity in known and f.type in ("string", "integer")}
            if not set(rspec.required) <= set(scoped):
                continue
            tries = [scoped] + ([{q: scoped[q] for q in rspec.required}]
                                if set(scoped) - set(rspec.required) else [])
            for rargs in tries:
                earlier = made.get((tool, canonical_json(rargs)))
                if earlier is not None:
                    result = earlier.result
                else:
                    logged = self.hub.call(tool, rargs, episode_id=self.fork)
                    if not logged["ok"]:
                        continue
                    result = logged["result"]
                hits = [h for h in _find_key(result, id_field)
                        if h[2] is not None and isinstance(h[0], str if schema["type"] == "string" else int)
                        and repr(h[0]) not in bad]
                hits = [h for h in hits if h[0] not in args.values()] or hits
                if belongs is not None:
                    hits = [h for h in hits if belongs(kind, h[0], h[2])] or hits
                order = self.rng.sample(hits[:8], min(len(hits), 8))
                for value, _, item, siblings in order:
                    descr = _descriptor(item, siblings or [], value)
                    if descr is None:
                        continue
                    info = {"descr_field": descr[0], "descr": descr[1], "lookup": tool}
                    if earlier is not None:
                        return value, info, None
                    return value, info, Planned(step, tool, dict(rargs), [], result=result,
                                                intent="lookup")
        return None

    def _template(self, spec: ToolSpec, feeds: dict[str, Edge]) -> str | None:
        """The user's request for this call, drawn from the tool's intents: one that mentions every
        optional parameter an earlier result feeds and no paging parameter (None: no intents)."""
        written = tool_intents(spec.server, spec.name)
        if written is None:
            return None
        fed = set(feeds) - set(spec.required)
        fits = [a for a in written.ask
                if fed <= set(placeholders(a)) and not set(placeholders(a)) & PAGING]
        return self.rng.choice(fits) if fits else None

    def _optional(self, spec: ToolSpec, param: str) -> bool:
        feat = self.params(spec)[param]
        if spec.write and any(t in param for t in _TEXTY):
            return self.rng.random() < 0.25
        if not spec.write and feat.enum:
            return self.rng.random() < 0.1
        return False
