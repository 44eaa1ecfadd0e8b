"""The programmatic teacher (offline default): rehearses the chain on a live fork (see
`prove.synth.planner`), then writes the user turns from per-tool phrasings and plays the assistant,
slips and recoveries included.

    teacher = ProgrammaticTeacher(slip_rate=0.06)
    outcome = await run_conversation(script, teacher, env)

User turns render each planned call with one of the tool's written requests (data/intents) and
its arguments in the user's words, spoken by one persona per conversation (drawn from the
example's seed: brief or chatty, polite or curt, a typo now and then; who they are said once): a
value the call needs is written, fed by an earlier result ("that account", "the downtown order"),
or, for an id a listing resolves, given by name ("my Everyday account"; `lookup_rate`), in which
case the listing call goes into the turn's ground truth before the call that needs the id.
Requests of one turn are joined by how they relate (a condition on what the first finds, a
consequence of a change), with one reason per conversation (data/intents motives). The closing
reply of a turn says in sentences what the calls found or did and shows every item a later turn
refers to. As the assistant it issues the planned calls (lookups
first) one by one; with a small seeded probability it slips (drops a required argument, misnames
the tool) and repairs the call from the error's structured detail (prove.env.errors); with an enum
removed from the offered schema it first sends the user's words and then the offered value closest
to them. Deterministic for a seed.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from typing import Any

from prove.env.tool import ToolSpec
from prove.synth import phrasing as P
from prove.synth.evidence import ACTING_PARAMS
from prove.synth.intents import intents_of, placeholders, tool_intents
from prove.synth.machine import Action, Conversation, TeacherError
from prove.synth.plan_lookup import carried, name_unserved
from prove.synth.planner import (
    LOOKUP_RATE,
    Planned,
    Planner,
    Resolvers,
    ToolParams,
    speaking,
    turn_calls,
    user_value,
)
from prove.synth.records import derived_rng
from prove.synth.sampling import StateLinks, param_kind

__all__ = ["ProgrammaticTeacher", "Planned", "repair_call"]

def _norm(text: Any) -> str:
    return re.sub(r"[^a-z0-9]", "", str(text).lower())


def _best(guess: Any, options: list[str]) -> str:
    for o in options:
        if _norm(o) == _norm(guess):
            return o
    close = difflib.get_close_matches(str(guess), options, n=1, cutoff=0.0)
    return close[0] if close else options[0]


def repair_call(last: dict[str, Any], intended: dict[str, Any]) -> dict[str, Any]:
    """Correct a failed call from its error's structured detail (prove.env.errors): the closest
    tool name it offers, the intended value of a parameter it asks for or of an id it could not
    find, the offered choice closest to a value it refused; falls back to the intended call when
    the detail names nothing fixable. Never reads the message's wording."""
    detail = last.get("detail") or {}
    reason = detail.get("reason")
    choices = [str(c) for c in detail.get("choices") or ()]
    name = str(last.get("name"))
    args = dict(last["arguments"]) if isinstance(last.get("arguments"), dict) else {}
    fixed = False
    if reason == "unknown_tool" and choices:
        name = intended["name"] if intended["name"] in choices else choices[0]
        fixed = True
    about = [p for p in detail.get("params") or () if isinstance(p, str)]
    for param in about:
        if param not in args and param in intended["arguments"]:  # asked for
            args[param] = intended["arguments"][param]
            fixed = True
        elif param in args and reason == "not_found" and param in intended["arguments"]:
            args[param] = intended["arguments"][param]
            fixed = True
        elif param in args and reason == "invalid" and choices and isinstance(args[param], str):
            args[param] = _best(args[param], choices)
            fixed = True
    if not fixed:
        return {"name": intended["name"], "arguments": dict(intended["arguments"])}
    return {"name": name, "arguments": args}


def _entities(spec: Any) -> dict[str, str | None]:
    """Each parameter's declared entity kind (None: names no entity), for filling a request."""
    return {q: param_kind(spec, q) for q in spec.params}


