"""Planning for the programmatic teacher: rehearse a chain on a live fork episode, choosing
every argument from earlier results, the live sampling context, the schema and the clock.

    Planner(convo, attempts=8, params=ToolParams()).run()   # fills convo.scratch["plans"] (per turn)

Arguments come from earlier results along the chain's explicit edges (an item picked from a list
and described by a distinguishing field, e.g. "the Everyday account"; `plan_results`), from
a lookup (the user names a thing instead of giving its id; a listing of its kind, scoped by the
conversation's ids or, in one hop, by another thing the user names, resolves it and becomes a call
of the turn, `Planned.lookups`; `plan_lookup`),
from the live sampling context (ids, cities, emails that exist), the schema (enums, bounds) and the
simulated clock (dates; `plan_values`). A new id is preferred where it belongs with the ids the
conversation already uses (one record of the seed's state holds both, `StateLinks`: the guest's own
reservation, the customer's account).

A step that fails is retried: the error's structured detail is read (`plan_errors`: values it
offers, parameters it asks for, values it rejects, the states it wants; never the message's
wording) and the parameters it is about are drawn again. A read that cannot succeed is replaced by an alternative tool from the graph (the
failed call is kept so the conversation shows the switch); a step that still fails ends the
conversation early when what came before is a complete example, and otherwise the chain is
infeasible on this seed. Deterministic: every draw uses the example's own random stream.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from prove.env.state import canonical_json
from prove.env.tool import ToolSpec
from prove.env.types import entity_values
from prove.graph.chains import Edge
from prove.graph.features import PAGING, singular
from prove.synth import phrasing as P
from prove.synth.evidence import ACTING_PARAMS
from prove.synth.intents import placeholders, tool_intents
from prove.synth.machine import Conversation, Infeasible, State, TurnSpec
from prove.synth.phrasing import SPEAKER, speaker
from prove.synth.plan_errors import Lessons, learn
from prove.synth.plan_lookup import (
    Belonging,
    Pick,
    Resolvers,
    carried,
    listing_arguments,
    pick_named,
)
from prove.synth.plan_results import (
    Fed,
    Hit,
    base_schema,
    descriptor,
    fed_from,
    feeds_all,
    field_name,
    find_key,
    strings,
    value_type,
)
from prove.synth.plan_values import Prefer, ToolParams, is_running_text, user_value
from prove.synth.records import derived_rng
from prove.synth.sampling import StateLinks, param_kind

__all__ = ["LOOKUP_RATE", "Mention", "Planned", "Planner", "Resolvers", "ToolParams", "turn_calls", "speaking",
           "user_value"]

LOOKUP_RATE = 1.0  # how often an id the user supplies is named instead, where a listing resolves it
CARRIED_SHARE = 0.5  # of that, for an id people carry (an order number: `plan_lookup.CARRIED_KINDS`)
_NAME_FIELDS = ("name", "full_name", "display_name")  # the fields a person is named by
HOPS = 2  # how many things a lookup may go through that the user names too (user -> chat -> message)


@dataclass(frozen=True)
class Mention:
    """An argument as the user will mention it: the parameter, how its value reaches the call
    ('id', 'value', 'enum', 'text', 'number', 'bool' the user writes; 'named' by a lookup;
    'result-single' / 'result-item' / 'result-ordinal' from an earlier result), the value, and
    what the wording needs (enum words, the descriptor, `repeat` for a value given before)."""

    param: str
    kind: str
    value: Any
    info: dict[str, Any]


@dataclass
class Planned:
    """One rehearsed call: the tool, its arguments, how the user will mention them, its result."""

    step: int
    tool: str
    arguments: dict[str, Any]
    mentions: list[Mention]
    words: dict[str, str] = field(default_factory=dict)  # enum param -> the user's words
    result: Any = None
    intent: str = ""  # the chain's tool (differs from `tool` after an alternative switch)
    failed_first: dict[str, Any] | None = None
    template: str | None = None  # the user's request (data/intents), when the server has intents
    # param -> the read that finds its id ('param/scoping param' -> a one-hop lookup's first read)
    lookups: dict[str, Planned] = field(default_factory=dict)


def turn_calls(plans: list[Planned]) -> list[Planned]:
    """A turn's calls in the order the assistant makes them: each planned call's lookups (the reads
    that turn a name the user gave into the id the call needs), then the call."""
    return [q for p in plans for q in (*p.lookups.values(), p)]


@dataclass
class Attempt:
    """One step's rehearsal with one tool: the tool, the chain's step and its tool (`intent`), the
    arguments earlier results feed, and what the errors so far taught."""

    spec: ToolSpec
    step: int
    intent: str
    feeds: dict[str, Edge]
    lessons: Lessons = field(default_factory=Lessons)


@dataclass
class Draft:
    """A call's arguments as they are filled, parameter by parameter."""

    args: dict[str, Any] = field(default_factory=dict)
    mentions: list[Mention] = field(default_factory=list)
    words: dict[str, str] = field(default_factory=dict)
    lookups: dict[str, Planned] = field(default_factory=dict)

    def add(self, mention: Mention) -> None:
        self.args[mention.param] = mention.value
        self.mentions.append(mention)
        if mention.kind == "enum" and mention.info.get("words"):
            self.words[mention.param] = mention.info["words"]


