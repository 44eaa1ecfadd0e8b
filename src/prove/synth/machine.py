"""The conversation state machine: sample → prepare → (query → assistant → execute → observe →
recover | alternative → respond) per user turn → finish | abort, every transition logged.

    outcome = await run_conversation(script, teacher, env)   # Outcome(example=..., reason=None)

A `Script` says what to generate (kind, chain, seed, turn layout, perturbations, offered tools);
a `Teacher` writes the user turns and plays the assistant (the protocol below is all the machine
knows of one; `prove.synth.programmatic` and `prove.synth.openai_teacher` implement it); the
machine executes every call live through the in-process hub, feeds errors back, retries at most
`max_retries` times in a row, then asks the teacher to switch to an alternative tool from the
graph, and aborts with a reason when nothing works. Nothing a teacher returns can crash it.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from prove.env.effects import effect_hash
from prove.env.hub import Hub
from prove.env.registry import Registry
from prove.graph.chains import Chain, ToolGraph
from prove.synth.evidence import call_stats, held_in, json_values, provenance, text_has_value
from prove.synth.phrasing import system_prompt
from prove.synth.records import chain_split, derived_rng
from prove.synth.sampling import LiveSampler, SamplingContext

__all__ = [
    "State", "TurnSpec", "Script", "Action", "Conversation", "Outcome", "Teacher", "SynthEnv",
    "Infeasible", "TeacherError", "run_conversation", "TRANSITIONS",
]


class State(str, Enum):
    SAMPLE = "sample"
    PREPARE = "prepare"
    GENERATE_QUERY = "generate_query"
    ASSISTANT_STEP = "assistant_step"
    EXECUTE = "execute"
    OBSERVE = "observe"
    RECOVER = "recover"
    ALTERNATIVE = "alternative"
    RESPOND = "respond"
    NEXT_TURN = "next_turn"
    FINISH = "finish"
    ABORT = "abort"


S = State
TRANSITIONS: dict[State, frozenset[State]] = {
    S.SAMPLE: frozenset({S.PREPARE, S.ABORT}),
    S.PREPARE: frozenset({S.PREPARE, S.GENERATE_QUERY, S.ABORT}),  # self-loop: planning notes
    S.GENERATE_QUERY: frozenset({S.ASSISTANT_STEP, S.ABORT}),
    S.ASSISTANT_STEP: frozenset({S.EXECUTE, S.RESPOND, S.ALTERNATIVE, S.ABORT}),
    S.EXECUTE: frozenset({S.OBSERVE}),
    S.OBSERVE: frozenset({S.ASSISTANT_STEP, S.RECOVER, S.ALTERNATIVE, S.ABORT}),
    S.RECOVER: frozenset({S.EXECUTE, S.RESPOND, S.ALTERNATIVE, S.ABORT}),
    S.ALTERNATIVE: frozenset({S.EXECUTE, S.ABORT}),
    S.RESPOND: frozenset({S.NEXT_TURN, S.FINISH, S.ABORT}),
    S.NEXT_TURN: frozenset({S.GENERATE_QUERY}),
    S.FINISH: frozenset(),
    S.ABORT: frozenset(),
}
"""The legal transitions; `Conversation.go` refuses any other (a bug, not a data problem)."""


class Infeasible(Exception):
    """The chain cannot be realised on this seed (no arguments make a step succeed)."""


class TeacherError(Exception):
    """The teacher could not produce a turn (transport error, empty or unusable answer)."""


@dataclass(frozen=True)
class TurnSpec:
    """One user turn: `act` (calls expected), `clarify` (assistant must ask), `abstain`."""

    kind: str
    steps: tuple[int, ...] = ()  # chain positions this turn asks for
    supplies: bool = False  # the act turn that answers a clarification question
    off_topic: Mapping[str, Any] | None = None  # for abstain: {"source": "generic"|"tool", ...}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "steps": list(self.steps)}
        if self.supplies:
            out["supplies"] = True
        if self.off_topic is not None:
            out["off_topic"] = dict(self.off_topic)
        return out


@dataclass
class Script:
    """What to generate; fixed (and recorded) before the teacher runs."""

    example_id: str
    kind: str
    index: int
    seed: int
    chain: Chain
    turns: list[TurnSpec]
    perturbations: list[dict[str, Any]]
    tools: list[dict[str, Any]]  # offered OpenAI function schemas, after perturbation
    split: str = "train"
    global_seed: int = 0
    val_fraction: float = 0.1

    def truncate(self, stop: int, keep_last: bool = False,
                 server_of: Callable[[str], str] | None = None) -> None:
        """Keep chain positions < stop (a step that cannot run ends the conversation early);
        turns are cut to match (an abstention turn at the end is kept when `keep_last`). With
        `server_of` (tool name -> server), a server the cut chain no longer uses stops being
        offered: its tools and its enum removals go, recorded distractors stay."""
        tail = self.turns[-1] if keep_last else None
        body = self.turns[:-1] if keep_last else self.turns
        turns = []
        for t in body:
            if t.kind != "act" and not t.steps:
                turns.append(t)
                continue
            steps = tuple(s for s in t.steps if s < stop)
            if steps:
                turns.append(TurnSpec(t.kind, steps, t.supplies, t.off_topic))
            elif t.kind == "act":
                break
        if tail is not None:
            turns.append(tail)
        c = self.chain
        if stop > 0:
            self.chain = Chain(c.tools[:stop], c.servers[:stop],
                               tuple(e for e in c.edges if e.target < stop))
        self.turns = turns
        self.split = chain_split(self.chain.chain_id, self.val_fraction, self.global_seed)
        if server_of is not None:
            keep = set(self.servers)
            recorded = {n for p in self.perturbations if p.get("type") == "distractor_tools"
                        for n in p["tools"]}
            self.perturbations = [p for p in self.perturbations if p.get("type") != "enum_removed"
                                  or server_of(p["tool"]) in keep]
            self.tools = [t for t in self.tools if server_of(t["function"]["name"]) in keep
                          or t["function"]["name"] in recorded]

    @property
    def servers(self) -> list[str]:
        return sorted(set(self.chain.servers))


@dataclass
class Action:
    """What the assistant does next: call tools, or write text; `give_up` asks for an alternative."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    text: str | None = None
    give_up: bool = False
    note: str = ""


