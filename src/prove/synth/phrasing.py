"""Natural-language rendering for the programmatic teacher: per-tool phrasings, argument mentions,
turn openers, assistant replies, clarification questions and out-of-scope requests.

    phrases = tool_phrases(registry.tool("transfer_funds"))   # ["move money between two ...", ...]
    text = render_turn([step_text(...), ...], rng, first=True)

Every choice takes an explicit `random.Random`, so a rendering is a pure function of the example's
seed. Values are always written verbatim (ids, emails, amounts), so a value a call needs can be
found in the user's words (the provenance filter checks exactly that).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from prove.env.registry import ServerSpec
from prove.env.tool import ToolSpec
from prove.graph.features import tokens
from prove.synth.intents import PLACEHOLDER

__all__ = [
    "humanize", "entity_of", "tool_phrases", "render_value", "mention", "step_text", "render_turn",
    "summary_reply", "clarify_question", "supply_text", "abstain_reply", "domain_of",
    "GENERIC_OFF_TOPIC", "system_prompt", "enum_words", "fill_request", "join_requests",
]

_PREPOSITIONS = {"from", "to", "in", "on", "at", "by", "for", "with", "into", "since", "until"}

_VERBS: dict[str, tuple[str, ...]] = {
    "get": ("get", "look up", "pull up", "check"),
    "view": ("view", "show me", "open"),
    "show": ("show", "show me", "display"),
    "list": ("list", "show me", "give me a list of"),
    "search": ("search", "search for", "look for"),
    "find": ("find", "look for", "search for"),
    "check": ("check", "verify"),
    "create": ("create", "set up", "make"),
    "add": ("add", "include"),
    "update": ("update", "change", "edit"),
    "edit": ("edit", "update"),
    "set": ("set", "change", "update"),
    "change": ("change", "update"),
    "delete": ("delete", "remove"),
    "remove": ("remove", "delete"),
    "cancel": ("cancel", "call off"),
    "send": ("send",),
    "book": ("book", "reserve"),
    "reserve": ("reserve", "book"),
    "schedule": ("schedule", "set up"),
    "transfer": ("transfer", "move"),
}
_CREATING = {"create", "add", "book", "reserve", "schedule", "make", "open", "request", "write",
             "log", "start", "submit", "post", "send"}

_FIRST_FRAMES = (
    "Could you {s}?", "Can you {s}?", "Please {s}.", "I need you to {s}.", "I'd like you to {s}.",
    "Help me {s}.", "{S}, please.", "Would you {s}?", "Go ahead and {s}.", "Hi! Can you {s}?",
)
_NEXT_FRAMES = (
    "Then {s}.", "After that, {s}.", "Once you have that, {s}.", "Next, {s}.", "And then {s}.",
    "When that's done, {s}.",
)
_FOLLOW_FRAMES = (
    "Thanks. Now {s}.", "Great. Next, {s}.", "OK, now {s}.", "Perfect — could you also {s}?",
    "Good. Can you now {s}?", "Thanks! One more thing: {s}.", "Alright, now please {s}.",
)

GENERIC_OFF_TOPIC: tuple[str, ...] = (
    "What's the weather going to be like in Lisbon this weekend?",
    "Can you translate 'good morning, how are you?' into Japanese?",
    "Write me a short poem about autumn leaves.",
    "Who won the football World Cup in 2010?",
    "What is 17 percent of 2,340?",
    "Recommend a good science fiction novel for a long flight.",
    "How do I make a sourdough starter from scratch?",
    "Explain the difference between a virus and a bacterium in simple terms.",
    "What's the capital of Australia?",
    "Tell me a joke about programmers.",
    "How many calories are in a banana?",
    "Summarise the plot of Hamlet in three sentences.",
    "What time is it in Tokyo right now?",
    "Can you help me pick a name for my new puppy?",
    "What are some good stretches for lower back pain?",
    "Convert 72 degrees Fahrenheit to Celsius.",
    "Who painted the Mona Lisa?",
    "Give me three tips for a job interview tomorrow.",
    "What's a good recipe for a quick vegetarian dinner?",
    "How far is the Moon from the Earth?",
    "Can you explain how compound interest works, with an example?",
    "What should I pack for a week of hiking in Scotland in October?",
    "Write a haiku about the sea.",
    "Which is heavier, a kilogram of feathers or a kilogram of steel?",
    "Suggest a name for a bakery that specialises in sourdough.",
    "How do I change a flat tyre on a bicycle?",
    "What's the difference between affect and effect?",
    "Give me a 20-minute bodyweight workout.",
    "Explain what a black hole is to a ten-year-old.",
    "What year did the Berlin Wall fall?",
    "Help me write a birthday message for my grandmother.",
    "How long should I boil an egg for a runny yolk?",
    "What are the rules of chess castling?",
    "Translate 'where is the train station' into Spanish.",
    "Recommend three podcasts about history.",
    "What's the square root of 1,764?",
    "How do plants make their food?",
    "Tell me a fun fact about octopuses.",
    "What is the tallest mountain in Africa?",
    "Can you proofread this sentence: 'Their going to the park tomorow.'",
)


def humanize(name: str) -> str:
    """`from_account_id` -> "from account"; `attendee_emails` -> "attendee emails"."""
    parts = [p for p in name.split("_") if p]
    if len(parts) > 1 and parts[-1] in ("id", "ids"):
        parts = parts[:-1]
    return " ".join(parts) or name


def entity_of(param: str) -> str:
    """The thing a parameter names, without prepositions: `to_account_id` -> "account"."""
    words = [w for w in humanize(param).split() if w not in _PREPOSITIONS and w not in ("new", "target")]
    return " ".join(words) or humanize(param)


def domain_of(server: ServerSpec) -> str:
    """"Retail bank: customers, ..." -> "retail bank"."""
    head = server.description.split(":", 1)[0].strip()
    return head[:1].lower() + head[1:] if head[:2] != head[:2].upper() else head


def system_prompt(servers: Sequence[ServerSpec], context_lines: Sequence[str] = ()) -> str:
    domains = ", ".join(domain_of(s) for s in servers)
    text = (f"You are a helpful assistant with tools for: {domains}. Use the tools to act on the "
            "user's behalf; take identifiers from the user or from tool results, never invent them. "
            "If required information is missing, ask for it. If a request is outside what the tools "
            "can do, say so instead of calling a tool.")
    if context_lines:
        text += "\nKnown context:\n" + "\n".join(f"- {line}" for line in context_lines)
    return text


def _clause(description: str) -> str | None:
    first = re.split(r"(?<=[.!?])\s", description.strip(), maxsplit=1)[0].rstrip(".!? ")
    first = re.split(r";| \(|, a page at a time| — ", first)[0].strip()
    if not first or len(first) > 110:
        return None
    head = first.split(" ", 1)[0]
    if head.isupper() and len(head) > 1:
        return first
    return first[:1].lower() + first[1:]


def tool_phrases(spec: ToolSpec) -> list[str]:
    """Several ways to ask for this tool: its docstring's first clause and verb-object variants."""
    out: list[str] = []
    clause = _clause(spec.description)
    if clause:
        out.append(clause)
    words = tokens(spec.name)
    if words:
        verb, rest = words[0], " ".join(words[1:])
        verbs = _VERBS.get(verb, (verb,))
        article = "the"
        if verb in _CREATING and rest and not rest.endswith("s"):
            article = "an" if rest[0] in "aeiou" else "a"
        if len(words) > 2 and words[1] in _PREPOSITIONS:  # add_to_watchlist -> "add to the watchlist"
            rest, article = " ".join(words[2:]), f"{words[1]} the"
        for v in verbs[:3]:
            out.append(f"{v} {article} {rest}".strip() if rest else v)
    seen: list[str] = []
    for p in out:
        if p not in seen:
            seen.append(p)
    return seen