def _links(convo: Conversation, plans: list[Planned]) -> list[str]:
    """How each planned request of a turn follows the one before (a key of ``phrasing.LINKS``): it
    uses a value the one before returned ("fed"), it comes after a change ("after_write"), or it is
    a separate errand ("apart")."""
    out = ["apart"]
    for prev, p in zip(plans, plans[1:], strict=False):
        seen = json.dumps(prev.result, default=str)
        if any(m.kind.startswith("result") and json.dumps(m.value, default=str).strip('"') in seen
               for m in p.mentions):
            out.append("fed")
        elif convo.env.registry.tool(prev.tool).write:
            out.append("after_write")
        else:
            out.append("apart")
    return out


def _referred(later: list[list[Planned]]) -> dict[str, list[str]]:
    """The values later turns take from results or name (repr -> the fields they pick the item out
    by): what a reply must show where its results hold them."""
    out: dict[str, list[str]] = {}
    for plans in later:
        for p in plans:
            for m in p.mentions:
                if m.kind.startswith("result") or m.kind == "named":  # a listing may have shown it
                    for v in m.value if isinstance(m.value, list) else [m.value]:
                        fields = out.setdefault(repr(v), [])
                        if m.info.get("descr_field") and m.info["descr_field"] not in fields:
                            fields.append(m.info["descr_field"])
    return out


def _holds(result: Any, show: dict[str, list[str]]) -> bool:
    """Whether a result holds a value a later turn takes from it."""
    if isinstance(result, dict):
        return any(_holds(v, show) for v in result.values())
    if isinstance(result, list):
        return any(_holds(v, show) for v in result)
    return repr(result) in show