@dataclass(frozen=True)
class Tried:
    """How rehearsing a step with one tool went: the call that works, or the last call that failed
    (both None when no arguments could be filled at all)."""

    planned: Planned | None
    failed: dict[str, Any] | None


def _reusable(spec: ToolSpec, param: str) -> bool:
    """Who or what the user acts on (a parameter that declares an entity kind: `user_id`, `repo`,
    `organizer_email`) carries over to later steps; attributes of a new thing (`email`, `name`,
    `phone`) do not."""
    return param_kind(spec, param) is not None


def _declared(spec: ToolSpec, mentions: list[Mention]) -> list[Mention]:
    """`mentions` with the entity kind each parameter declares in their `info["entity"]` (None:
    it names no entity), which is what the wording calls the thing (`phrasing.mention`)."""
    return [m if "entity" in m.info else replace(m, info={**m.info, "entity": param_kind(spec, m.param)})
            for m in mentions]


def _leaf_entity(spec: ToolSpec, result: Any, value: Any) -> str | None:
    """The entity kind `spec`'s output schema declares `value` is, where `result` holds it as an id."""
    return next((k for k, v in entity_values(result, spec.output_schema or {}) if repr(v) == repr(value)),
                None)


def _one_of_many(fed: Fed, hit: Hit, shown: list[Hit], naming: dict[str, str]) -> Fed:
    """The one object the errors and the conversation's world leave (`hit`) out of a listing that
    showed several (`shown`): "this lead" would not say which of the four, so the user picks it
    out by what tells it apart from all of them, or as the first one when it is; else unchanged."""
    if hit.item is None or not hit.siblings or len(hit.siblings) < 2:
        return fed  # not one object of a listing of several (a page's watcher ids): nothing to pick from
    descr = descriptor(hit.item, hit.siblings, hit.value)
    owner = re.findall(r"(\w+)\[\d+\]", hit.path)
    item = P.entity_of(singular(owner[-1])) if owner else ""  # what the listing lists
    if descr is not None:
        return Fed(hit.value, "result-item", {**fed.info, "descr_field": descr.field, "descr": descr.text,
                                              "descr_how": naming.get(descr.field), "item": item})
    if shown[0].siblings is hit.siblings and repr(shown[0].value) == repr(hit.value):
        return Fed(hit.value, "result-ordinal", {**fed.info, "item": item})  # the first of the listing
    return fed


def _param_schema(spec: ToolSpec, param: str) -> dict[str, Any]:
    return base_schema(spec.input_schema.get("properties", {}).get(param, {}))


def speaking(spec: ToolSpec) -> frozenset[str]:
    """The parameters that are the user themself in the tool's requests ("I'm {customer_id}")."""
    written = tool_intents(spec.server, spec.name)
    return frozenset(speaker(m) for a in (written.ask if written else ()) for m in SPEAKER.finditer(a))