def render_value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}" if value != int(value) else str(int(value))
    if isinstance(value, (list, tuple)):
        items = [render_value(v) for v in value]
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
    return str(value)


def enum_words(value: Any, rng: random.Random) -> str:
    """How a user says an enum value: "in progress" for `in_progress`, sometimes capitalised."""
    text = str(value).replace("_", " ").replace("-", " ")
    return text.title() if rng.random() < 0.3 else text


def _described_as(field: str) -> str:
    """How an item is picked out by one of its fields: "named", "titled", "whose city is"."""
    if field in ("name", "full_name", "display_name", "username", "handle"):
        return "named"
    return "titled" if field in ("title", "subject", "headline") else f"whose {humanize(field)} is"


def _named(noun: str, field: str, descr: str, rng: random.Random) -> str:
    """A thing the user gives by name rather than id: "Lisbon Airport", "the task 'Set up
    onboarding emails'", "the account whose account type is 'credit'"."""
    how = _described_as(field)
    if how == "named":
        return rng.choice((descr, f"the {noun} named '{descr}'", f"{noun} {descr}"))
    if how == "titled":
        return rng.choice((f"the {noun} '{descr}'", f"the {noun} titled '{descr}'"))
    return f"the {noun} {how} '{descr}'"


def mention(param: str, value: Any, kind: str, rng: random.Random, **info: Any) -> str:
    """One argument in the user's words. `kind`: id, number, enum, text, bool, named (an id the
    user gives by a name that a lookup resolves), result-item, result-single, result-ordinal."""
    name = humanize(param)
    ent = entity_of(param)
    if ent in _PREPOSITIONS or len(ent) < 3:  # `to` (recipients) -> the field's entity
        ent = info.get("source_entity") or "item"
    if kind == "result-item":
        field, descr = info["descr_field"], info["descr"]
        how = _described_as(field)
        item = info.get("item") or ent
        if item != ent and item not in ent and ent not in item:
            return rng.choice((f"the {ent} of the {item} {how} '{descr}'",
                               f"the {ent} from the {item} {how} '{descr}'"))
        return rng.choice((f"the {ent} {how} '{descr}'", f"the {ent} {how} '{descr}' from that list",
                           f"the one {how} '{descr}'"))
    if kind == "named":
        return _named(ent, info["descr_field"], info["descr"], rng)
    if kind == "result-ordinal":
        return rng.choice((f"the first {ent} in that list", f"the first {ent} it returns",
                           f"the top {ent} from those results"))
    if kind == "result-single":
        return rng.choice((f"that {ent}", f"the same {ent}", f"the {ent} from before",
                           f"the {ent} from that result"))
    text = render_value(value)
    if kind == "id":
        if param.endswith("_id") and rng.random() < 0.3:
            return f"{name} ID {text}"
        return f"{name} {text}"
    if kind == "enum":
        words = info.get("words") or str(value)
        return rng.choice((f"{name} {words}", f"{name} set to {words}", f"{words} as the {name}"))
    if kind == "bool":
        on = bool(value)
        return rng.choice((f"{name} {'on' if on else 'off'}", f"{name}: {'yes' if on else 'no'}",
                           f"with {name} {'enabled' if on else 'disabled'}"))
    if kind == "text":
        return rng.choice((f'{name} "{text}"', f'{name}: "{text}"', f'the {name} "{text}"'))
    if name.split()[-1] in _PREPOSITIONS:
        return f"{name} {text}"
    return rng.choice((f"{name} {text}", f"{name} of {text}", f"{name}: {text}"))