@dataclass
class SynthEnv:
    """Per-process machinery: hub, registry, graph, live sampler and limits."""

    hub: Hub
    graph: ToolGraph
    sampler: LiveSampler
    max_retries: int = 2
    max_steps_per_turn: int = 12
    show_context: bool = False

    @property
    def registry(self) -> Registry:
        return self.hub.registry


@dataclass
class Conversation:
    """Live state of one generation; teachers read it and keep their own notes in `scratch`."""

    script: Script
    env: SynthEnv
    episode: str
    ctx: SamplingContext = field(default_factory=SamplingContext)
    messages: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)  # ground truth per user turn
    logged: list[dict[str, Any]] = field(default_factory=list)  # every call: logged + turn
    transitions: list[list[Any]] = field(default_factory=list)
    scratch: dict[str, Any] = field(default_factory=dict)
    state: State = State.SAMPLE
    n_ids: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def go(self, new: State, event: str, **detail: Any) -> None:
        if new not in TRANSITIONS[self.state]:
            raise RuntimeError(f"illegal transition {self.state.value} -> {new.value} ({event})")
        row: list[Any] = [self.state.value, new.value, event]
        if detail:
            row.append(detail)
        self.transitions.append(row)
        self.state = new

    # -- views teachers use ---------------------------------------------------------------
    def turn_calls(self, k: int) -> list[dict[str, Any]]:
        """Logged calls made during user turn k (failed ones included)."""
        return [c for c in self.logged if c["turn"] == k]

    def successful(self, k: int | None = None) -> list[dict[str, Any]]:
        return [c for c in self.logged if c["ok"] and (k is None or c["turn"] == k)]

    def results_before(self, k: int) -> list[dict[str, Any]]:
        return [c for c in self.logged if c["ok"] and c["turn"] < k]

    def context_lines(self, cap: int = 4) -> list[str]:
        """The sampled values that could fill the chain's parameters, as prompt lines."""
        specs = [self.env.registry.tool(t) for t in sorted(set(self.script.chain.tools))]
        return self.ctx.context_lines(specs, cap)