def _near(belongs: Belonging | None, kind: str, value: Any, hits: list[Any]) -> bool:
    """Whether a listed id the user would name is theirs: it belongs with the conversation's ids,
    or its listed object holds an id one of the conversation's records holds (the customer of the
    account the user already named); True when the conversation has no ids yet."""
    if belongs is None:
        return True
    linked = {k.split(":", 1)[1] for k, recs in belongs.held.items() if recs & belongs.mine}
    return any(h.value == value and (belongs(kind, value, h.item) or strings(h.item) & linked)
               for h in hits)


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
        # (server, param) -> how the user gave it, for reuse in later steps
        self.given: dict[tuple[str, str], Mention] = {}
        # (server, entity kind) -> how the user said who they are ("I'm {customer_id}")
        self.speakers: dict[tuple[str, str], Mention] = {}
        self._worlds: dict[tuple[str, tuple[tuple[str, str], ...]], Belonging] = {}

    # -- the script ------------------------------------------------------------------------
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
        script.truncate(stop, keep_last=kind == "abstention",
                        server_of=lambda name: self.reg.tool(name).server)
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
        """The value the clarification turn leaves out: a required one the user gives, ids first
        (sensitive ones before others; a thing the user names, looked up, ranks with an id: the
        user answers the question with its name and the answering turn's calls hold the lookup),
        then numbers, values, enums and text."""
        if not plans:
            raise Infeasible("clarification turn without calls")
        first = plans[0]
        spec = self.reg.tool(first.tool)
        order = {"id": 0, "named": 0, "number": 1, "value": 2, "enum": 3, "text": 4}
        cands = [(order[m.kind] - (m.param in spec.sensitive), n, m)
                 for n, m in enumerate(first.mentions)
                 if m.kind in order and m.param in spec.required]
        if not cands:
            raise Infeasible(f"nothing the user supplies to withhold in {first.tool}")
        _, _, m = min(cands, key=lambda x: (x[0], x[1]))
        out = {"turn": k, "tool": first.tool, "param": m.param, "value": m.value,
               "supplied_in_turn": k + 1}
        if m.info.get("words"):
            out["words"] = m.info["words"]
        for pert in self.c.script.perturbations:
            if pert.get("type") == "withheld_information":
                pert.update(out)
        if m.kind == "named":  # how the user answers: by the name the lookup resolves
            out["named"] = {q: v for q, v in m.info.items() if q != "repeat"}
        return out

    # -- one step --------------------------------------------------------------------------
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
        primary = self._try(self.reg.tool(intent), step, intent, self.attempts)
        if primary.planned is not None:
            self._remember(primary.planned)
            return primary.planned
        last = primary.failed
        for alt in self.c.env.graph.alternatives(chain, step) if last is not None else ():
            got = self._try(self.reg.tool(alt), step, intent, 3).planned
            if got is not None:
                got.failed_first = {"name": last["name"], "arguments": last["arguments"]}
                self.c.go(State.PREPARE, "planned_alternative",
                          step=step, tool=intent, alternative=alt)
                self._remember(got)
                return got
        err = (last or {}).get("error", "no arguments")
        raise Infeasible(f"step {step} ({intent}) fails on seed {self.c.script.seed}: {str(err)[:160]}")

    def _speaker(self, spec: ToolSpec, param: str) -> Mention | None:
        """How the user gave who they are, when `param` is who is speaking ("I'm {customer_id}" in
        the tool's requests) and they said it before on this server (for any parameter of the kind)."""
        kind = param_kind(spec, param)
        if kind is None or param not in speaking(spec):
            return None
        return self.speakers.get((spec.server, kind))

    def _remember(self, planned: Planned) -> None:
        self.by_step[planned.step] = planned
        spec = self.reg.tool(planned.tool)
        for m in planned.mentions:
            kind = param_kind(spec, m.param)
            if kind is not None and m.kind in ("id", "named") and m.param in speaking(spec):
                self.speakers.setdefault((spec.server, kind), m)
            if m.kind in ("id", "value", "named") and _reusable(spec, m.param) \
                    and (spec.server, m.param) not in self.given:
                self.given[(spec.server, m.param)] = m

    def _try(self, spec: ToolSpec, step: int, intent: str, attempts: int) -> Tried:
        """Rehearse the step with `spec` up to `attempts` times, learning from each error. A read
        that works but holds nothing later steps need is kept only if nothing better comes."""
        at = Attempt(spec, step, intent, self._feeds(spec, step, intent))
        last: dict[str, Any] | None = None
        redraw: set[str] | None = None
        prev: Planned | None = None
        fallback: Planned | None = None
        for _ in range(attempts):
            planned = self._fill(at, prev, redraw)
            if planned is None:
                break
            logged = self.hub.call(spec.name, planned.arguments, episode_id=self.fork)
            if logged["ok"]:
                planned.result = logged["result"]
                if spec.write or feeds_all(planned.result, self.c.script.chain.consumers(step)):
                    return Tried(planned, None)
                fallback, redraw = fallback or planned, None
            else:
                err = str(logged["error"])
                last = {"name": spec.name, "arguments": planned.arguments, "error": err}
                redraw = learn(logged.get("detail"), spec, planned.arguments, at.lessons, self.rng)
            prev = planned
        if fallback is not None:  # a read that works but feeds nothing: later steps ask the user
            return Tried(fallback, None)
        return Tried(None, last)

    # -- one call's arguments --------------------------------------------------------------
    def _fill(self, at: Attempt, prev: Planned | None, redraw: set[str] | None) -> Planned | None:
        """The call's arguments: kept from the previous try unless the error asked to draw them
        again, fed by an earlier result, or supplied by the user (None: a required one cannot be)."""
        spec, forced = at.spec, at.lessons.forced
        draft = Draft()
        old = {m.param: m for m in prev.mentions} if prev is not None else {}
        template = prev.template if prev is not None else self._template(spec, at.feeds)
        asked = set(placeholders(template)) if template is not None else set()
        for param in spec.params:
            if param in PAGING:
                continue
            required = param in spec.required
            if prev is not None and param in old and (redraw is None and old[param].kind.startswith(
                    "result") or redraw is not None and param not in redraw):
                draft.add(old[param])
                for key, q in prev.lookups.items():  # its lookup, and the one that scoped it
                    if key == param or key.startswith(param + "/"):
                        draft.lookups[key] = q
                draft.mentions.extend(m for m in prev.mentions if m.info.get("scopes") == param)
                continue
            if prev is not None and param not in old and param not in forced and (
                    redraw is None or param not in redraw) and not required:
                continue
            if param in at.feeds:
                fed = self._fed(at, param)
                if fed is not None:
                    draft.add(fed)
                    continue
            if not required and param not in forced and (
                    param not in asked if template is not None else not self._optional(spec, param)):
                continue
            got = self._supplied(at, param, draft, redraw)
            if got is None:
                if required:
                    return None
                continue
            draft.add(got)
        self._picked_with(at, draft)
        return Planned(at.step, spec.name, draft.args, _declared(spec, draft.mentions), draft.words,
                       intent=at.intent, template=template, lookups=draft.lookups)

    def _picked_with(self, at: Attempt, draft: Draft) -> None:
        """A booking of something a search listed (`P.picks`: "I'll take the 10:00 slot") keeps
        what the search asked for and takes every value the picked object holds from that object:
        a value the user gives that an earlier read on the server was given under the same name
        (the service type, the dates, the party size) is that one; a parameter that the listed
        objects holding the fed value (the center's slots) also hold (the slot's start) is drawn
        among theirs, never a value the search did not return. Ids and who acts are left alone."""
        spec = at.spec
        if not P.picks(spec.name):
            return
        for n, other in enumerate(draft.mentions):  # what the search asked for, the booking takes
            q = other.param
            if other.kind not in ("value", "enum", "number") or q.endswith("_id") \
                    or q in ACTING_PARAMS or q in at.lessons.pinned:
                continue
            for s in sorted(self.by_step, reverse=True):
                before = self.by_step[s]
                if self.reg.tool(before.tool).server != spec.server or P.picks(before.tool):
                    continue
                said = next((b for b in before.mentions if b.param == q
                             and b.kind in ("value", "enum", "number")), None)
                if said is not None:
                    if said.value != other.value and repr(said.value) not in at.lessons.tried.get(q, ()):
                        draft.args[q] = said.value
                        draft.words.pop(q, None)
                        if said.kind == "enum" and said.info.get("words"):
                            draft.words[q] = said.info["words"]
                        draft.mentions[n] = Mention(q, said.kind, said.value,
                                                    {k: v for k, v in said.info.items() if k != "repeat"})
                    break
        fed = [m for m in draft.mentions if m.kind.startswith("result") and m.param in at.feeds
               and m.param not in ACTING_PARAMS]  # who books is not what they take
        for m in fed:
            src = self.by_step.get(at.feeds[m.param].source)
            if src is None:
                continue
            name = field_name(at.feeds[m.param].field or m.param)
            value = m.value[0] if isinstance(m.value, list) and m.value else m.value
            items = [h.item for h in find_key(src.result, name) or find_key(src.result, m.param)
                     if h.item is not None and h.value == value]
            for n, other in enumerate(draft.mentions):
                q = other.param
                if other.kind.startswith("result") or other.kind == "named" or q == m.param \
                        or q.endswith("_id") or q in at.lessons.pinned:
                    continue
                offered = [it[q] for it in items if isinstance(it.get(q), (str, int, float))
                           and not isinstance(it.get(q), bool)]
                bad = at.lessons.tried.get(q, set())
                offered = [v for v in dict.fromkeys(offered) if repr(v) not in bad]
                if not offered or draft.args.get(q) in offered:
                    continue
                picked = self.rng.choice(offered)
                draft.args[q] = picked
                draft.words.pop(q, None)
                draft.mentions[n] = Mention(q, "value", picked, {"from_listing": True})

    def _fed(self, at: Attempt, param: str) -> Mention | None:
        """The value an earlier result gives `param` along the chain's edge, among those the
        errors have not ruled out, preferring ones of the wanted state and the conversation's world."""
        edge, spec, lessons = at.feeds[param], at.spec, at.lessons
        src = self.by_step.get(edge.source)
        if src is None:
            return None
        name = field_name(edge.field or param)
        hits = find_key(src.result, name) or find_key(src.result, param)
        shown = hits
        schema = _param_schema(spec, param)
        want = value_type(schema)
        hits = [h for h in hits if want in (None, "string") and isinstance(h.value, str)
                or want in ("integer", "number") and isinstance(h.value, (int, float))]
        allowed = lessons.pinned.get(param)
        if allowed is not None:
            hits = [h for h in hits if h.value in allowed]
        bad = lessons.tried.get(param, set())
        hits = [h for h in hits if repr(h.value) not in bad] if bad else hits
        if lessons.wanted:
            hits = [h for h in hits if lessons.wanted & strings(h.item)] or hits
        belongs = self._belongs(spec, {})
        kind = param_kind(spec, param)
        if belongs is not None and kind is not None:  # the guest's reservation, not another's
            hits = [h for h in hits if belongs(kind, h.value, h.item)] or hits
        if not hits:
            return None
        made = self.reg.tool(src.tool)
        naming = P.ResultFields.of(made).naming
        fed = fed_from(hits, name, self.rng, naming, _leaf_entity(made, src.result, hits[0].value),
                       self.resolvers.own_kinds(self.reg.server(made.server), made.name))
        if fed.kind == "result-single" and len({repr(h.value) for h in shown}) > 1:
            fed = _one_of_many(fed, hits[0], shown, naming)
        if fed.kind in ("result-item", "result-ordinal") and self._named_since(edge.source, fed.value):
            # a later request already took it ("cancel the placed one"): "that order", not the
            # listing's word for it, which the change may have made wrong ("the placed order")
            fed = Fed(fed.value, "result-single", {k: v for k, v in fed.info.items()
                                                   if k not in ("descr_field", "descr", "descr_how", "item")})
        return Mention(param, fed.kind, [fed.value] if schema.get("type") == "array" else fed.value,
                       fed.info)

    def _named_since(self, source: int, value: Any) -> bool:
        """Whether a step after `source` (the listing a value is fed from) passed `value` as an
        argument: the user's next reference to that thing is to the one they last dealt with."""
        said = repr(value)
        return any(repr(v) == said or isinstance(v, list) and said in map(repr, v)
                   for s, p in self.by_step.items() if s > source for v in p.arguments.values())

    def _supplied(self, at: Attempt, param: str, draft: Draft, redraw: set[str] | None
                  ) -> Mention | None:
        """A value the user gives: one an error listed, one they gave earlier in the conversation,
        a thing they name (looked up), else a fresh draw (None: nothing fits)."""
        spec, lessons, rng = at.spec, at.lessons, self.rng
        tried = lessons.tried
        rate = self.lookup_rate * (CARRIED_SHARE if carried(param_kind(spec, param)) else 1.0)
        if param in lessons.pinned:  # an error listed the valid ids: the user names one of them
            if rng.random() < rate:
                found = self._lookup(at, param, draft, frozenset(map(repr, lessons.pinned[param])))
                if found is not None:
                    return found
            return Mention(param, "id", rng.choice(lessons.pinned[param]), {})
        given = self.given.get((spec.server, param))
        speaker = self._speaker(spec, param)
        if speaker is not None and param not in (redraw or ()) \
                and repr(speaker.value) not in tried.get(param, ()):  # one person throughout
            return Mention(param, speaker.kind, speaker.value, {**speaker.info, "repeat": True})
        if given is not None and param not in (redraw or ()) and rng.random() < 0.95 \
                and repr(given.value) not in tried.get(param, ()):
            return Mention(param, given.kind, given.value, {**given.info, "repeat": True})
        kind = param_kind(spec, param)
        for m in draft.mentions:  # a thing this call's lookup already had the user name (the user)
            if kind is not None and m.info.get("scopes") and m.param not in draft.args \
                    and param_kind(self.reg.tool(m.info["scope_tool"]), m.param) == kind:
                return Mention(param, "named", m.value, {q: v for q, v in m.info.items()
                                                         if q not in ("scopes", "scope_tool")})
        if rng.random() < rate:
            found = self._lookup(at, param, draft)
            if found is not None:
                return found
        prefer = Prefer(lessons.past, frozenset(lessons.wanted), self._belongs(spec, draft.args))
        got = None
        for _ in range(4):
            got = user_value(spec, param, self.c.ctx, rng, draft.args, prefer, self.params)
            if got is None or repr(got.value) not in tried.get(param, ()):
                break
        if got is None:
            return None
        return Mention(param, got.kind, got.value, {"words": got.words} if got.words else {})

    # -- lookups and belonging -------------------------------------------------------------
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
        key = (spec.server, tuple((k, repr(v)) for k, v in used))
        found = self._worlds.get(key)
        if found is None:  # the same ids give the same world: built once per conversation
            found = self._worlds[key] = Belonging.of(self.links.records(spec.server, self.c.script.seed),
                                                     used, self.c.ctx.attrs)
        return found

    def _lookup(self, at: Attempt, param: str, draft: Draft, allowed: frozenset[str] | None = None,
                hops: int = HOPS, scope: dict[str, Any] | None = None) -> Mention | None:
        """The user names the thing instead of giving its id: a listing of its kind, scoped by the
        ids the conversation already uses (the customer's accounts), is called on the fork and one
        listed object, told apart from the others by a field ("the account named 'Everyday'"),
        gives the id. A listing the conversation already called with the same arguments (earlier,
        or for another parameter of this call) is read again instead of called twice; a new call
        goes into `draft.lookups`. `allowed` (repr of ids an error listed as valid) limits the pick.
        A listing that needs an id the conversation does not have yet (a bank's transactions are
        listed per account) is reached by naming that thing too, up to `hops` deep (`_hop`;
        `scope`: the ids, by entity kind, the call that hops already has). None when no listing of
        the kind can be called with what the conversation knows, or none tells its objects apart."""
        spec = at.spec
        kind = param_kind(spec, param)
        schema = _param_schema(spec, param)
        if kind is None or schema.get("type") not in ("string", "integer"):
            return None
        known = {**dict(self._used(spec, draft.args)), **(scope or {})}  # kind -> the latest id of it
        made = {(q.tool, canonical_json(q.arguments)): q
                for q in [*(q for p in self.by_step.values() for q in p.lookups.values()),
                          *draft.lookups.values()]}
        pick = Pick(kind, schema["type"], draft.args, self._belongs(spec, draft.args),
                    at.lessons.tried.get(param, set()), allowed)
        selves = self._names_elsewhere(spec.server) if param in ACTING_PARAMS or param in speaking(spec) \
            else frozenset()
        for resolver in self.resolvers(self.reg.server(spec.server), kind):
            listing = self.reg.tool(resolver.tool)
            scoping = listing_arguments(listing, self.params(listing), known)
            if not scoping and hops:
                scoping = self._hop(at, param, listing, draft, hops, known)
            for rargs in scoping:
                earlier = made.get((resolver.tool, canonical_json(rargs)))
                if earlier is not None:
                    result = earlier.result
                else:
                    logged = self.hub.call(resolver.tool, rargs, episode_id=self.fork)
                    if not logged["ok"]:
                        continue
                    result = logged["result"]
                hits = find_key(result, resolver.id_field)
                if selves:  # who the user said they are elsewhere: the same person here, or no name
                    hits = [h for h in hits if strings(h.item) & selves]
                named = pick_named(hits, pick, self.rng)
                if named is None:
                    continue
                if not rargs and not _near(pick.belongs, kind, named.value, hits):
                    continue  # an unscoped listing's other people's things: the user gives the id
                if earlier is None:
                    draft.lookups[param] = Planned(at.step, resolver.tool, dict(rargs), [],
                                                   result=result, intent="lookup")
                return Mention(param, "named", named.value,
                               {"descr_field": named.descriptor.field,
                                "descr": named.descriptor.text, "lookup": resolver.tool,
                                "descr_how": P.ResultFields.of(listing).naming.get(
                                    named.descriptor.field)})
        for key in [k for k in draft.lookups if k.startswith(param + "/")]:  # a hop that led nowhere
            del draft.lookups[key]
        draft.mentions[:] = [m for m in draft.mentions if m.info.get("scopes") != param]
        return None

    def _names_elsewhere(self, server: str) -> frozenset[str]:
        """The names the user gave themself on the conversation's other servers ("I'm Noah
        Garcia" on messaging): one person keeps one name, so a lookup of who they are on `server`
        names the same person or no one (the user then gives their id)."""
        out = set()
        for p in self.by_step.values():
            for m in p.mentions:
                tool = self.reg.tool(m.info.get("scope_tool") or p.tool)
                if tool.server != server and m.kind == "named" and m.info.get("descr_field") in _NAME_FIELDS \
                        and (m.param in ACTING_PARAMS or m.param in speaking(tool)):
                    out.add(str(m.info["descr"]))
        return frozenset(out)

    def _hop(self, at: Attempt, param: str, listing: ToolSpec, draft: Draft, hops: int,
             known: dict[str, Any]) -> list[dict[str, Any]]:
        """The arguments of a listing that needs one id the conversation does not have (the
        account a transaction is listed under), once the user names that thing too: it is looked
        up as the listing's own parameter, itself in a hop where `hops` allows (a chat message in
        a conversation of the user's); its lookups go first in `draft.lookups`, under
        'param/...', and the user's words for it are mentions of the listings' parameters that
        `scope` `param` ("the Blue Bottle transaction ... on my Everyday account"). Only where the
        call itself has no such parameter; [] when it cannot be named."""
        feats = self.params(listing)
        missing = [q for q in listing.required if q not in PAGING and feats[q].entity not in known]
        if len(missing) != 1 or missing[0] in at.spec.params or feats[missing[0]].entity is None:
            return []
        q = missing[0]
        inner = Draft(lookups=dict(draft.lookups))
        got = self._lookup(Attempt(listing, at.step, at.intent, {}), q, inner, hops=hops - 1, scope=known)
        if got is None:
            return []
        scoping = listing_arguments(listing, feats, {**known, feats[q].entity: got.value})
        if scoping:
            for key, read in inner.lookups.items():
                if key not in draft.lookups:
                    draft.lookups[f"{param}/{key}"] = read
            draft.mentions.extend(replace(m, info={"entity": param_kind(listing, m.param), **m.info,
                                                   "scopes": param}) for m in inner.mentions)
            draft.mentions.append(replace(got, info={"entity": feats[q].entity, **got.info, "scopes": param,
                                                     "scope_tool": listing.name}))
        return scoping

    # -- the user's request ----------------------------------------------------------------
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
        """Whether the user also gives an optional parameter no request template asks for: now and
        then a text of a write, rarely a filter of a read."""
        feat = self.params(spec)[param]
        if spec.write and is_running_text(feat):
            return self.rng.random() < 0.25
        if not spec.write and feat.enum:
            return self.rng.random() < 0.1
        return False