def _join(parts: Sequence[str]) -> str:
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def step_text(phrase: str, mentions: Sequence[str], rng: random.Random) -> str:
    """"transfer funds" + mentions -> "transfer funds from account ACC-1 and amount 20"."""
    if not mentions:
        return phrase
    first = mentions[0].split(" ", 1)[0]
    if first in _PREPOSITIONS:
        return f"{phrase} {_join(mentions)}"
    conn = rng.choice(("for", "with", "using", "—"))
    if conn == "—":
        return f"{phrase} ({_join(mentions)})"
    return f"{phrase} {conn} {_join(mentions)}"


def _sentence(frame: str, s: str) -> str:
    return frame.replace("{S}", s[:1].upper() + s[1:]).replace("{s}", s)


def render_turn(steps: Sequence[str], rng: random.Random, follow_up: bool) -> str:
    """Join the step requests of one user turn into a few sentences. A written request among them
    (an intent template's, already a sentence) is never put inside a frame ("Please What's ...?."):
    the phrases become sentences and all are joined as ``join_requests`` joins written ones."""
    if not steps:
        return ""
    if any(s.rstrip().endswith((".", "?", "!")) for s in steps):
        sentences = [s if s.rstrip().endswith((".", "?", "!")) else _sentence(rng.choice(_FIRST_FRAMES), s)
                     for s in steps]
        return join_requests(sentences, rng, follow_up)
    frames = _FOLLOW_FRAMES if follow_up else _FIRST_FRAMES
    out = [_sentence(rng.choice(frames), steps[0])]
    for s in steps[1:]:
        out.append(_sentence(rng.choice(_NEXT_FRAMES), s))
    return " ".join(out)


