"""Natural-language rendering for the programmatic teacher: per-tool phrasings, argument mentions,
turn openers, assistant replies, clarification questions and out-of-scope requests, all in the
voice of one persona per conversation.

    phrases = tool_phrases(registry.tool("transfer_funds"))   # ["move money between two ...", ...]
    text = render_turn([step_text(...), ...], rng, follow_up=False)
    reply = describe_result(spec, result, rng, show)          # "There are 3 accounts: Everyday (...)"
    text = speak(draw_persona(rng, "Ana Silva"), request, rng, first=True)

Things are named as people name them (`pick_out`: "the Everyday account", "the account opened on
January 3", never "the one whose opened on is ..."); an assistant reply is written sentences that
name what a call found or did and show every item a later turn refers to (`describe_result`).

Every choice takes an explicit `random.Random`, so a rendering is a pure function of the example's
seed. Values are always written verbatim (ids, emails, amounts), so a value a call needs can be
found in the user's words (the provenance filter checks exactly that).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prove.env.registry import ServerSpec
from prove.env.tool import ToolSpec
from prove.env.types import money_fields, naming_fields
from prove.graph.features import tokens
from prove.synth.intents import PLACEHOLDER, SWITCHES

__all__ = [
    "humanize", "entity_of", "tool_phrases", "render_value", "mention", "step_text", "render_turn",
    "clarify_question", "supply_text", "abstain_reply", "domain_of",
    "GENERIC_OFF_TOPIC", "system_prompt", "enum_words", "fill_request", "join_requests", "LINKS",
    "describe_result", "describe_item", "pick_out", "agree", "only_words", "say_date", "say_value", "drop_identity",
    "Persona", "draw_persona", "speak", "typo", "wants_motive", "SPEAKER", "speaker", "PICKING", "picks", "vary_opener",
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

PICKING = frozenset({"book", "reserve"})
"""Verbs of a tool that takes one of the things a search listed (a slot, a room type): every value
the user gives for it that the listed object holds (not an id: that points elsewhere) comes from
that object."""


def picks(tool: str) -> bool:
    """Whether `tool` (by its leading verb, ``PICKING``) takes one of the things a search listed."""
    return tool.split("_", 1)[0] in PICKING


_FIRST_FRAMES = (
    "Could you {s}?", "Can you {s}?", "Please {s}.", "I need you to {s}.", "I'd like you to {s}.",
    "Help me {s}.", "{S}, please.", "Would you {s}?", "Go ahead and {s}.", "Hi! Can you {s}?",
)
_NEXT_FRAMES = (
    "Then {s}.", "After that, {s}.", "Once you have that, {s}.", "Next, {s}.", "And then {s}.",
    "When that's done, {s}.",
)
_FOLLOW_FRAMES = (
    "Now {s}.", "Next, could you {s}?", "Can you also {s}?", "One more thing: {s}.",
    "I'd also like you to {s}.", "Now please {s}.", "While you're at it, {s}.", "Could you {s} as well?",
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


def entity_of(entity: str | None, source: str | None = None) -> str:
    """The word for the thing a parameter names: the entity kind it declares ("to_account_id"
    declaring 'account' -> "account"), else the kind the result that fed it declares (`source`),
    else "item". Never read off the parameter's name: an id parameter declares its kind."""
    return (entity or "").replace("_", " ") or source or "item"


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
    """How a user says an enum value mid-sentence: "in progress" for `in_progress`, "balanced" for
    `Balanced` (a Title-case word lower-cased; an acronym such as "USD" kept), "no media" for a
    `none` ("a plain post", not "a none post"). `rng` is kept for callers' streams."""
    rng.random()
    text = str(value).replace("_", " ").replace("-", " ")
    if text.lower() in ("none", "null"):
        return "plain"
    return " ".join(w.lower() if w[:1].isupper() and w[1:].islower() else w for w in text.split(" "))


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_DATE = re.compile(r"^(\d{4})-(\d\d)-(\d\d)(?:[T ](\d\d:\d\d)(?::\d\d)?\S*)?$")


@dataclass(frozen=True)
class ResultFields:
    """What a tool's result declares about its fields (`prove.env.types`): the field that names
    each record with how it is said (`naming`: field -> 'name', 'alone' or 'title') and the money
    fields. A reply reads these, never the fields' names."""

    naming: Mapping[str, str] = field(default_factory=dict)
    money: frozenset[str] = frozenset()

    @classmethod
    def of(cls, spec: ToolSpec) -> ResultFields:
        """The declarations of `spec`'s output schema."""
        out = spec.output_schema or {}
        return cls(naming_fields(out), money_fields(out))


def say_date(text: str) -> str:
    """How a person writes a date: "2026-04-12" -> "April 12", with its time "April 12 at 09:30";
    anything else is returned as it is."""
    m = _DATE.match(text.strip())
    if not m or not 1 <= int(m.group(2)) <= 12:
        return text
    day = f"{_MONTHS[int(m.group(2)) - 1]} {int(m.group(3))}"
    return f"{day} at {m.group(4)}" if m.group(4) and m.group(4) != "00:00" else day