class ProgrammaticTeacher:
    """Deterministic teacher: plan on a fork, then render and act (see module docstring)."""

    name = "programmatic"

    def __init__(self, slip_rate: float = 0.06, attempts: int = 8,
                 lookup_rate: float = LOOKUP_RATE, links: StateLinks | None = None) -> None:
        self.slip_rate = slip_rate
        self.attempts = attempts
        self.lookup_rate = lookup_rate  # how often a user-given id is named and looked up instead
        self.params = ToolParams()  # each tool's parameters, read once for the run
        self.resolvers = Resolvers()  # each server's listings by entity kind, read once for the run
        self.links = links  # which ids of a seed's state belong together (built on first use)
        self._names: list[str] | None = None
        self._misses: dict[str, str | None] = {}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "slip_rate": self.slip_rate, "attempts": self.attempts,
                "lookup_rate": self.lookup_rate}

    # -- planning --------------------------------------------------------------------------
    async def prepare(self, convo: Conversation) -> None:
        if self.links is None or self.links.registry is not convo.env.registry:
            self.links = StateLinks(convo.env.registry)
        Planner(convo, self.attempts, self.params, self.resolvers, self.links, self.lookup_rate).run()
        convo.scratch["persona"] = P.draw_persona(derived_rng("persona", convo.script.example_id,
                                                              convo.script.seed), self._who(convo))
        convo.scratch["introduced"] = {}

    def _who(self, convo: Conversation) -> str | None:
        """The user's name where the conversation's calls act as a person it names (the customer
        the calls are for, looked up by the field its listing declares names it, `naming` 'name' or
        'alone', never a title or an undeclared field; a parameter of ``quality.ACTING_PARAMS`` or one a
        request says "I'm {...}" of, never an invitee or an assignee): the persona's own; None when
        no call names one."""
        withheld = convo.scratch.get("withheld") or {}
        for plans in convo.scratch["plans"]:
            for p in plans:
                for m in p.mentions:  # a mention that scopes a lookup is of that listing's parameter
                    spec = convo.env.registry.tool(m.info.get("scope_tool") or p.tool)
                    kind = param_kind(spec, m.param)
                    if m.param not in ACTING_PARAMS and m.param not in speaking(spec):
                        continue  # a person the user acts on (an invitee) is not the user
                    if (p.tool, m.param) == (withheld.get("tool"), withheld.get("param")):
                        continue  # who they are is what the assistant asks: not said before
                    if m.kind == "named" and kind and P._person(kind.replace("_", " ")) \
                            and P._described_as(m.info.get("descr_how")) == "named":
                        return str(m.info["descr"])
        return None

    # -- user side -------------------------------------------------------------------------
    async def user_message(self, convo: Conversation, k: int) -> str:
        spec = convo.script.turns[k]
        rng = convo.rng
        if spec.kind == "abstain":
            return self._off_topic(convo, k)
        withheld = convo.scratch.get("withheld")
        if spec.supplies and withheld:
            return P.supply_text(withheld["param"], withheld["value"], rng, withheld.get("words"),
                                 withheld.get("named"))
        plans = convo.scratch["plans"][k + 1 if spec.kind == "clarify" else k]
        follow_up = any(t.kind == "act" for t in convo.script.turns[:k])
        persona: P.Persona = convo.scratch["persona"]
        introduced: dict[str, Any] = convo.scratch["introduced"]
        said: set[str] = convo.scratch.setdefault("said", set())
        now: set[str] = set()
        parts, written, selves = [], True, []
        for n, p in enumerate(plans):
            tool = convo.env.registry.tool(p.tool)
            hidden = withheld["param"] if spec.kind == "clarify" and withheld and n == 0 else None
            kept = []
            for m in p.mentions:
                if spec.kind == "clarify" and withheld and (
                        m.param == hidden or repr(m.value) == repr(withheld["value"])):
                    continue
                key = f"{m.param}={m.value!r}"
                if m.info.get("repeat") and (key in now or key in said and rng.random() < 0.85):
                    continue
                now.add(key)
                if m.info.get("scopes") and m.param in ACTING_PARAMS \
                        and P._described_as(m.info.get("descr_how")) == "named":
                    selves.append(f"I'm {m.info['descr']}.")  # whose listing it is: the user
                    if spec.kind != "clarify":
                        introduced.setdefault(m.param, m.value)
                    continue
                kept.append((m.param, m.kind, m.value,
                             {k: v for k, v in m.info.items() if k != "repeat"}))
            if p.template is not None:
                entities = _entities(tool)
                numbers = frozenset(q for q, sch in tool.input_schema.get("properties", {}).items()
                                    if sch.get("type") in ("integer", "number"))
                template = p.template
                if persona.typos and rng.random() < 0.3:
                    template = P.typo(template, rng)
                written_tool = tool_intents(tool.server, tool.name)
                parts.append(P.fill_request(template, kept, entities, rng, hidden, numbers,
                                            introduced if spec.kind != "clarify" else None,
                                            flags=written_tool.flags if written_tool is not None else None))
            else:
                written = False
                phrase = rng.choice(P.tool_phrases(tool))
                parts.append(P.step_text(phrase, [P.mention(q, v, k, rng, **i) for q, k, v, i in kept], rng))
        if not (spec.kind == "clarify"):
            said |= now
        if written:
            text = P.join_requests(parts, rng, follow_up, _links(convo, plans))
        else:
            text = P.render_turn(parts, rng, follow_up)
        selves = [said for said in dict.fromkeys(selves) if said[4:-1] not in text]  # not said yet
        if selves:
            text = text.rstrip() + " " + " ".join(selves)
        motive = None
        if spec.kind == "act" and not convo.scratch.get("motive_given") and plans \
                and P.wants_motive(persona, rng, first=k == 0):
            found = intents_of(convo.env.registry.tool(plans[0].tool).server)
            fitting = found.motives_for(p.intent or p.tool for p in plans) if found is not None else ()
            if fitting:  # a reason declared for every request of the turn (data/intents motives)
                motive = rng.choice(fitting)
                convo.scratch["motive_given"] = True
        return P.speak(persona, text, rng, first=k == 0, motive=motive)

    def _off_topic(self, convo: Conversation, k: int) -> str:
        topic = convo.script.turns[k].off_topic or {}
        if topic.get("source") != "tool":
            return str(topic.get("text") or P.GENERIC_OFF_TOPIC[0])
        spec = convo.env.registry.tool(topic["tool"])
        ctx = convo.env.sampler.probe(spec.server, convo.script.seed)
        rng = convo.rng
        written = tool_intents(spec.server, spec.name)
        if written is not None:
            template = rng.choice(written.ask)
            args: dict[str, Any] = {}
            episode = f"{convo.script.example_id}/off-topic"
            spoken = frozenset(P.speaker(m) for m in P.SPEAKER.finditer(template))
            convo.env.hub.close(episode)
            convo.env.hub.open(episode, convo.script.seed)
            try:
                drawn = []
                for param in placeholders(template):
                    got = user_value(spec, param, ctx, rng, args, params=self.params)
                    if got is None:
                        break
                    args[param] = got.value
                    drawn.append((param, got))
                else:  # every id drawn first: each scopes the listings that name the others
                    kept = [self._unserved(convo, spec, param, got, args, episode, rng, spoken)
                            for param, got in drawn]
                    _record_ids(convo, spec, [(m[0], m[1], m[2]) for m in kept if m is not None])
                    entities = _entities(spec)
                    return P.fill_request(template, [m for m in kept if m is not None], entities, rng,
                                          flags=written.flags)
            finally:
                convo.env.hub.close(episode)
        mentions = []
        args = {}
        for param in spec.required:
            got = user_value(spec, param, ctx, rng, args, params=self.params)
            if got is not None:
                args[param] = got.value
                mentions.append(P.mention(param, got.value, got.kind, rng, words=got.words,
                                          entity=param_kind(spec, param)))
        _record_ids(convo, spec, [(q, "id", v) for q, v in args.items()])
        text = P.step_text(rng.choice(P.tool_phrases(spec)), mentions, rng)
        return P.render_turn([text], rng, follow_up=k > 0)

    def _unserved(self, convo: Conversation, spec: ToolSpec, param: str, got: Any,
                  args: dict[str, Any], episode: str, rng: Any, spoken: frozenset[str]
                  ) -> tuple[str, str, Any, dict[str, Any]] | None:
        """One value of an off-topic request in the user's words: an id of a kind people do not
        carry is named by what a listing of its kind shows of it ("the Front Door lock"; the
        request's other ids scope the listing), and the user's own id where the request says who
        they are (`spoken`: "It's {user_id} here") is left unsaid (None: that clause is dropped);
        any other value as drawn."""
        kind = param_kind(spec, param)
        if got.kind != "id" or kind is None or carried(kind):
            return (param, got.kind, got.value, {"words": got.words} if got.words else {})
        known = {k: v for q, v in args.items() if q != param and (k := param_kind(spec, q))}
        json_type = spec.input_schema.get("properties", {}).get(param, {}).get("type", "string")
        named = name_unserved(convo.env.hub, convo.env.registry.server(spec.server), self.resolvers,
                              self.params, kind, json_type, known, episode, rng, got.value)
        if named is not None:
            return (param, "named", named.value,
                    {"descr_field": named.descriptor.field, "descr": named.descriptor.text})
        if param in spoken:
            return None
        return (param, got.kind, got.value, {})

    # -- assistant side --------------------------------------------------------------------
    async def assistant(self, convo: Conversation, k: int) -> Action:
        spec = convo.script.turns[k]
        rng = convo.rng
        if spec.kind == "clarify":
            withheld = convo.scratch["withheld"]
            written = tool_intents(convo.env.registry.tool(withheld["tool"]).server, withheld["tool"])
            asks = written.clarify.get(withheld["param"]) if written is not None else None
            if asks:
                return Action(text=rng.choice(asks), note="ask")
            return Action(text=P.clarify_question(withheld["param"], rng), note="ask")
        if spec.kind == "abstain":
            servers = [convo.env.registry.server(s) for s in convo.script.servers]
            return Action(text=P.abstain_reply(servers, rng), note="abstain")
        plans: list[Planned] = turn_calls(convo.scratch["plans"][k])
        made, ok = convo.turn_calls(k), convo.successful(k)
        done = len(ok)
        if ok and ok[-1]["result"] != plans[done - 1].result:
            raise TeacherError(f"plan divergence at {ok[-1]['name']}")
        notes = convo.scratch.setdefault("notes", {})
        if made and not made[-1]["ok"]:
            p = plans[done]
            if p.failed_first and made[-1]["name"] == p.failed_first["name"]:
                return Action(give_up=True, note="error names nothing to fix")
            return Action(calls=[repair_call(made[-1], {"name": p.tool, "arguments": p.arguments})],
                          note="repair")
        if done < len(plans):
            p = plans[done]
            key = (k, done)
            if p.failed_first and (key, "primary") not in notes:
                notes[(key, "primary")] = True
                return Action(calls=[dict(p.failed_first)], note="primary")
            call = {"name": p.tool, "arguments": dict(p.arguments)}
            removed = convo.scratch.get("enum_removed", set())
            for param, words in p.words.items():
                if (p.tool, param) in removed and words != p.arguments.get(param):
                    call["arguments"][param] = words
                    return Action(calls=[call], note="enum_guess")
            if (key, "slip") not in notes and rng.random() < self.slip_rate:
                notes[(key, "slip")] = True
                slipped = self._slip(convo, call, rng)
                if slipped is not None:
                    return Action(calls=[slipped[0]], note="slip:" + slipped[1])
            return Action(calls=[call], note="planned")
        return Action(text=self._reply(convo, k, plans, ok), note="summary")

    def _reply(self, convo: Conversation, k: int, plans: list[Planned], ok: list[dict[str, Any]]) -> str:
        """The assistant's closing message of turn k, in sentences: what each call (the lookups
        only where a later turn refers to what they listed) found or did, showing every item a
        later turn refers to, by the field the user will pick it out by."""
        show = _referred(convo.scratch["plans"][k + 1:])
        said = []
        for p, call in zip(plans, ok, strict=False):
            spec = convo.env.registry.tool(call["name"])
            if p.intent == "lookup" and not _holds(call["result"], show):
                continue
            said.append(P.describe_result(spec, call["result"], convo.rng, show))
        return " ".join(said[-4:]) if said else "Done."

    def _slip(self, convo: Conversation, call: dict[str, Any], rng: Any
              ) -> tuple[dict[str, Any], str] | None:
        spec = convo.env.registry.tool(call["name"])
        options = []
        if spec.required and all(r in call["arguments"] for r in spec.required):
            options.append("missing_arg")
        wrong = self._near_miss(convo, spec.name)
        if wrong:
            options.append("wrong_name")
        if not options:
            return None
        kind = rng.choice(options)
        if kind == "missing_arg":
            drop = rng.choice(sorted(spec.required))
            return {"name": call["name"], "arguments": {k: v for k, v in call["arguments"].items()
                                                        if k != drop}}, kind
        return {"name": wrong, "arguments": dict(call["arguments"])}, kind

    def _near_miss(self, convo: Conversation, name: str) -> str | None:
        """A wrong tool name whose "did you mean" hint lists the right one (memoised)."""
        if name not in self._misses:
            self._misses[name] = self._find_near_miss(convo, name)
        return self._misses[name]

    def _find_near_miss(self, convo: Conversation, name: str) -> str | None:
        if self._names is None:
            self._names = sorted(convo.env.registry.tools)
        words = name.split("_")
        cands = [name + "_details", name + "s" if not name.endswith("s") else name[:-1],
                 "get_" + name if words[0] != "get" else "fetch_" + "_".join(words[1:])]
        for cand in cands:
            if cand in convo.env.registry.tools:
                continue
            if name in difflib.get_close_matches(cand, self._names, n=3, cutoff=0.5):
                return cand
        return None

    async def alternative(self, convo: Conversation, k: int, failed: dict[str, Any],
                          options: list[str]) -> Action | None:
        plans: list[Planned] = turn_calls(convo.scratch["plans"][k])
        done = len(convo.successful(k))
        if done < len(plans) and plans[done].failed_first and plans[done].tool in options:
            p = plans[done]
            return Action(calls=[{"name": p.tool, "arguments": dict(p.arguments)}],
                          note="alternative")
        return None


def _record_ids(convo: Conversation, spec: ToolSpec, said: Sequence[tuple[str, str, Any]]) -> None:
    """The ids an off-topic request says, with the entity kind its tool declares for each
    (``convo.scratch["off_topic_ids"]``, written into the example's irrelevant_query record): no
    call carries them, and the card reads what kind of id a user turn gives from there."""
    ids = convo.scratch.setdefault("off_topic_ids", {})
    for param, kind, value in said:
        entity = param_kind(spec, param)
        if kind == "id" and entity is not None and isinstance(value, (str, int)):
            ids[str(value)] = entity