def summary_reply(name: str, result: Any, rng: random.Random) -> str:
    """A short closing assistant message over the last result of a turn."""
    facts: list[str] = []
    if isinstance(result, dict):
        for key, value in result.items():
            if len(facts) >= 3:
                break
            if isinstance(value, list):
                facts.append(f"{len(value)} {humanize(key)}")
            elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
                text = render_value(value)
                if len(text) <= 60:
                    facts.append(f"{humanize(key)}: {text}")
    body = "; ".join(facts) or f"{humanize(name)} completed"
    frame = rng.choice(("Done. {b}.", "Here's what I got: {b}.", "All set: {b}.",
                        "That's done — {b}.", "Finished. {b}."))
    return frame.replace("{b}", body)


def clarify_question(param: str, rng: random.Random) -> str:
    name = humanize(param)
    return rng.choice((f"Which {name} should I use?", f"Could you tell me the {name}?",
                       f"I need the {name} to do that — what is it?",
                       f"What {name} would you like me to use?",
                       f"Before I go ahead: which {name} do you mean?"))


def supply_text(param: str, value: Any, rng: random.Random, words: str | None = None) -> str:
    text = words or render_value(value)
    name = humanize(param)
    return rng.choice((f"It's {text}.", f"Use {text}.", f"The {name} is {text}.", f"{text}, please.",
                       f"Sorry — {name} {text}."))


def abstain_reply(servers: Sequence[ServerSpec], rng: random.Random) -> str:
    domains = _join([domain_of(s) for s in servers])
    return rng.choice((
        f"I'm sorry, I can't help with that: my tools only cover the {domains}.",
        f"That's outside what I can do here — I only have tools for the {domains}.",
        f"Unfortunately none of my tools can do that; they are for the {domains}.",
        f"I can't do that with the tools I have (the {domains}), so I won't call any of them.",
    ))


_BOOL_SWITCH = {"on", "enabled", "enable", "active", "power", "muted", "locked"}


def _short_mention(param: str, value: Any, kind: str, entity: str | None, rng: random.Random,
                   **info: Any) -> str:
    """How a value reads inside a written request (the request supplies the surrounding words)."""
    noun = entity.replace("_", " ") if entity else entity_of(param)
    if kind == "result-item":
        field, descr = info["descr_field"], info["descr"]
        how = _described_as(field)
        return rng.choice((f"the {noun} {how} '{descr}'", f"the one {how} '{descr}'",
                           f"the {noun} {how} '{descr}' from that list"))
    if kind == "named":
        return _named(noun, info["descr_field"], info["descr"], rng)
    if kind == "result-ordinal":
        return rng.choice((f"the first {noun} in that list", f"the top {noun} there",
                           "the first one it shows"))
    if kind == "result-single":
        return rng.choice((f"that {noun}", f"the same {noun}", f"the {noun} from before",
                           f"the {noun} you just found"))
    if kind == "enum":
        return str(info.get("words") or value)
    if kind == "bool":
        if param in _BOOL_SWITCH:
            return "on" if value else "off"
        return "yes" if value else "no"
    text = render_value(value)
    if kind == "id":
        return f"{noun} {text}" if entity and rng.random() < 0.35 else text
    if kind == "text":
        return f'"{text}"'
    return text