def say_value(key: str, value: Any, currency: str | None = None, money: bool = False) -> str:
    """A field's value as a reply writes it: dates in words, a declared `money` field with two
    decimals and its currency ("$42.50", "1,240.00 EUR"), enums without underscores, the rest
    verbatim."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and money:
        if currency in (None, "USD"):
            return f"${value:,.2f}"
        return f"{value:,.2f} {currency}"
    if isinstance(value, str):
        if _DATE.match(value):
            return say_date(value)
        if re.fullmatch(r"[a-z]+(?:_[a-z]+)+", value):
            return value.replace("_", " ")
    return render_value(value)


_PEOPLE = ("user", "customer", "employee", "guest", "contact", "investor", "agent", "member",
           "person", "attendee", "driver", "author", "owner", "recipient", "manager", "approver",
           "assignee", "reviewer", "passenger", "traveler", "traveller", "participant", "student",
           "patient", "deployer", "creator", "sender", "friend", "follower", "lead", "renter")
_OWNED = frozenset({"account", "card", "vehicle", "device", "car", "portfolio", "watchlist", "cart",
                    "project", "repository", "repo", "calendar", "playlist", "folder", "subscription",
                    "thermostat", "light", "lock", "camera", "speaker", "board", "profile", "wallet"})


def _person(noun: str) -> bool:
    """Whether a noun names a person (a person's name stands alone: "Beatriz Haddad")."""
    return noun.split()[-1] in _PEOPLE if noun else False


_FULL_NAME = re.compile(r"[A-Z][a-z'-]+(?: [A-Z][a-z'-]+)+")
_OWNER_FIELDS = frozenset({"owner", "owner_name", "holder", "account_holder", "display_name", "full_name"})
"""Fields of a thing that name the person it belongs to (a mailbox's owner)."""


def _alone(noun: str, how: str | None, descr: str) -> bool:
    """Whether a name is said on its own: a person's ("Beatriz Haddad", "greta.dubois"), or one
    its field declares is said alone (`naming("alone")`)."""
    return _person(noun) or how == "alone" or bool(_FULL_NAME.fullmatch(descr))


def _described_as(how: str | None) -> str:
    """How an item is picked out by one of its fields, by what the field declares (`how`, its
    `naming` kind, None for a field that names nothing): "named", "titled", or "field"."""
    if how in ("name", "alone"):
        return "named"
    return "titled" if how == "title" else "field"


def pick_out(noun: str, field: str, descr: str, rng: random.Random, how: str | None = None) -> str:
    """How a person points at one item by what sets it apart, never by the field's name: "the
    Everyday account", 'the task "Set up onboarding"', "the reservation on April 12", "the
    downtown order", "the one in Lisbon". `how` is the field's declared `naming` kind, if any."""
    said = _described_as(how)
    if said == "named":
        return descr if _alone(noun, how, descr) or rng.random() < 0.3 else f"the {descr} {noun}"
    if said == "titled":
        return rng.choice((f'the {noun} "{descr}"', f'"{descr}"', f'the "{descr}" {noun}'))
    if _DATE.match(descr):
        day = say_date(descr)
        verb = humanize(field).split()[0]
        if field.endswith(("_on", "_at")) and verb.endswith("ed"):  # "the account opened on January 3"
            return f"the {noun} {verb} on {day}"
        return rng.choice((f"the {noun} on {day}", f"the one from {day}", f"the {day} {noun}"))
    if field == "email" or "@" in descr:
        return rng.choice((f"the {noun} for {descr}", f"the one with {descr}"))
    if field == "city" or field.endswith(("city", "location", "destination", "origin")):
        return rng.choice((f"the {noun} in {descr}", f"the {descr} {noun}"))
    if field in ("code", "sku") or re.search(r"\d", descr):
        return rng.choice((f"{noun} {descr}", f"the {noun} {descr}"))
    if field in _OWNER_FIELDS and _FULL_NAME.fullmatch(descr) and not _person(noun):
        return f"{descr}'s {noun}"  # a mailbox by its owner: "Amara Haddad's mailbox", not "the Amara Haddad one"
    words = say_value(field, descr)
    if len(words.split()) <= 3:
        return rng.choice((f"the {words} {noun}", f"the {words} one"))
    return f'the {noun} that says "{descr}"'


def _named(noun: str, field: str, descr: str, rng: random.Random, how: str | None = None) -> str:
    """A thing the user gives by name rather than id, as its owner says it: "Lisbon Airport", "my
    Everyday account", 'the task "Set up onboarding emails"' (`how`: the field's `naming` kind)."""
    told = _described_as(how)
    if told == "named":
        if _alone(noun, how, descr) or rng.random() < 0.25:
            return descr
        return f"my {descr} {noun}" if noun in _OWNED else f"the {descr} {noun}"
    if told == "titled":
        return rng.choice((f'my {noun} "{descr}"' if noun in _OWNED else f'the {noun} "{descr}"',
                           f'the {noun} "{descr}"', f'"{descr}"'))
    said = pick_out(noun, field, descr, rng, how)
    return said.replace("the ", "my ", 1) if noun in _OWNED and said.startswith("the ") else said


def mention(param: str, value: Any, kind: str, rng: random.Random, **info: Any) -> str:
    """One argument in the user's words. `kind`: id, number, enum, text, bool, named (an id the
    user gives by a name that a lookup resolves), result-item, result-single, result-ordinal.
    `info["entity"]` is the entity kind the parameter declares (the thing it names: a
    `viewer_profile_id` names a profile, a `repo` a repository); `info["descr_how"]` the `naming`
    kind of the field a result-item or named thing is picked out by."""
    name = humanize(param)
    entity = info.get("entity")
    ent = entity_of(entity, info.get("source_entity"))
    how = info.get("descr_how")
    if kind == "result-item":
        item = info.get("item") or ent
        if not _same_thing(item, ent):
            return f"the {ent} of {pick_out(item, info['descr_field'], info['descr'], rng, how)}"
        return pick_out(ent, info["descr_field"], info["descr"], rng, how)
    if kind == "named":
        return _named(ent, info["descr_field"], info["descr"], rng, how)
    if kind == "result-ordinal":
        item = info.get("item") or ent
        if not _same_thing(item, ent):  # a field of the first item: "the user of the first page you listed"
            return f"the {ent} of " + rng.choice((f"the first {item} you listed", f"the top {item} there"))
        return rng.choice((f"the first {ent} you listed", f"the first {ent} it returns",
                           f"the top {ent} in those results"))
    if kind == "result-single":
        return rng.choice((f"that {ent}", f"this {ent}", f"the same {ent}"))
    text = render_value(value)
    if info.get("from_listing") and isinstance(value, str) and _DATE.match(value):
        return say_date(value)  # a slot as the reply showed it: "May 21 at 10:00"
    if kind == "id":  # "account ID ACC-0003"; a natural key reads as itself ("repo acme/web")
        if entity and _ID_VALUE.match(text) and rng.random() < 0.3:
            return f"{name} ID {text}"
        return f"{name} {text}"
    if kind == "enum":
        words = info.get("words") or str(value)
        return rng.choice((f"{name} {words}", f"{name} set to {words}", f"{words} as the {name}"))
    if kind == "bool":
        on = bool(value)
        if param.endswith("_only"):
            return only_words(param, on)
        return rng.choice((f"{name} {'on' if on else 'off'}", f"{name} set to {'on' if on else 'off'}",
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


_PAST = {"create": "created", "add": "added", "update": "updated", "edit": "edited", "set": "set",
         "change": "changed", "delete": "deleted", "remove": "removed", "cancel": "cancelled",
         "send": "sent", "book": "booked", "reserve": "reserved", "schedule": "scheduled",
         "transfer": "made the transfer for", "approve": "approved", "reject": "rejected",
         "submit": "submitted", "post": "posted", "close": "closed", "open": "opened",
         "assign": "assigned", "move": "moved", "rename": "renamed", "archive": "archived",
         "pay": "paid", "place": "placed", "lock": "locked", "unlock": "unlocked", "start": "started",
         "stop": "stopped", "merge": "merged", "reply": "replied to", "forward": "forwarded",
         "mark": "marked", "write": "wrote", "rate": "rated", "run": "ran", "trigger": "triggered",
         "invite": "invited", "follow": "followed", "like": "liked", "rollback": "rolled back"}
_PARTICIPLE = {"write": "written", "run": "run"}
"""Where a verb's participle is not its past tense ("the review is written", not "is wrote")."""
_DETAIL_KEYS = ("status", "state", "type", "kind", "category", "city", "role", "priority", "date",
                "start", "when", "due", "time")
_ID_VALUE = re.compile(r"^[A-Z]{2,6}-\d+$")
_SHOWN_ITEMS = 5


def _label(item: Mapping[str, Any], fields: ResultFields) -> tuple[str | None, str | None]:
    """(the field that names an item, how a reply writes it): the field its result declares names
    it (`naming`), a name as it is and a title in quotes, else its own id ("order ORD-0012" reads
    as an order number), else its first short value. No field is preferred for its name: a record
    labelled by a version or a code declares that field `naming`."""
    for key, how in fields.naming.items():
        v = item.get(key)
        if isinstance(v, str) and v.strip():
            return key, (f'"{v}"' if how == "title" else v)
    for key, v in item.items():
        if isinstance(v, str) and _ID_VALUE.match(v) and (key == "id" or key.endswith("_id")):
            return key, f"{humanize(key) if key != 'id' else 'number'} {v}"
    for key, v in item.items():
        if isinstance(v, str) and 2 <= len(v) <= 40 and not _DATE.match(v):
            return key, v
    return None, None


def _detail(key: str, value: Any, currency: str | None, money: bool) -> str | None:
    """One field of an item as words in a reply ("total $42.50", "delivered on April 12",
    "pending"), or None for what a reader would not want read out (ids, long text, lists)."""
    if value is None or isinstance(value, (list, dict)) or key in ("currency",):
        return None
    text = say_value(key, value, currency, money)
    if len(text) > 48 or (isinstance(value, str) and _ID_VALUE.match(value)):
        return None
    if isinstance(value, str) and _DATE.match(value):
        return text if key in ("date", "when", "day") else f"{humanize(key)} {text}"
    if key in ("status", "state", "type", "kind", "category", "role", "priority", "city") \
            and isinstance(value, str):
        return text
    return f"{humanize(key)} {text}"


def describe_item(item: Mapping[str, Any], also: Sequence[str] = (), limit: int = 2,
                  fields: ResultFields | None = None) -> str:
    """One listed object as a reader sees it: its name (or title, or number) and a few details,
    `also` (fields a later turn picks it out by) always among them: "Everyday (checking, balance
    $1,240.50)". `fields` are its result's declarations (what names it, what is money)."""
    label, details = _item_words(item, also, limit, fields)
    return f"{label} ({', '.join(details)})" if details else label


def _grouped(described: Sequence[tuple[str, list[str]]]) -> list[str]:
    """Listed objects as a reply writes them, each label once: objects that share a label (eleven
    slots of one service center) are one entry, the label then what tells each apart, a field
    name they all open with said once ("center CTR-0002 (start May 20 at 08:00; May 20 at
    10:00)"), in the order the label first came."""
    groups: dict[str, list[list[str]]] = {}
    for label, details in described:
        groups.setdefault(label, []).append(details)
    out = []
    for label, many in groups.items():
        if len(many) == 1:
            out.append(f"{label} ({', '.join(many[0])})" if many[0] else label)
            continue
        texts = [", ".join(d) for d in many if d]
        if not texts:
            out.append(f"{label} ({len(many)} of them)")
            continue
        texts = list(dict.fromkeys(texts))
        lead = _common_key(texts)  # "start" once: "(start May 20 at 08:00; May 20 at 10:00)"
        if lead:
            texts = [texts[0]] + [t[len(lead) + 1:] for t in texts[1:]]
        out.append(f"{label} ({'; '.join(texts)})")
    return out


def _common_key(texts: Sequence[str]) -> str:
    """The field name every one of `texts` opens with ("start", "occurrence start"), or ''."""
    split = [t.split() for t in texts]
    lead: list[str] = []
    for words in zip(*split, strict=False):
        if len(set(words)) != 1 or not re.fullmatch(r"[a-z]+", words[0]):
            break
        lead.append(words[0])
    return " ".join(lead) if all(len(w) > len(lead) for w in split) else ""


def _item_words(item: Mapping[str, Any], also: Sequence[str], limit: int,
                fields: ResultFields | None) -> tuple[str, list[str]]:
    """`describe_item`'s label and details, apart."""
    fields = fields if fields is not None else ResultFields()
    for inner in [v for v in item.values() if isinstance(v, dict)]:  # {"artifact": {...}, "status": ..}
        item = {**inner, **{k: v for k, v in item.items() if not isinstance(v, dict)}}
    key, label = _label(item, fields)
    currency = item.get("currency") if isinstance(item.get("currency"), str) else None
    keys = [k for k in also if k in item and k != key]
    keys += [k for k in _DETAIL_KEYS if k in item and k not in keys and k != key]
    keys += sorted(k for k in item if k in fields.money and k not in keys and k != key)
    keys += [k for k in item if isinstance(item[k], str) and _DATE.match(item[k]) and k not in keys
             and k != key]
    details: list[str] = []
    for k in keys:
        d = _detail(k, item[k], currency, k in fields.money)
        if d is not None and d not in details and (len(details) < limit or k in also):
            details.append(d)
    if label is None:
        label, details = (details[0], details[1:]) if details else ("one item", [])
    return label, details


def _listed(result: Any) -> tuple[str, list[dict[str, Any]]] | None:
    """The list of objects a listing returns (a top-level key beside nothing but counts and paging:
    `{"tasks": [...], "total": 1, "next_offset": null}`) and its key; None for a record, even one
    that holds lists (a project with its milestones)."""
    if not isinstance(result, dict):
        return None
    lists = [k for k, v in result.items()
             if isinstance(v, list) and (not v or all(isinstance(x, dict) for x in v))]
    rest = [v for k, v in result.items() if k not in lists]
    if lists and all(v is None or isinstance(v, (int, float, bool)) or isinstance(v, str) and len(v) <= 12
                     and not _ID_VALUE.match(v) for v in rest):
        return lists[0], result[lists[0]]
    return None


def _record(result: Any) -> Any:
    """The record a result is about: `{"account": {...}}` -> the account."""
    if isinstance(result, dict):
        nested = [v for v in result.values() if isinstance(v, dict)]
        if len(nested) == 1 and all(isinstance(v, (dict, list)) or v is None for v in result.values()):
            return nested[0]
    return result


def _show(item: Mapping[str, Any], show: Mapping[str, Sequence[str]]) -> list[str] | None:
    """The fields by which a later turn picks `item` out, when it does (None: it does not)."""
    found = [f for v in item.values() if isinstance(v, (str, int)) and not isinstance(v, bool)
             for f in show.get(repr(v), ())]
    return found if found or any(repr(v) in show for v in item.values()) else None


def describe_result(spec: ToolSpec, result: Any, rng: random.Random,
                    show: Mapping[str, Sequence[str]] | None = None) -> str:
    """A written sentence or two for one call's result, the way an assistant tells a person what
    it found or did: the items a listing returned by name with a detail or two (the first few, and
    every item a later turn refers to, with the field it is picked out by: `show`, repr(id) ->
    fields), a record's name and details, or what a change did."""
    show = show or {}
    fields = ResultFields.of(spec)
    result = _record(result)
    words = tokens(spec.name)
    verb = words[0] if words else ""
    noun = " ".join(w for w in words[1:] if w not in _PREPOSITIONS and w != "my") or "request"
    listed = _listed(result)
    if listed is not None and not (spec.write and not listed[1]):
        key, items = listed
        what = humanize(key)
        if not items:
            return rng.choice((f"I couldn't find any {what}.", f"There are no {what} that match.",
                               f"Nothing came up: no {what}."))
        keep = [i for i, it in enumerate(items) if i < _SHOWN_ITEMS or _show(it, show) is not None]
        parts = _grouped([_item_words(items[i], _show(items[i], show) or (), 2, fields) for i in keep])
        head = (rng.choice((f"I found one of them: {parts[0]}.", f"There's just one: {parts[0]}."))
                if len(items) == 1 else
                rng.choice((f"I found {len(items)} {what}: {_join(parts)}.",
                            f"There are {len(items)} {what}: {_join(parts)}.",
                            f"Here are the {what} — {_join(parts)}.")))
        more = len(items) - len(keep)
        return head + (f" There {'is' if more == 1 else 'are'} {more} more." if more > 0 else "")
    if isinstance(result, dict):
        also = _show(result, show) or ()
        text = describe_item(result, also, limit=3, fields=fields)
        if spec.write:
            past = _PAST.get(verb)
            if past is None:
                head = rng.choice((f"Done: {text}.", f"That's done — {text}."))
            else:
                done = _PARTICIPLE.get(verb, past)  # "I've written", "I wrote"
                head = rng.choice((f"I've {done} the {noun}: {text}.", f"Done — I {past} the {noun}: {text}.",
                                   f"The {noun} is {done}: {text}." if verb != "transfer" else
                                   f"I've {done} the {noun}: {text}."))
        else:
            head = rng.choice((f"Here's the {noun}: {text}.", f"I've got it: {text}.",
                               f"This is what I see for the {noun}: {text}."))
        return " ".join([head, *_inner_lists(result, show, fields)])
    return f"The {noun} came back as {render_value(result)}."


def _inner_lists(record: Mapping[str, Any], show: Mapping[str, Sequence[str]],
                 fields: ResultFields) -> list[str]:
    """Sentences for the lists of objects a record holds (a room's bookings, an order's items): the
    first three, and every one a later turn refers to."""
    out = []
    for key, value in record.items():
        if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
            continue
        keep = [it for i, it in enumerate(value) if i < 3 or _show(it, show) is not None]
        parts = _grouped([_item_words(it, _show(it, show) or (), 2, fields) for it in keep])
        what = humanize(key)
        more = f", and {len(value) - len(keep)} more" if len(value) > len(keep) else ""
        out.append(f"{what[:1].upper() + what[1:]}: {_join(parts)}{more}.")
        if len(out) == 2:
            break
    return out


def clarify_question(param: str, rng: random.Random) -> str:
    name = humanize(param)
    return rng.choice((f"Which {name} should I use?", f"Could you tell me the {name}?",
                       f"I need the {name} to do that — what is it?",
                       f"What {name} would you like me to use?",
                       f"Before I go ahead: which {name} do you mean?"))


def supply_text(param: str, value: Any, rng: random.Random, words: str | None = None,
                named: Mapping[str, Any] | None = None) -> str:
    """The user's answer to a clarifying question: the value as written, or (`named`: the
    withheld mention's info, a thing the user names and a lookup resolves) the thing by its name,
    "My Everyday account, please." rather than its id."""
    if named is not None:
        said = mention(param, value, "named", rng, **named)  # "my Everyday account", "Lisbon"
        lead = said[:1].upper() + said[1:]
        return rng.choice((f"{lead}, please.", f"{lead}.", f"It's {said}.", f"Sorry — {said}."))
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


def only_words(param: str, on: bool) -> str:
    """A filter flag as people say it, never "Unread only? yes": `unread_only` -> "just the unread
    ones" / "all of them, unread or not"; `favorites_only` -> "just the favorites"."""
    what = humanize(param).rsplit(" ", 1)[0]
    if not on:
        return f"all of them, {what} or not"
    return f"just the {what}" if what.endswith("s") else f"just the {what} ones"


_SAME_THINGS = (frozenset({"message", "email", "mail"}), frozenset({"post", "status"}),
                frozenset({"reservation", "booking"}))


def _same_thing(item: str, noun: str) -> bool:
    """Whether a listed item and the thing a parameter names are one thing ("the message" of an
    email is the email: "the message on the ... email" reads as a slip)."""
    if item == noun or item in noun or noun in item:
        return True
    a, b = item.split()[-1], noun.split()[-1]
    return any(a in group and b in group for group in _SAME_THINGS)


_BOOL_SWITCH = SWITCHES


def _short_mention(param: str, value: Any, kind: str, declared: str | None, rng: random.Random,
                   **info: Any) -> str:
    """How a value reads inside a written request (the request supplies the surrounding words);
    `declared` is the entity kind the parameter declares (`info` may carry it too)."""
    entity = declared
    noun = entity_of(entity, info.get("source_entity"))
    if kind == "result-item":
        item = info.get("item") or noun
        if not _same_thing(item, noun):
            return f"the {noun} {rng.choice(('of', 'on', 'behind'))} {pick_out(item, info['descr_field'], info['descr'], rng, info.get('descr_how'))}"
        return pick_out(noun, info["descr_field"], info["descr"], rng, info.get("descr_how"))
    if kind == "named":
        return _named(noun, info["descr_field"], info["descr"], rng, info.get("descr_how"))
    if kind == "result-ordinal":
        item = info.get("item") or noun
        if not _same_thing(item, noun):  # a field of the first item: "the user of the first page you listed"
            return f"the {noun} of " + rng.choice((f"the first {item} you listed", f"the top {item} there"))
        return rng.choice((f"the first {noun} you listed", f"the top {noun} there",
                           "the first one it shows"))
    if kind == "result-single":
        return rng.choice((f"that {noun}", f"this {noun}", f"the same {noun}"))
    if kind == "enum":
        return str(info.get("words") or value)
    if kind == "bool":
        if param in _BOOL_SWITCH:
            return "on" if value else "off"
        if param.endswith("_only"):
            return only_words(param, bool(value))
        return "yes" if value else "no"
    text = render_value(value)
    if info.get("from_listing") and isinstance(value, str) and _DATE.match(value):
        return say_date(value)  # a slot as the reply showed it: "May 21 at 10:00"
    if kind == "id":
        return f"{noun} {text}" if entity and "@" not in text and rng.random() < 0.35 else text
    if kind == "text":
        return f'"{text}"'
    return text


def _vague(param: str, entity: str | None, number: bool) -> str:
    """A withheld value, mentioned without giving it (the assistant will ask)."""
    if entity:
        return f"my {entity.replace('_', ' ')}"
    return "some" if number else f"a {humanize(param)}"


SPEAKER = re.compile(r"(\bI'm|\bI am|\b[Tt]his is|\bit's|(?:^|(?<=[.!?] ))As) \{([a-z_][a-z0-9_]*)\}"
                     r"|(?:^|(?<=[.!?] )|(?<=, ))()\{([a-z_][a-z0-9_]*)\}(?= here\b)")
"""Where a written request has the user say who they are: "I'm {customer_id}", "This is
{user_id}", "As {user_id}, ...", "{user_id} here" (`speaker` reads the parameter of a match)."""
_ME = SPEAKER


def speaker(match: re.Match[str]) -> str:
    """The parameter a `SPEAKER` match says the user is."""
    return match.group(2) or match.group(4)


def fill_request(template: str, mentions: Sequence[tuple[str, str, Any, dict[str, Any]]],
                 entities: dict[str, str | None], rng: random.Random, withheld: str | None = None,
                 numbers: frozenset[str] = frozenset(), introduced: dict[str, Any] | None = None,
                 flags: Mapping[str, tuple[str, str]] | None = None) -> str:
    """A written request (data/intents) with each ``{param}`` replaced by its mention; mentions the
    request has no place for are added at the end, so every value the call needs is written.

    `introduced` (parameter -> value) is who the user has already said they are in this
    conversation: a request's "I'm {customer_id}" for the same person is left out rather than said
    again (the value is in an earlier turn), and a first statement is recorded there.

    `flags` (the tool's ``flags`` in data/intents): how the user says a boolean, [true, false]."""
    by_param = {m[0]: m for m in mentions}
    placed: set[str] = set()
    for match in list(_ME.finditer(template)):  # said before, or known from a result: not said
        who = speaker(match)
        got = by_param.get(who)
        if who != withheld and (got is None or got[1].startswith("result")):
            cut = drop_identity(template, who)
            if cut != template:
                template = cut
                placed.add(who)
    if introduced is not None:
        for param, value in introduced.items():
            got = by_param.get(param)
            if got is not None and repr(got[2]) != repr(value) or param == withheld:
                continue
            cut = drop_identity(template, param)
            if cut != template:
                template = cut
                placed.add(param)

    def sub(match: re.Match[str]) -> str:
        param = match.group(1)
        if param == withheld:
            return _vague(param, entities.get(param), param in numbers)
        got = by_param.get(param)
        if got is None:  # given in an earlier turn
            entity = entities.get(param)
            if not entity:
                return "the same"
            return rng.choice(("the same ", "that ", "this ")) + entity.replace("_", " ")
        placed.add(param)
        _, kind, value, info = got
        if kind == "bool" and flags and param in flags:
            return flags[param][0 if value else 1]
        return _short_mention(param, value, kind, entities.get(param), rng, **info)

    def me(match: re.Match[str]) -> str:
        """"I'm {user_id}": the user says who they are the way people do ("my user ID is
        USR-0004", "I'm Beatriz Haddad"), not "I'm USR-0004"; "{user_id} here" reads "Beatriz
        Haddad here" or "User USR-0004 here"."""
        lead, param = match.group(1), speaker(match)
        entity = entities.get(param)
        got = by_param.get(param)
        if entity is None or (got is None and param != withheld):
            return match.group(0)
        noun = entity.replace("_", " ")
        before = match.string[:match.start()].rstrip()
        start = not before or before[-1] in ".?!"
        if param == withheld:
            return f"a {noun}" if lead is None else f"{lead} a {noun} here"
        placed.add(param)
        _, kind, value, info = got  # type: ignore[misc]
        if introduced is not None and kind in ("id", "named"):
            introduced[param] = value
        if kind == "named" and _described_as(info.get("descr_how")) == "named":
            return info["descr"] if lead is None else f"{lead} {info['descr']}"
        if kind == "id" and lead in (None, "As"):  # "User USR-0004 here", "As user USR-0004, ..."
            said = f"{noun} {render_value(value)}"
            return (said[:1].upper() + said[1:] if start else said) if lead is None else f"{lead} {said}"
        if kind == "id":
            text = render_value(value)
            if "@" in text:
                return rng.choice((f"{lead} {text}", f"{'M' if start else 'm'}y email is {text}"))
            return rng.choice((f"{'M' if start else 'm'}y {noun} ID is {text}", f"{lead} {noun} {text}"))
        said = _short_mention(param, value, kind, entity, rng, **info)
        return said if lead is None else f"{lead} {said}"

    text = PLACEHOLDER.sub(sub, _ME.sub(me, template))
    rest = [mention(m[0], m[2], m[1], rng, **{"entity": entities.get(m[0]), **m[3]}) for m in mentions
            if m[0] not in placed and m[0] != withheld]
    if rest:
        text = text.rstrip() + " " + rng.choice(("Use ", "That's with ", "Go with ")) + _join(rest) + "."
    return agree(text[:1].upper() + text[1:])


_ONE_PLURAL = re.compile(r"(?<![\d.,$])\b1 ([a-z]{2,}[^s'u])s\b")
_ONE_PEOPLE = re.compile(r"(?<![\d.,$])\b(1) people\b")  # "for at least 1 people" -> "1 person"
_A_VOWEL = re.compile(r"\b([Aa]) (?=[aeioAEIO](?!ne\b|nce\b|ne-))")


def _singular(word: str) -> str:
    """"guests" -> "guest", "categories" -> "category", "boxes" -> "box"."""
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("xes", "ches", "shes", "sses", "zes")):
        return word[:-2]
    return word[:-1]


def agree(text: str) -> str:
    """A filled request's words agree with the values put in it: "1 guest" (not "1 guests"), "an
    image post" (not "a image post"); quoted text (the user's own words) is left as written."""
    parts = re.split(r'("[^"]*")', text)
    for i in range(0, len(parts), 2):
        part = _ONE_PEOPLE.sub(r"\1 person", _ONE_PLURAL.sub(lambda m: "1 " + _singular(m.group(1) + "s"), parts[i]))
        parts[i] = _A_VOWEL.sub(lambda m: m.group(1) + "n ", part)
    return "".join(parts)


def drop_identity(template: str, param: str) -> str:
    """`template` without its "I'm {param}" clause (the user said who they are before, or it came
    from a result): a sentence of its own ("{param} here."), a trailing "; I'm {param}" / ", this is
    {param}" / ", {param} here", or a leading "I'm {param} and" / "As {param}, "; unchanged when the
    clause sits anywhere else."""
    who = r"(?:(?:I'm|I am|this is|it's|as) \{" + re.escape(param) + r"\}|\{" + re.escape(param) + r"\} here)"
    for rx, by in ((r"(^|(?<=[.!?]))\s*" + who + r"\s*[.!]", r"\1"),
                   (r"\s*[;,]\s*" + who + r"(?=\s*[.!?])", ""),
                   (r"(^|(?<=[.!?] ))" + who + r"(?: and|,|;)\s+", r"\1")):
        cut = re.sub(rx, by, template, count=1, flags=re.I)
        if cut != template:
            cut = cut.strip()
            return re.sub(r"(^|[.!?] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), cut)
    return template


_ACKS = ("Thanks.", "OK.", "Got it.", "Nice.", "Right.", "Alright.", "Thank you.", "Hm, OK.",
         "Lovely.")
LINKS: dict[str, tuple[str, ...]] = {
    # the next request uses what this one finds: a condition or a consequence
    "fed": ("Once you've found it, ", "If it's there, ", "With that, ", "When you have it, ",
            "Using that, ", "If you find it, ", "Then ", "Based on that, "),
    # the next request comes after a change: it goes ahead only if the change went through
    "after_write": ("If that goes through, ", "Once that's done, ", "If that works, ",
                    "When that's done, ", "Assuming that goes fine, ", "After that, "),
    # unrelated requests of one person's errand
    "apart": ("Also, ", "While you're at it, ", "Separately, ", "Oh, and ", "And ",
              "On another note, ", "Another thing: "),
}
"""How one request leads to the next, by how they relate (see ``join_requests``)."""


def join_requests(requests: Sequence[str], rng: random.Random, follow_up: bool,
                  links: Sequence[str] | None = None) -> str:
    """One user turn from several written requests, each joined to the one before by how it
    relates to it (`links[i]`, a key of ``LINKS``: it uses what the one before finds, it follows a
    change, or it is a separate errand); a rare short acknowledgement opens a follow-up."""
    out = []
    for i, req in enumerate(requests):
        link = links[i] if links is not None and i < len(links) else "apart"
        if i and rng.random() < (0.85 if link != "apart" else 0.6):
            lead = rng.choice(LINKS.get(link, LINKS["apart"]))
            keep = req[:2].isupper() or req.startswith(("I ", "I'")) or req[:1] == '"'
            req = lead + (req if keep else req[:1].lower() + req[1:])
        out.append(req)
    text = " ".join(out)
    if follow_up and rng.random() < 0.04:
        text = rng.choice(_ACKS) + " " + text
    return text


@dataclass(frozen=True)
class Persona:
    """The one person who talks in a conversation: who they are (their name, when the state has
    one for the ids the conversation acts on) and how they talk, drawn once from the example's
    seed and kept for every turn."""

    name: str | None
    brief: bool  # short turns: no greeting, rarely a reason
    polite: bool  # "please", "thanks"
    typos: bool  # now and then a slip of the keyboard

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "brief": self.brief, "polite": self.polite, "typos": self.typos}


def draw_persona(rng: random.Random, name: str | None = None) -> Persona:
    """A persona for one conversation (`rng`: the example's own stream)."""
    return Persona(name, brief=rng.random() < 0.4, polite=rng.random() < 0.6, typos=rng.random() < 0.2)


_TYPO_WORD = re.compile(r"(?<![{\w'])[a-z]{5,}(?![}\w'])")


def typo(text: str, rng: random.Random) -> str:
    """One slip of the keyboard in a plain lower-case word of `text` (two inner letters swapped);
    words inside ``{placeholders}`` or quotes are never touched."""
    outside = re.sub(r'"[^"]*"', lambda m: " " * len(m.group(0)), text)
    spots = [m for m in _TYPO_WORD.finditer(outside)]
    if not spots:
        return text
    m = rng.choice(spots)
    w = m.group(0)
    i = rng.randrange(1, len(w) - 2)
    if w[i] == w[i + 1]:
        return text
    slip = w[:i] + w[i + 1] + w[i] + w[i + 2:]
    return text[:m.start()] + slip + text[m.end():]


def wants_motive(persona: Persona, rng: random.Random, first: bool) -> bool:
    """Whether this turn carries the conversation's one reason (asked until it is given once): a
    chatty persona usually gives it with the first request, a brief one seldom, later turns now
    and then."""
    if first:
        return rng.random() < (0.2 if persona.brief else 0.6)
    return rng.random() < (0.05 if persona.brief else 0.2)


_GREETINGS = ("Hi! ", "Hello! ", "Hey there. ", "Hi. ", "Good morning! ", "Hey! ", "Hello. ",
              "Morning! ", "Hi, hope you're well. ", "Evening! ")
_THANKS = (" Thanks!", " Thank you.", " Thanks in advance.", " Thanks a lot.", " Thank you!")
_LATER_THANKS = (" Thanks.", " Thank you.", " Thanks!", " Cheers, thanks.")


_THING = r"(?=(?:the|my|all|every|any|a|an|this|that|those|these|our|recent|last|each)\b)"
_OPENERS: tuple[tuple[re.Pattern[str], dict[str, tuple[str, ...]]], ...] = (
    # (how a request opens, {persona style: other ways that person opens it}); each keeps the
    # sentence grammatical: what follows is the same noun phrase or clause
    (re.compile(r"^Show me " + _THING), {"brief": ("Pull up ", "Bring up ", "Get me ", "List ", "Look up "),
                                          "polite": ("I'd like to see ", "Could I see ", "Could you pull up ",
                                                     "Would you show me ", "Please bring up "),
                                          "plain": ("Let me see ", "I want to see ", "Pull up ", "Can I get ",
                                                    "Can you bring up ", "Look up ")}),
    (re.compile(r"^Show me "), {"brief": ("Let me see ",), "polite": ("I'd like to see ", "Could you show me "),
                                "plain": ("Let me see ", "I want to see ", "Can you show me ")}),
    (re.compile(r"^Show the "), {"brief": ("Pull up the ", "Bring up the ", "List the "),
                                 "polite": ("I'd like to see the ", "Could you pull up the "),
                                 "plain": ("Let me see the ", "Pull up the ", "Can you bring up the ")}),
    (re.compile(r"^Tell me "), {"brief": ("Let me know ",), "polite": ("I'd like to know ", "Could you tell me "),
                                "plain": ("Let me know ", "I'd like to know ", "Can you tell me ", "Do you know ")}),
    (re.compile(r"^Give me " + _THING), {"brief": ("Get me ", "Send over "), "polite": ("I'd like ", "Could I have "),
                                          "plain": ("Get me ", "I'd like ", "Can I have ")}),
    (re.compile(r"^I need " + _THING), {"brief": ("Need ",), "polite": ("I'd like ", "Could I get "),
                                         "plain": ("I'd like ", "I'm after ", "Can I get ")}),
    (re.compile(r"^I want " + _THING), {"brief": ("Want ",), "polite": ("I'd like ", "Could I get "),
                                         "plain": ("I'd like ", "I'm after ", "Can I get ")}),
)
_KEEP_OPENER = 0.3  # how often a request keeps the opening its template wrote
_ASKING = ("Could I see ", "Could you pull up ", "Would you show me ", "Can I get ", "Can you bring up ",
           "Could you show me ", "Can you show me ", "Could you pull up the ", "Can you bring up the ",
           "Could you tell me ", "Can you tell me ", "Do you know ", "Could I have ", "Can I have ",
           "Could I get ")  # openers that make the sentence a question


def vary_opener(text: str, persona: Persona, rng: random.Random) -> str:
    """A request's opening as this persona says it: "Show me the bookings" stays, or reads "Pull
    up the bookings" (brief), "I'd like to see the bookings" (polite), "Let me see the bookings";
    only where the words after the opening are a noun phrase or clause that every alternative
    takes (so "Show me how ..." never becomes "Pull up how ..."). A question opener ends its
    first sentence with "?"."""
    for pattern, by_style in _OPENERS:
        if not pattern.search(text):
            continue
        if rng.random() < _KEEP_OPENER:
            return text
        style = "brief" if persona.brief else "polite" if persona.polite else "plain"
        new = rng.choice(by_style[style])
        head = pattern.search(text)
        assert head is not None
        out = new + text[len(head.group(0)):]
        if new in _ASKING:
            end = re.search(r"[.!](?=\s|$)", out)
            out = out[:end.start()] + "?" + out[end.end():] if end else out
        return out
    return text


def speak(persona: Persona, text: str, rng: random.Random, first: bool,
          motive: str | None = None) -> str:
    """A request as this persona says it: a chatty one greets at the start; the reason given with
    it (`motive`, a sentence of the app's: "I'm planning my budget for next month.", when the
    caller has one for this turn: see ``wants_motive``) before or after it; a polite one thanks;
    the name is said at most once, in the first turn; the opening as they say it (``vary_opener``)."""
    out = vary_opener(text, persona, rng)
    if motive:
        out = motive + " " + out if rng.random() < 0.5 else out + " " + motive
    if first and not persona.brief and rng.random() < 0.35:
        greet = rng.choice(_GREETINGS)
        if persona.name and persona.name not in text and rng.random() < 0.35:
            greet = f"Hi, this is {persona.name.split()[0]}. "
        out = greet + out
    low = out.lower()
    if persona.polite and not any(w in low for w in ("please", "thank", "could you", "would you")):
        if rng.random() < 0.7:
            out = out.rstrip() + rng.choice(_THANKS if first else _LATER_THANKS)
    return out