class Teacher(Protocol):
    """What the state machine asks of a teacher, and all it knows of one.

    Implemented by `ProgrammaticTeacher` (offline, deterministic) and `OpenAITeacher` (any
    OpenAI-compatible endpoint). Any method may raise `TeacherError` (the conversation is rejected
    as "teacher_error"), `prepare` also `Infeasible`; whatever a method returns is checked.
    """

    name: str  # recorded on every example it writes

    def describe(self) -> dict[str, Any]:
        """The example's `teacher` record: the name and the settings that shape the output."""
        ...

    async def prepare(self, convo: Conversation) -> None:
        """Before the first turn: plan, or pick what a clarification withholds (`convo.scratch`)."""
        ...

    async def user_message(self, convo: Conversation, k: int) -> str:
        """The user's message of turn k (`convo.script.turns[k]` says what it asks for)."""
        ...

    async def assistant(self, convo: Conversation, k: int) -> Action:
        """The assistant's next move in turn k: calls to run, text that ends the turn, or give up."""
        ...

    async def alternative(self, convo: Conversation, k: int, failed: dict[str, Any],
                          options: list[str]) -> Action | None:
        """Calls to one of `options` after `failed` kept failing; None when none fits."""
        ...


@dataclass
class Outcome:
    """A generated example (not yet validated) or the reason it was abandoned."""

    example: dict[str, Any] | None
    reason: str | None = None
    detail: str = ""
    transitions: list[list[Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage (not data)


def _new_id(convo: Conversation) -> str:
    convo.n_ids += 1
    return f"call_{convo.n_ids:03d}"


def _tool_content(logged: Mapping[str, Any]) -> str:
    if logged["ok"]:
        return json.dumps(logged["result"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"Error: {logged['error']}"


def _execute(convo: Conversation, k: int, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One assistant message with the calls, then one tool message per call (run live)."""
    tool_calls, outs = [], []
    for call in calls:
        name = call.get("name") if isinstance(call, Mapping) else None
        args = call.get("arguments", {}) if isinstance(call, Mapping) else None
        logged = convo.env.hub.call(name if isinstance(name, str) else str(name), args,
                                    episode_id=convo.episode)
        cid = _new_id(convo)
        raw_args = args if isinstance(args, str) else json.dumps(
            args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        tool_calls.append({"id": cid, "type": "function",
                           "function": {"name": str(name), "arguments": raw_args}})
        entry = {"name": str(name), "arguments": args, "ok": logged["ok"], "turn": k, "id": cid}
        entry["result" if logged["ok"] else "error"] = logged.get("result", logged.get("error"))
        if not logged["ok"]:
            entry["detail"] = logged.get("detail") or {}
        convo.logged.append(entry)
        outs.append((cid, str(name), _tool_content(logged)))
    convo.messages.append({"role": "assistant", "content": "", "tool_calls": tool_calls})
    for cid, name, content in outs:
        convo.messages.append({"role": "tool", "tool_call_id": cid, "name": name, "content": content})
    return convo.logged[-len(calls):]


def _drop_redundant_reads(convo: Conversation, k: int) -> list[str]:
    """Minimal ground truth: take out of turn k each successful read whose whole result an earlier
    successful result of the conversation already held (``evidence.held_in``: a get of a record its
    listing showed, a read of what a write just returned), with its call in the assistant message and
    its tool message; the turn keeps at least one call. Reads change nothing, so the records, their
    hash and the turn's effect are as before. Returns the dropped calls' ids."""
    dropped: list[str] = []
    for entry in list(convo.successful(k)):
        if len(convo.successful(k)) <= 1:
            break
        spec = convo.env.registry.tools.get(entry["name"])
        if spec is None or spec.write:
            continue
        before = convo.logged[:convo.logged.index(entry)]
        if any(c["ok"] and held_in(entry["result"], c["result"]) for c in before):
            convo.logged.remove(entry)
            dropped.append(entry["id"])
    if dropped:
        kept = []
        for m in convo.messages:
            if m["role"] == "tool" and m.get("tool_call_id") in dropped:
                continue
            if m["role"] == "assistant" and m.get("tool_calls"):
                m = {**m, "tool_calls": [tc for tc in m["tool_calls"] if tc["id"] not in dropped]}
                if not m["tool_calls"] and not m.get("content"):
                    continue
            kept.append(m)
        convo.messages[:] = kept
    return dropped


def _depends_on(convo: Conversation, k: int) -> list[list[int]]:
    """Edges among turn k's successful calls: a value of j's arguments that first appeared in
    i's result (not in the user's words), or a graph edge from a write i to j."""
    calls = convo.successful(k)
    users = " ".join(m["content"] for m in convo.messages if m["role"] == "user")
    values = [json_values(c["result"]) for c in calls]
    edges = []
    for j, cj in enumerate(calls):
        args = cj["arguments"] if isinstance(cj["arguments"], dict) else {}
        for i in range(j):
            ci = calls[i]
            found = False
            vals = values[i]
            for v in _flat(args.values()):
                if isinstance(v, bool) or v is None or (isinstance(v, str) and len(v) < 3):
                    continue
                if isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 10:
                    continue
                if vals.has(v) and not text_has_value(users, v):
                    found = True
                    break
            if not found:
                rel = convo.env.graph.edge(ci["name"], cj["name"])
                spec = convo.env.registry.tools.get(ci["name"])
                found = rel is not None and spec is not None and spec.write
            if found:
                edges.append([i, j])
    return edges


def _flat(values: Any) -> list[Any]:
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_flat(v))
        else:
            out.append(v)
    return out


async def _turn(convo: Conversation, teacher: Teacher, k: int) -> str | None:
    """Run user turn k; return an abort reason or None."""
    env, spec = convo.env, convo.script.turns[k]
    try:
        text = await teacher.user_message(convo, k)
    except TeacherError as exc:
        convo.go(S.ABORT, "teacher_error", error=str(exc)[:200])
        return "teacher_error"
    if not isinstance(text, str) or not text.strip():
        convo.go(S.ABORT, "empty_user_turn")
        return "teacher_error"
    withheld = convo.scratch.get("withheld")
    if spec.kind == "clarify" and withheld and _mentions(text, withheld.get("value")):
        convo.go(S.ABORT, "withheld_value_in_request", param=withheld.get("param"))
        return "withheld_leaked"
    convo.messages.append({"role": "user", "content": text.strip()})
    convo.go(S.ASSISTANT_STEP, "user_turn", turn=k, kind=spec.kind)
    errors_in_row = 0
    switched = 0
    for _ in range(env.max_steps_per_turn):
        try:
            if convo.state == S.ALTERNATIVE:
                failed = convo.turn_calls(k)[-1]
                options = _alternatives(convo, failed["name"])
                action = await teacher.alternative(convo, k, failed, options) if options else None
                if action is None or not action.calls:
                    convo.go(S.ABORT, "no_alternative", tool=failed["name"], options=options)
                    return "unrecovered_error"
                switched += 1
            else:
                action = await teacher.assistant(convo, k)
        except TeacherError as exc:
            convo.go(S.ABORT, "teacher_error", error=str(exc)[:200])
            return "teacher_error"
        if action.give_up and convo.state != S.ALTERNATIVE:
            made = convo.turn_calls(k)
            if switched or not made or made[-1]["ok"]:
                convo.go(S.ABORT, "gave_up", note=action.note)
                return "unrecovered_error"
            convo.go(S.ALTERNATIVE, "teacher_gave_up", note=action.note)
            continue
        if action.calls:
            if spec.kind != "act":
                convo.go(S.EXECUTE, "call", note=action.note, names=[_name(c) for c in action.calls])
                _execute(convo, k, action.calls)
                convo.go(S.OBSERVE, "executed")
                convo.go(S.ABORT, "called_tools_on_" + spec.kind)
                return "tool_call_on_" + spec.kind
            convo.go(S.EXECUTE, "call", note=action.note, names=[_name(c) for c in action.calls])
            logged = _execute(convo, k, action.calls)
            bad = [c for c in logged if not c["ok"]]
            if bad:
                errors_in_row += 1
                convo.go(S.OBSERVE, "error", tool=bad[0]["name"], error=str(bad[0]["error"])[:160])
                if errors_in_row <= env.max_retries:
                    convo.go(S.RECOVER, "retry", attempt=errors_in_row)
                elif switched == 0:
                    convo.go(S.ALTERNATIVE, "retries_exhausted", attempts=errors_in_row)
                else:
                    convo.go(S.ABORT, "retries_exhausted_after_alternative")
                    return "unrecovered_error"
            else:
                errors_in_row = 0
                convo.go(S.OBSERVE, "ok", names=[c["name"] for c in logged])
                convo.go(S.ASSISTANT_STEP, "next")
            continue
        reply = (action.text or "").strip()
        convo.go(S.RESPOND, "reply", note=action.note)
        if not reply:
            convo.go(S.ABORT, "empty_reply")
            return "teacher_error"
        convo.messages.append({"role": "assistant", "content": reply})
        if spec.kind == "act" and not convo.successful(k):
            convo.go(S.ABORT, "no_successful_call")
            return "no_tool_call"
        return None
    convo.go(S.ABORT, "step_budget", steps=env.max_steps_per_turn)
    return "step_budget"


def _mentions(text: str, value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    return any(text_has_value(text, v) for v in values if v is not None)


def _name(call: Any) -> str:
    return str(call.get("name")) if isinstance(call, Mapping) else str(call)


def _alternatives(convo: Conversation, tool: str) -> list[str]:
    chain = convo.script.chain
    if tool in chain.tools:
        return convo.env.graph.alternatives(chain, chain.tools.index(tool))
    return []


async def run_conversation(script: Script, teacher: Teacher, env: SynthEnv) -> Outcome:
    """Generate one conversation for `script`; always returns (never raises on teacher output)."""
    convo = Conversation(script, env, episode=f"{script.example_id}/gen",
                         rng=derived_rng("teacher", script.example_id, script.seed))
    hub = env.hub
    hub.close(convo.episode)
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    try:
        convo.ctx = env.sampler.context(script.servers, script.seed)
        t1 = time.perf_counter()
        timings["sampling"] = t1 - t0
        hub.open(convo.episode, script.seed)
        convo.go(S.PREPARE, "sampled", calls=len(convo.ctx.calls))
        try:
            await teacher.prepare(convo)
        except Infeasible as exc:
            convo.go(S.ABORT, "infeasible", detail=str(exc)[:200])
            return Outcome(None, "infeasible", str(exc), convo.transitions, _since(timings, t1))
        except TeacherError as exc:
            convo.go(S.ABORT, "teacher_error", error=str(exc)[:200])
            return Outcome(None, "teacher_error", str(exc), convo.transitions, _since(timings, t1))
        convo.go(S.GENERATE_QUERY, "prepared")
        convo.messages.append({"role": "system", "content": _system(convo)})
        turn_effects: list[str] = []  # the effect on the records after each turn (cumulative)
        for k in range(len(script.turns)):
            reason = await _turn(convo, teacher, k)
            if reason is not None:
                return Outcome(None, reason, "", convo.transitions, _since(timings, t1))
            _drop_redundant_reads(convo, k)
            calls = convo.successful(k)
            turn_effects.append(effect_hash(hub.effect(convo.episode, script.servers)))
            convo.turns.append({
                "calls": [{"name": c["name"], "arguments": c["arguments"]} for c in calls],
                "depends_on": _depends_on(convo, k),
            })
            if k + 1 < len(script.turns):
                convo.go(S.NEXT_TURN, "turn_done", turn=k, calls=len(calls))
                convo.go(S.GENERATE_QUERY, "next_turn")
            else:
                convo.go(S.FINISH, "done", turns=len(script.turns))
        state_hash = hub.state_hash(convo.episode, script.servers)
        effect = hub.effect(convo.episode, script.servers)
    finally:
        hub.close(convo.episode)
    example = _example(convo, teacher, state_hash)
    example["replay"].update(effect={s: d for s, d in effect.items() if d},
                             effect_hash=effect_hash(effect), turn_effects=turn_effects)
    return Outcome(example, None, "", convo.transitions, _since(timings, t1))


def _system(convo: Conversation) -> str:
    """The system message: the servers' domains and the rules; with `show_context`, the sampled
    entities too. Shown context grounds nothing: provenance counts only the user's own words and
    earlier tool results (`evidence.provenance`), so a value the model can only read here fails it."""
    servers = [convo.env.registry.server(s) for s in convo.script.servers]
    lines: list[str] = []
    if convo.env.show_context:
        lines = convo.context_lines()
    return system_prompt(servers, lines)


def _since(timings: dict[str, float], t1: float) -> dict[str, float]:
    timings["generation"] = time.perf_counter() - t1
    return timings


def _with_off_topic_ids(perturbations: list[dict[str, Any]], ids: Mapping[str, str] | None
                        ) -> list[dict[str, Any]]:
    """The script's perturbations, the irrelevant_query one with the ids its request said and
    their declared kinds (``"ids": {"BKG-0011": "booking"}``) where it said any."""
    if not ids:
        return perturbations
    return [{**p, "ids": dict(sorted(ids.items()))} if p.get("type") == "irrelevant_query" else p
            for p in perturbations]


def _example(convo: Conversation, teacher: Teacher, state_hash: str) -> dict[str, Any]:
    script = convo.script
    used = [v for c in convo.successful() if isinstance(c["arguments"], dict)
            for v in _flat(c["arguments"].values())]
    specs = [convo.env.registry.tool(t) for t in sorted(set(script.chain.tools))]
    example: dict[str, Any] = {
        "id": script.example_id,
        "kind": script.kind,
        "index": script.index,
        "split": script.split,
        "servers": script.servers,
        "seed": script.seed,
        "chain": script.chain.to_dict(),
        "tools": script.tools,
        "messages": convo.messages,
        "turns": convo.turns,
        "sampling_context": convo.ctx.to_json(convo.ctx.relevant_fields(specs), used),
        "perturbations": _with_off_topic_ids(script.perturbations, convo.scratch.get("off_topic_ids")),
        "teacher": teacher.describe(),
        "transitions": convo.transitions,
    }
    persona = convo.scratch.get("persona")
    if persona is not None and hasattr(persona, "to_dict"):  # the one person who talks (teacher's)
        example["persona"] = persona.to_dict()
    n_calls, n_errors = call_stats(example)
    example["replay"] = {"error_rate": round(n_errors / n_calls, 4) if n_calls else 0.0,
                         "n_calls": n_calls, "n_errors": n_errors, "state_hash": state_hash}
    example["provenance"], _ = provenance(example, convo.env.registry)
    return example