def _vague(param: str, entity: str | None, number: bool) -> str:
    """A withheld value, mentioned without giving it (the assistant will ask)."""
    if entity:
        return f"my {entity.replace('_', ' ')}"
    return "some" if number else f"a {humanize(param)}"


_ME = re.compile(r"\b(I'm|I am|this is|it's) \{([a-z_][a-z0-9_]*)\}")  # the user says who they are


def fill_request(template: str, mentions: Sequence[tuple[str, str, Any, dict[str, Any]]],
                 entities: dict[str, str | None], rng: random.Random, withheld: str | None = None,
                 numbers: frozenset[str] = frozenset()) -> str:
    """A written request (data/intents) with each ``{param}`` replaced by its mention; mentions the
    request has no place for are added at the end, so every value the call needs is written."""
    by_param = {m[0]: m for m in mentions}
    placed: set[str] = set()

    def sub(match: re.Match[str]) -> str:
        param = match.group(1)
        if param == withheld:
            return _vague(param, entities.get(param), param in numbers)
        got = by_param.get(param)
        if got is None:
            entity = entities.get(param)
            return f"the same {entity.replace('_', ' ')}" if entity else "the same"
        placed.add(param)
        _, kind, value, info = got
        return _short_mention(param, value, kind, entities.get(param), rng, **info)

    def me(match: re.Match[str]) -> str:
        """"I'm {user_id}": the user says who they are the way people do ("my user ID is
        USR-0004", "I'm Beatriz Haddad"), not "I'm USR-0004"."""
        lead, param = match.group(1), match.group(2)
        entity = entities.get(param)
        got = by_param.get(param)
        if entity is None or (got is None and param != withheld):
            return match.group(0)
        noun = entity.replace("_", " ")
        if param == withheld:
            return f"{lead} a {noun} here"
        placed.add(param)
        _, kind, value, info = got  # type: ignore[misc]
        if kind == "named" and _described_as(info["descr_field"]) == "named":
            return f"{lead} {info['descr']}"
        if kind == "id":
            text = render_value(value)
            before = match.string[:match.start()].rstrip()
            start = not before or before[-1] in ".?!"
            if "@" in text:
                return rng.choice((f"{lead} {text}", f"{'M' if start else 'm'}y email is {text}"))
            return rng.choice((f"{'M' if start else 'm'}y {noun} ID is {text}", f"{lead} {noun} {text}"))
        if kind == "result-single":
            return rng.choice((f"{lead} the {noun} from before", f"{lead} still the same {noun}"))
        return f"{lead} {_short_mention(param, value, kind, entity, rng, **info)}"

    text = PLACEHOLDER.sub(sub, _ME.sub(me, template))
    rest = [mention(m[0], m[2], m[1], rng, **m[3]) for m in mentions
            if m[0] not in placed and m[0] != withheld]
    if rest:
        text = text.rstrip() + " " + rng.choice(("Use ", "That's with ", "Go with ")) + _join(rest) + "."
    return text[:1].upper() + text[1:]


_ACKS = ("Thanks.", "OK.", "Got it.", "Perfect.", "Nice.", "Right.", "Good.", "Cool.", "Alright.",
         "Thank you.", "Great, thanks.", "Hm, OK.", "Understood.", "Lovely.")
_THEN = ("Then ", "After that, ", "Also, ", "And ", "Next, ", "Once that's done, ", "Then also: ",
         "Oh, and ", "Plus, ", "When you're done, ")


def join_requests(requests: Sequence[str], rng: random.Random, follow_up: bool) -> str:
    """One user turn from several written requests: joined with varied connectives, and on a
    follow-up turn sometimes a short acknowledgement first."""
    out = []
    for i, req in enumerate(requests):
        if i and rng.random() < 0.7:
            lead = rng.choice(_THEN)
            req = lead + req[:1].lower() + req[1:] if not req[:2].isupper() and not req.startswith("I ") \
                else lead + req
        out.append(req)
    text = " ".join(out)
    if follow_up and rng.random() < 0.3:
        text = rng.choice(_ACKS) + " " + text
    return text
