"""Data-quality measures of user turns, the same for PROVE's data and BFCL's multi-turn questions.

    summary = turn_summary(example, linker)            # per kept example (pipeline workers)
    report = quality_report(summaries)                 # the dataset card's "quality" section
    reference = bfcl_reference()                       # the same measures on BFCL v4 multi-turn

Measures (each computed identically on both sides):
- **description overlap**: share of user turns that repeat a run of five or more consecutive words
  of the description of a tool offered with them (BFCL: the functions of the involved classes);
- **opener concentration**: share of user turns whose first two words are one of the ten most
  common first-two-words of the set;
- **lexical variety**: distinct words / words and distinct word pairs / pairs over the first
  10,000 words of the turns in a seeded order (a fixed size, because the ratios fall as text grows);
- **4-grams per 100 words**: distinct word 4-grams (within a turn) per 100 words over the same
  fixed-size sample (a reader's sense of repetition: templates repeat whole phrases, which distinct
  words and pairs hide);
- **words per user turn** (mean);
- **style marks** (share of user turns matching each of ``STYLE_MARKS``): a raw id like ACC-0001,
  an item named by a schema field ("whose <field> is '<value>'"), a back-reference ("from before",
  "from that list", "you just found"), a polite marker, a motive ("because", "so that", "for my"),
  broken template text (a doubled full stop as in "?." or "..", or a capitalised request spliced
  into a frame as in "Please What's ..." or "Go ahead and Open ..."), a template slip (a value put
  into a request without agreeing with it: "for 1 guests", a flag as "Unread only? yes", "a none
  post", "the message on the ... email");
- **raw ids by kind** (PROVE only): the share of user turns with a raw id of a kind people do not
  carry (``plan_lookup.CARRIED_KINDS``: an order number, a booking reference, a ticket number are
  carried; an account, a page, the user's own id are not), and the raw ids by entity kind (the
  kind the ground-truth call declares for the id; "?" for an id no call passes);
- **acknowledgement openers**: share of follow-up user turns (the second on) opening with a canned
  acknowledgement ("Great.", "Thanks!", "Perfect, ...", ``ACKNOWLEDGEMENTS``);
- **unshown references** (PROVE only; BFCL's questions come without replies): of the follow-up
  user turns' references to an item by a value an earlier tool result held (a quoted '...' or
  "..." value no earlier user turn wrote; contractions are not quotes), the share that no earlier
  assistant reply showed: the user refers to something only the model saw;
- **unoffered picks** (PROVE only): of the bookings that take a listed object (a slot, a room
  type), the share giving a value the listing did not offer or the search did not ask for
  (``unoffered_picks``);
- **vague references** (PROVE only): of the call arguments that take one object of an earlier
  listing of several, the share the user's words so far do not pick out (``ambiguous_references``);
- **unfit motives** (PROVE only): of the user turns giving one of the apps' motives, the share
  giving it with a request it is not declared to fit (``unfit_motives``);
- **repeated labels** (PROVE only): share of assistant replies writing one label ``REPEATS`` or more
  times before details ("center CTR-0002 (...)" once per slot: ``repeated_labels``);
- **entity coherence** (PROVE only; BFCL states hold no linked entity ids): share of multi-turn
  conversations (naming two or more ids) whose ids (the ground-truth arguments that declare an
  entity kind and exist in the seed's initial state) are linked in that state: connected when two
  ids count as linked if one record holds both (a reservation holds its guest's id; another
  guest's is not linked to it);
- **persona consistency** (PROVE only): share of multi-turn conversations whose calls act as one
  person: per server, one id in the parameters that say whom a call acts as (``ACTING_PARAMS``:
  user_id, customer_id, employee_id, sender_id, viewer_profile_id, ...);
- **non-minimal steps** (PROVE only): ground-truth reads no later call or assistant reply uses
  (no value the read brought appears in a later call's arguments or a later reply), beside the reads
  whose result an earlier result already held (``redundant_reads``);
- **two names** (PROVE only): of the conversations whose user gives themself a full name ("I'm
  Noah Garcia"), the share giving two (``self_names``: one person across a conversation's apps);
- **offered tools** (PROVE only): share of examples offering tools of two or more servers (by the
  servers the offered tools belong to, distractors included), share offering distractors, and
  distractor tools per example.

Quote conversations in full, drawn by a seed, or print a file's table beside BFCL's:

    python -m prove.synth.quality --quote 10 --seed 0 results/synth/examples.jsonl
    python -m prove.synth.quality results/synth/examples.jsonl
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from prove.synth.evidence import (
    ACTING_PARAMS,
    ground_truth_calls,
    number_key,
    numbers_in,
    redundant_reads,
    successful_tool_messages,
)
from prove.synth.intents import copied_run, intents_of, word_runs
from prove.synth.phrasing import picks, say_date
from prove.synth.plan_lookup import carried
from prove.synth.sampling import StateLinks, param_kind

__all__ = ["turn_summary", "quality_report", "bfcl_reference", "Linker", "opener", "lexical_variety",
           "VARIETY_WORDS", "quality_markdown", "flat_report", "STYLE_MARKS", "style_marks", "ACKNOWLEDGEMENTS",
           "acknowledges", "unshown_references", "unoffered_picks", "repeated_labels", "REPEATS", "unfit_motives", "ambiguous_references", "self_names", "SELF_NAME", "unused_reads", "id_kinds", "two_people", "STATED", "one_person", "acting_ids", "ACTING_PARAMS",
           "quote_conversation", "quote_sample", "main"]

VARIETY_WORDS = 10_000
_WORD = re.compile(r"[a-z0-9']+")

STYLE_MARKS: dict[str, re.Pattern[str]] = {
    "raw_id": re.compile(r"\b[A-Z]{2,6}-\d{3,}\b"),
    "field_phrase": re.compile(r"\bwhose [a-z_]+(?: [a-z_]+){0,2} (?:is|are|was) ['\"]", re.I),
    "back_reference": re.compile(r"\b(?:from before|from that list|from the list|you just (?:found|showed|listed)"
                                 r"|(?:that|the same) one|the one you)\b", re.I),
    "polite": re.compile(r"\b(?:please|thanks|thank you|could you|would you|would you mind|kindly|appreciate)\b",
                         re.I),
    "broken_text": re.compile(r"(?<!\.)[.?!]\.(?!\.)|\b(?:[Aa]nd|Please|[Tt]hen|that,|Next,|now) (?:What|What's|Open|Any|Show"
                              r"|How|Which|Who|Is|Are|Can|Could|Do|Find|List|Get|Tell|Check|Cancel|Book|Send)\b"),
    "template_slip": re.compile(r"(?<![\d.,$])\b1 (?:[a-z]{2,}[^s'u\W]s|people)\b(?![\"'])|\w[?:] (?:yes|no)(?=[.!]|\s*$|\s+[A-Z])"
                                r"|\b(?:an?|the) [Nn]one\b|(?<=[a-z,] )None\b"
                                r"|\bthe (?:message|email|mail) (?:on|of|behind) the (?:[^.\"]{1,40}? )?(?:email|message|mail)\b"
                                r"|\bthe (?:message|email|mail) (?:on|of|behind) the one\b"),
    "motive": re.compile(r"\b(?:because|so that|so i can|so we can|since i|since we|in order to|i need it for"
                         r"|for my|i'm planning|i am planning|i want to make sure)\b", re.I),
}
"""What a reader notices in a user turn, each a pattern; ``style_marks`` gives the share matching each."""

ACKNOWLEDGEMENTS = ("great", "thanks", "thank you", "perfect", "ok", "okay", "got it", "nice", "cool",
                    "awesome", "alright", "all right", "good", "excellent", "sounds good", "wonderful")
"""Canned acknowledgements a follow-up turn may open with (followed by punctuation)."""
_ACK = re.compile(r"^\s*(?:" + "|".join(re.escape(a) for a in ACKNOWLEDGEMENTS) + r")\b\s*[.,!;:-]", re.I)
IDENTITY = re.compile(r"\b(?:I'?m|I am)\s+(?:the|still|signed in|logged in|user|customer|employee|guest|member"
                      r"|profile|a customer|an employee)\b", re.I)
"""A user saying who they are ("I'm the user whose ...", "I'm still the same employee", "I'm signed in as")."""
_QUOTED = re.compile(r"(?<!\w)'([^'\n]{2,80}?)'(?!\w)|\"([^\"\n]{2,80})\"")
"""A quoted value: in single quotes that no letter touches from outside ("I'm ... What's" is two
contractions, not a quote), or in double quotes."""


def opener(text: str) -> str:
    """The first two words of a turn, lower-cased."""
    return " ".join(_WORD.findall(text.lower())[:2])


def lexical_variety(texts: Sequence[str], words: int = VARIETY_WORDS, seed: int = 0) -> dict[str, float]:
    """Distinct-1 and distinct-2 over the first `words` words of `texts` in a seeded order."""
    order = list(texts)
    random.Random(seed).shuffle(order)
    taken: list[list[str]] = []
    n = 0
    for text in order:
        toks = _WORD.findall(text.lower())
        taken.append(toks[: max(0, words - n)])
        n += len(taken[-1])
        if n >= words:
            break
    flat = [w for toks in taken for w in toks]
    pairs = [p for toks in taken for p in zip(toks, toks[1:], strict=False)]
    grams = {tuple(toks[i:i + 4]) for toks in taken for i in range(len(toks) - 3)}
    return {"words": len(flat),
            "distinct_1": round(len(set(flat)) / max(1, len(flat)), 4),
            "distinct_2": round(len(set(pairs)) / max(1, len(pairs)), 4),
            "distinct_4_per_100": round(100 * len(grams) / max(1, len(flat)), 2)}


def style_marks(texts: Sequence[str]) -> dict[str, float]:
    """The share of `texts` matching each of ``STYLE_MARKS``."""
    return {name: round(sum(bool(rx.search(t)) for t in texts) / max(1, len(texts)), 4)
            for name, rx in STYLE_MARKS.items()}


def acknowledges(text: str) -> bool:
    """The turn opens with a canned acknowledgement (``ACKNOWLEDGEMENTS``, then punctuation)."""
    return bool(_ACK.match(text))


def unshown_references(messages: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """(quoted values of follow-up user turns that refer to an item an earlier tool result held,
    how many of them no earlier assistant reply showed): the user refers to something only the
    model saw. A quoted value ('...' or "...", an apostrophe inside a word such as "I'm" opens no
    quote) counts as a reference when it equals, case-insensitively, a string of an earlier tool
    result and no earlier user turn wrote it (a message body, a search term, the title of a thing
    the user made or stated is the user's own text); it is shown when an earlier assistant reply's
    text holds it."""
    refs = unshown = 0
    shown: list[str] = []
    said: list[str] = []
    results: set[str] = set()
    users = 0
    for m in messages:
        role, text = m.get("role"), str(m.get("content") or "")
        if role == "assistant":
            shown.append(text.lower())
        elif role == "tool":
            results |= {v.lower() for v in _scalars(_json_or_text(text)) if isinstance(v, str)}
        elif role == "user":
            users += 1
            if users > 1:
                for match in _QUOTED.finditer(text):
                    value = (match.group(1) or match.group(2)).lower()
                    if value in results and not any(value in t for t in said):
                        refs += 1
                        unshown += not any(value in t for t in shown)
            said.append(text.lower())
    return refs, unshown


_LABEL = re.compile(r"(?:^|: |, | and | — |; )([^,:;()—]{2,60}?) \(")
"""A listed object's label in a written reply: the words before its details in parentheses."""
_SENTENCE = re.compile(r"(?<=[.!])\s+(?=[A-Z])")
REPEATS = 3
"""A reply that writes one label this many times repeats itself ("center CTR-0002 (...)" eleven times)."""


def repeated_labels(text: str) -> str | None:
    """The label one sentence of a written reply repeats ``REPEATS`` or more times before details
    in parentheses (it lists objects it does not tell apart by name), or None."""
    for sentence in _SENTENCE.split(text):  # one listing per sentence; separate results may agree
        counts = Counter(m.group(1).strip() for m in _LABEL.finditer(sentence))
        label, n = counts.most_common(1)[0] if counts else ("", 0)
        if n >= REPEATS:
            return label
    return None


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


class Linker(StateLinks):
    """Entity coherence of a conversation, over `StateLinks` (one record of the seed's initial
    state holding two ids links them)."""

    def coherent(self, example: Mapping[str, Any]) -> bool | None:
        """True when, per server, the conversation's ids that exist in the initial state form one
        connected group under "one record holds both"; None when it names fewer than two."""
        verdicts = []
        for server in example["servers"]:
            held = self.records(server, int(example["seed"]))
            ids: set[str] = set()
            for turn in example["turns"]:
                for call in turn["calls"]:
                    try:
                        spec = self.registry.tool(call["name"])
                    except KeyError:
                        continue
                    if spec.server != server:
                        continue
                    for param, value in (call.get("arguments") or {}).items():
                        kind = param_kind(spec, param)
                        for v in value if isinstance(value, list) else [value]:
                            if kind and f"{kind}:{v}" in held:
                                ids.add(f"{kind}:{v}")
            if len(ids) >= 2:
                order = sorted(ids)
                reached, frontier = {order[0]}, [order[0]]
                while frontier:
                    a = frontier.pop()
                    for b in order:
                        if b not in reached and held[a] & held[b]:
                            reached.add(b)
                            frontier.append(b)
                verdicts.append(len(reached) == len(ids))
        return all(verdicts) if verdicts else None


def _runs(descriptions: Iterable[str]) -> frozenset[tuple[str, ...]]:
    return frozenset().union(*(word_runs(d) for d in descriptions))


def _user_texts(example: Mapping[str, Any]) -> list[str]:
    return [str(m.get("content") or "") for m in example["messages"] if m.get("role") == "user"]


def turn_summary(example: Mapping[str, Any], linker: Linker | None = None) -> dict[str, Any]:
    """What the quality report needs of one example: its user turns, which of them copy an
    offered tool's description, and (multi-turn only) whether its entities are linked."""
    runs = _runs(str(t.get("function", t).get("description", "")) for t in example.get("tools", ()))
    texts = _user_texts(example)
    copied = [copied_run(t, runs) is not None for t in texts]
    coherent = linker.coherent(example) if linker is not None and example["kind"] == "multi_turn" else None
    refs, unshown = unshown_references(example["messages"])
    takes, unoffered = unoffered_picks(example)
    motives, unfit = unfit_motives(example)
    listed_refs, vague_refs = ambiguous_references(example)
    names = self_names(example)
    replies = [str(m.get("content") or "") for m in example["messages"]
               if m.get("role") == "assistant" and m.get("content")]
    summary = {"user_texts": texts, "copied": copied, "coherent": coherent, "result_refs": refs,
               "unshown_refs": unshown, "picks": takes, "unoffered_picks": unoffered,
               "named_self": bool(names), "two_names": len(names) > 1, "listed_refs": listed_refs, "vague_refs": vague_refs, "motives": motives, "unfit_motives": unfit, "replies": len(replies), "repeating_replies": sum(repeated_labels(r) is not None for r in replies)}
    if example["kind"] == "multi_turn":  # one person per conversation: said who they are in 2+ turns
        summary["identity_restated"] = sum(bool(IDENTITY.search(t)) for t in texts) > 1
    if linker is not None:  # its registry says which calls are reads
        registry = linker.registry
        kinds = id_kinds(example, registry)
        found = [[kinds.get(m.group(0), "?") for m in STYLE_MARKS["raw_id"].finditer(t)] for t in texts]
        summary["raw_id_kinds"] = [k for turn in found for k in turn]
        summary["uncarried_raw_id_turns"] = sum(any(not carried(k) for k in turn) for turn in found)
        summary["gt_calls"] = sum(len(t.get("calls", ())) for t in example["turns"])
        summary["redundant_reads"] = len(redundant_reads(example, registry))
        summary["unused_reads"] = len(unused_reads(example, registry))
        if example["kind"] == "multi_turn":
            summary["one_person"] = one_person(example, registry)
        offered = [str(t.get("function", t).get("name")) for t in example.get("tools", ())]
        summary["offered_servers"] = len({registry.tools[n].server for n in offered if n in registry.tools})
        summary["distractors"] = sum(len(p.get("tools", ())) for p in example.get("perturbations", ())
                                     if p.get("type") == "distractor_tools")
    return summary




def acting_ids(example: Mapping[str, Any], registry: Any) -> dict[str, set[Any]]:
    """Per server and parameter kind (``"messaging:user_id"``), the ids the ground truth's calls act
    as (``ACTING_PARAMS``; a ``profile_id`` counts only where no ``viewer_profile_id`` names the viewer)."""
    out: dict[str, set[Any]] = {}
    for _, _, call in ground_truth_calls(example):
        spec = registry.tools.get(call.get("name"))
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        if spec is None:
            continue
        for param in spec.sensitive:
            if param in ACTING_PARAMS and args.get(param) is not None and not (
                    param == "profile_id" and "viewer_profile_id" in spec.input_schema.get("properties", {})):
                key = "profile" if param.endswith("profile_id") else param
                out.setdefault(f"{spec.server}:{key}", set()).add(json.dumps(args[param], sort_keys=True))
    return out


def id_kinds(example: Mapping[str, Any], registry: Any) -> dict[str, str]:
    """The entity kind of every id the ground truth's calls pass (value -> kind, as the tools'
    parameters declare it), and of the ids an off-topic request said (its irrelevant_query
    record's ``ids``: no call passes those)."""
    out: dict[str, str] = {}
    for p in example.get("perturbations") or ():
        if p.get("type") == "irrelevant_query":
            out.update({str(k): str(v) for k, v in (p.get("ids") or {}).items()})
    for _, _, call in ground_truth_calls(example):
        spec = registry.tools.get(call.get("name"))
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        if spec is None:
            continue
        for param, value in args.items():
            kind = param_kind(spec, param)
            for v in value if isinstance(value, list) else [value]:
                if kind and isinstance(v, str):
                    out.setdefault(v, kind)
    return out


def one_person(example: Mapping[str, Any], registry: Any) -> bool | None:
    """Whether the user the calls act as stays one person (one id per server and acting parameter);
    None when no call acts as anyone."""
    ids = acting_ids(example, registry)
    return all(len(v) == 1 for v in ids.values()) if ids else None


STATED = re.compile(r"\b(?:I'm|I am|this is|(?:signed|logged) in as|[Mm]y [a-z]+(?: [a-z]+)? (?:ID|id|number) is|from me,)"
                    r"\s+(?:(?:the |a |an )?[a-z]+(?: [a-z]+)? )?([A-Z]{2,6}-\d{3,})\b", re.I)
"""A user saying who they are by an id ("I'm USR-0022", "my user ID is USR-0022", "as CUS-0003")."""


def two_people(example: Mapping[str, Any], registry: Any) -> str | None:
    """Why one conversation's user is two people, or None: per server and acting parameter
    (``acting_ids``), the calls act as two ids, or the user states an id of the same kind (its
    prefix: "USR-") other than the one the calls act as ("my user ID is USR-0022" after acting as
    USR-0003)."""
    ids = {k: {json.loads(v) for v in vs} for k, vs in acting_ids(example, registry).items()}
    said = [m.group(1) for msg in example.get("messages", ()) if msg.get("role") == "user"
            for m in STATED.finditer(str(msg.get("content") or ""))]
    for key, values in sorted(ids.items()):
        prefixes = {v.split("-")[0] + "-" for v in values if isinstance(v, str) and "-" in v}
        stated = {v for v in said if any(v.startswith(p) for p in prefixes)}
        people = {json.dumps(v, sort_keys=True) for v in values | stated}
        if len(people) > 1:
            return f"{key}: {', '.join(sorted(people))[:200]}"
    return None


def unused_reads(example: Mapping[str, Any], registry: Any) -> list[dict[str, Any]]:
    """Ground-truth reads no later step uses: no value the read brought (one of its result's
    strings of 3+ characters or numbers that neither its own arguments nor an earlier user turn
    held) appears in a later ground-truth call's arguments (a number there from 100 up: a 1 is
    a quantity by chance) or in an assistant reply after it (any number, as a number: "total: 3").
    One ``{"turn", "call", "name"}`` per such read; [] when calls and tool messages do not pair up."""
    gt = ground_truth_calls(example)
    results = successful_tool_messages(example)
    if len(gt) != len(results):
        return []
    messages = example.get("messages", ())
    replies = [(j, str(m.get("content") or "")) for j, m in enumerate(messages)
               if m.get("role") == "assistant" and m.get("content")]
    users = [(j, str(m.get("content") or "")) for j, m in enumerate(messages) if m.get("role") == "user"]
    found = []
    for n, ((k, i, call), (pos, result)) in enumerate(zip(gt, results, strict=True)):
        spec = registry.tools.get(call.get("name"))
        if spec is None or spec.write:
            continue
        known = json.dumps(call.get("arguments"), ensure_ascii=False) + "\n" + "\n".join(
            t for j, t in users if j < pos)
        later = json.dumps([c.get("arguments") for _, _, c in gt[n + 1:]], ensure_ascii=False)
        said = "\n".join(t for j, t in replies if j > pos)
        numbers = numbers_in(said)
        brought = (v for v in _scalars(result) if not _shown(v, known))
        if not any(_shown(v, later) or _shown(v, said) or (
                isinstance(v, (int, float)) and number_key(v) in numbers) for v in brought):
            found.append({"turn": k, "call": i, "name": call["name"]})
    return found


def unfit_motives(example: Mapping[str, Any]) -> tuple[int, int]:
    """(user turns giving one of the example's apps' motives, how many of them give it with a
    request it is not declared to fit): "make sure the car is locked for the night" before a
    wheel alignment. A turn's requests are its ground-truth calls of the chain's tools (its
    lookups are the assistant's doing), else all its calls; the motives and what each fits are
    the apps' data/intents files (``Intents.fits``)."""
    found = [i for i in (intents_of(s) for s in example.get("servers", ())) if i is not None]
    fits = {m: i.fits.get(m, frozenset()) for i in found for m in i.motives}
    chain = set((example.get("chain") or {}).get("tools", ()))
    users = [str(m.get("content") or "") for m in example.get("messages", ()) if m.get("role") == "user"]
    turns = example.get("turns", ())
    given = unfit = 0
    for k, text in enumerate(users):
        said = [m for m in fits if m in text]
        if not said or k >= len(turns):
            continue
        calls = [str(c.get("name")) for c in turns[k].get("calls", ())]
        asked = {c for c in calls if c in chain} or set(calls)
        given += 1
        unfit += not any(asked <= fits[m] for m in said)
    return given, unfit


_ORDINAL = re.compile(r"\b(?:first|second|third|last|top|latest|newest|oldest|earliest|cheapest|only)\b", re.I)


def ambiguous_references(example: Mapping[str, Any]) -> tuple[int, int]:
    """(ground-truth call arguments that take one object of an earlier multi-object listing, how
    many of them the user's words so far do not say which: neither the id, nor a value of the
    object's that its siblings do not share (a date as people write it too), nor an ordinal such
    as "the first"). "I spoke to this lead" after four leads is one; an object an earlier call
    acted on or a record shown on its own holds is in focus and not counted, nor is a value every
    listed object shares (the repository of all its issues)."""
    gt = ground_truth_calls(example)
    results = successful_tool_messages(example)
    if len(gt) != len(results):
        return 0, 0
    users = [str(m.get("content") or "") for m in example.get("messages", ()) if m.get("role") == "user"]
    refs = vague = 0
    acted: set[str] = set()
    for n, (k, _, call) in enumerate(gt):
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        text = " ".join(users[:k + 1])  # what the user has said so far (an answer to a question too)
        for param, value in args.items():
            if not isinstance(value, str) or not STYLE_MARKS["raw_id"].fullmatch(value) or value in acted:
                continue
            for _, result in results[:n]:
                hit = next(((o, objects) for objects in _object_lists(result) if len(objects) > 1
                            for o in objects if o.get(param) == value
                            and len({json.dumps(x.get(param)) for x in objects}) > 1), None)
                if hit is None:
                    continue
                obj, objects = hit
                own = {v for v in obj.values() if isinstance(v, str) and len(v) >= 3
                       and not all(x.get(k2) == v for x in objects for k2 in obj if obj.get(k2) == v)}
                own |= {say_date(v) for v in own} | {v.replace("_", " ") for v in own}  # as people write them
                refs += 1
                vague += not (value in text or _ORDINAL.search(text)
                              or any(v.lower() in text.lower() for v in own))
                break
        acted |= {v for v in args.values() if isinstance(v, str)}
        acted |= _record_strings(results[n][1])  # a record shown on its own is in focus
    return refs, vague


def _record_strings(node: Any) -> set[str]:
    """The strings of a result's records outside any list (a get's record and what it nests)."""
    if isinstance(node, dict):
        return set().union(*(_record_strings(v) if isinstance(v, dict) else
                             ({v} if isinstance(v, str) else set()) for v in node.values()))
    return set()


SELF_NAME = re.compile(r"\b(?:I'm|I am|[Tt]his is|(?:signed|logged) in as)\s+([A-Z][a-z'-]+(?: [A-Z][a-z'-]+)+)\b")
"""A user saying who they are by a full name ("I'm Noah Garcia", "signed in as Hiro Varga")."""


def self_names(example: Mapping[str, Any]) -> set[str]:
    """The full names the user gives themself in a conversation (one person keeps one name)."""
    return {m.group(1) for msg in example.get("messages", ()) if msg.get("role") == "user"
            for m in SELF_NAME.finditer(str(msg.get("content") or ""))}


def _object_lists(node: Any) -> Iterable[list[dict[str, Any]]]:
    """Every list of objects in a result (a search's slots, a listing's records), outermost first."""
    if isinstance(node, dict):
        for v in node.values():
            yield from _object_lists(v)
    elif isinstance(node, list):
        objects = [v for v in node if isinstance(v, dict)]
        if objects:
            yield objects
        for v in node:
            yield from _object_lists(v)


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def unoffered_picks(example: Mapping[str, Any]) -> tuple[int, int]:
    """(ground-truth calls that take one of the things an earlier result listed, how many of them
    give a value that no listed object of that kind offered). A call takes a listed object when it
    is a booking (``phrasing.picks``: book_, reserve_) and one of its arguments (not who acts,
    ``ACTING_PARAMS``) equals the same-named field of objects in an earlier result's list (the
    center's slots); it gives an unoffered value when another argument, not an id, names a field
    those objects hold (`start`) with a value none of them holds (a 2026-05-19 slot from a search
    that ran from 2026-05-20), or a value other than an earlier read's argument of the same name
    (an annual inspection booked from a search for wheel alignment; either makes it a taking)."""
    gt = ground_truth_calls(example)
    results = successful_tool_messages(example)
    if len(gt) != len(results):
        return 0, 0
    takes = unoffered = 0
    for n, (_, _, call) in enumerate(gt):
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        if not picks(str(call.get("name"))):
            continue
        took = bad = False
        for _, _, before in gt[:n]:  # what an earlier search asked for under the same name
            said = before.get("arguments") if isinstance(before.get("arguments"), dict) else {}
            if picks(str(before.get("name"))):
                continue
            for q, given in args.items():
                if q in said and not q.endswith("_id") and q not in ACTING_PARAMS \
                        and _scalar(given) and _scalar(said[q]):
                    took = True
                    bad |= said[q] != given
        for _, result in results[:n]:
            for objects in _object_lists(result):
                for param, value in args.items():
                    if not isinstance(value, str) or len(value) < 3 or param in ACTING_PARAMS:
                        continue  # who books is not what they take
                    holding = [o for o in objects if o.get(param) == value]
                    if not holding:
                        continue
                    took = True
                    for q, given in args.items():
                        if q == param or q.endswith("_id") or q in ACTING_PARAMS:
                            continue  # an id points at another thing (the room an event moves to)
                        offered = {json.dumps(o[q]) for o in holding if _scalar(o.get(q))}
                        if offered and _scalar(given) and json.dumps(given) not in offered:
                            bad = True
        takes += took
        unoffered += bad
    return takes, unoffered


def _scalars(node: Any) -> Iterable[Any]:
    if isinstance(node, dict):
        for v in node.values():
            yield from _scalars(v)
    elif isinstance(node, list):
        for v in node:
            yield from _scalars(v)
    elif not isinstance(node, bool) and node is not None:
        yield node


def _shown(value: Any, text: str) -> bool:
    """`value` (a string of 3+ characters, a number of 100 or more) is written in `text`."""
    if isinstance(value, str):
        return len(value) >= 3 and value in text
    if isinstance(value, (int, float)) and abs(value) >= 100:
        return any(form in text for form in {str(value), f"{value:,}", f"{value:.2f}", f"{value:,.2f}"})
    return False


def quality_report(summaries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The measures over many `turn_summary` dicts (or BFCL's, which have no `coherent`)."""
    texts: list[str] = []
    followups: list[str] = []
    copied = 0
    linked = judged = 0
    refs: int | None = None
    unshown = 0
    calls = redundant = 0
    conversations = restated = 0
    unused = persons = same_person = offered_n = multi_server = distractors = with_distractors = 0
    picks_n = unoffered_n = replies_n = repeating_n = motives_n = unfit_n = listed_n = vague_n = 0
    named_n = two_names_n = 0
    uncarried: int | None = None
    raw_kinds: Counter[str] = Counter()
    for s in summaries:
        if "uncarried_raw_id_turns" in s:
            uncarried = (uncarried or 0) + int(s["uncarried_raw_id_turns"])
            raw_kinds.update(s["raw_id_kinds"])
        unused += int(s.get("unused_reads", 0))
        picks_n += int(s.get("picks", 0))
        replies_n += int(s.get("replies", 0))
        motives_n += int(s.get("motives", 0))
        listed_n += int(s.get("listed_refs", 0))
        named_n += bool(s.get("named_self"))
        two_names_n += bool(s.get("two_names"))
        vague_n += int(s.get("vague_refs", 0))
        unfit_n += int(s.get("unfit_motives", 0))
        repeating_n += int(s.get("repeating_replies", 0))
        unoffered_n += int(s.get("unoffered_picks", 0))
        if s.get("one_person") is not None:
            persons += 1
            same_person += bool(s["one_person"])
        if "offered_servers" in s:
            offered_n += 1
            multi_server += int(s["offered_servers"]) > 1
            distractors += int(s["distractors"])
            with_distractors += int(s["distractors"]) > 0
        if "identity_restated" in s:
            conversations += 1
            restated += bool(s["identity_restated"])
        calls += int(s.get("gt_calls", 0))
        redundant += int(s.get("redundant_reads", 0))
        texts.extend(s["user_texts"])
        followups.extend(s["user_texts"][1:])
        copied += sum(bool(c) for c in s["copied"])
        if "result_refs" in s:
            refs = (refs or 0) + int(s["result_refs"])
            unshown += int(s["unshown_refs"])
        if s.get("coherent") is not None:
            judged += 1
            linked += bool(s["coherent"])
    openers = Counter(opener(t) for t in texts)
    top = openers.most_common(10)
    return {
        "user_turns": len(texts),
        "description_overlap": round(copied / max(1, len(texts)), 4),
        "top10_opener_share": round(sum(n for _, n in top) / max(1, len(texts)), 4),
        "top_openers": [[o, n] for o, n in top[:5]],
        "lexical_variety": lexical_variety(texts),
        "words_per_turn": round(sum(len(_WORD.findall(t.lower())) for t in texts) / max(1, len(texts)), 2),
        "style_marks": style_marks(texts),
        "uncarried_raw_id_share": round(uncarried / max(1, len(texts)), 4) if uncarried is not None else None,
        "raw_id_kinds": [[k, n] for k, n in sorted(raw_kinds.items(), key=lambda kv: (-kv[1], kv[0]))],
        "followup_turns": len(followups),
        "acknowledgement_opener_share": round(sum(map(acknowledges, followups)) / max(1, len(followups)), 4),
        "result_references": refs,
        "unshown_result_share": round(unshown / refs, 4) if refs else None,
        "picks": picks_n,
        "replies": replies_n,
        "motives_given": motives_n,
        "listed_references": listed_n,
        "named_self": named_n,
        "two_names_share": round(two_names_n / named_n, 4) if named_n else None,
        "vague_reference_share": round(vague_n / listed_n, 4) if listed_n else None,
        "unfit_motive_share": round(unfit_n / motives_n, 4) if motives_n else None,
        "repeated_label_share": round(repeating_n / replies_n, 4) if replies_n else None,
        "unoffered_pick_share": round(unoffered_n / picks_n, 4) if picks_n else None,
        "entity_coherence": round(linked / judged, 4) if judged else None,
        "identity_restated_share": round(restated / conversations, 4) if conversations else None,
        "ground_truth_calls": calls or None,
        "redundant_read_share": round(redundant / calls, 4) if calls else None,
        "unused_read_share": round(unused / calls, 4) if calls else None,
        "persona_judged": persons,
        "one_person_share": round(same_person / persons, 4) if persons else None,
        "offered_examples": offered_n,
        "offered_multi_server_share": round(multi_server / offered_n, 4) if offered_n else None,
        "offered_with_distractors_share": round(with_distractors / offered_n, 4) if offered_n else None,
        "distractors_per_example": round(distractors / offered_n, 3) if offered_n else None,
        "coherence_judged": judged,
    }


def bfcl_reference(data_dir: str | Path | None = None) -> dict[str, Any] | None:
    """The same measures on BFCL v4's multi-turn questions (base, miss_func, miss_param,
    long_context), from the installed `bfcl-eval` wheel; None when it is not installed."""
    found = _bfcl_reference(str(data_dir) if data_dir is not None else None)
    return json.loads(json.dumps(found)) if found is not None else None


@cache
def _bfcl_reference(data_dir: str | None) -> dict[str, Any] | None:
    if data_dir is None:
        try:
            import bfcl_eval
        except ImportError:
            return None
        data_dir = Path(bfcl_eval.__file__).parent / "data"
    data_dir = Path(data_dir)
    docs: dict[str, list[str]] = {}
    for path in sorted((data_dir / "multi_turn_func_doc").glob("*.json")):
        docs[path.stem] = [json.loads(line).get("description", "")
                           for line in path.read_text().splitlines() if line.strip()]
    by_class = {"GorillaFileSystem": "gorilla_file_system", "MathAPI": "math_api",
                "MessageAPI": "message_api", "TwitterAPI": "posting_api", "TicketAPI": "ticket_api",
                "TradingBot": "trading_bot", "TravelAPI": "travel_booking",
                "VehicleControlAPI": "vehicle_control"}
    summaries = []
    files = sorted(data_dir.glob("BFCL_v4_multi_turn_*.json"))
    for path in files:
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            offered = [d for c in entry.get("involved_classes", ()) for d in docs.get(by_class.get(c, ""), ())]
            texts = [str(m.get("content") or "") for turn in entry["question"] for m in turn
                     if m.get("role") == "user"]
            runs = _runs(offered)
            summaries.append({"user_texts": texts,
                              "copied": [copied_run(t, runs) is not None for t in texts]})
    report = quality_report(summaries)
    report["source"] = ", ".join(p.name for p in files)
    return report


def flat_report(report: Mapping[str, Any] | None) -> dict[str, Any]:
    """A report as one level of scalars (for a table): lexical variety spread out, lists dropped."""
    out: dict[str, Any] = {}
    for key, value in (report or {}).items():
        if isinstance(value, Mapping):
            out |= {f"{key}.{k}": v for k, v in value.items()}
        elif not isinstance(value, (list, tuple)):
            out[key] = value
    return out


SHARE_OF = {"redundant_read_share": "ground_truth_calls", "unused_read_share": "ground_truth_calls",
            "one_person_share": "persona_judged", "two_names_share": "named_self",
            "vague_reference_share": "listed_references", "unfit_motive_share": "motives_given",
            "repeated_label_share": "replies", "unoffered_pick_share": "picks",
            "unshown_result_share": "result_references"}
"""Card rows that are a share of a counted whole: the report key of the whole each is printed "of"."""


def quality_markdown(ours: Mapping[str, Any], bfcl: Mapping[str, Any] | None) -> list[str]:
    """The card's side-by-side table."""
    def cell(report: Mapping[str, Any] | None, key: str) -> str:
        if report is None:
            return "n/a"
        value: Any = report.get(key)
        if key == "lexical_variety":
            return f"{value['distinct_1']:.3f} / {value['distinct_2']:.3f} ({value['words']:,} words)"
        if key == "distinct_4_per_100":
            return f"{report['lexical_variety'].get(key, float('nan')):.1f}"
        if key.startswith("style_marks."):
            return f"{report['style_marks'][key.split('.', 1)[1]]:.1%}"
        if key in SHARE_OF and value is not None:
            return f"{value:.1%} of {report[SHARE_OF[key]]:,}"
        if key == "distractors_per_example" and value is not None:
            return f"{value:.2f}"
        if key == "words_per_turn":
            return f"{value:.1f}"
        return "n/a" if value is None else (f"{value:.1%}" if isinstance(value, float) else str(value))

    rows = [("user turns", "user_turns"),
            ("turns repeating 5+ words of an offered tool's description", "description_overlap"),
            ("turns opening with one of the 10 commonest first-two-words", "top10_opener_share"),
            (f"distinct words / word pairs (first {VARIETY_WORDS:,} words)", "lexical_variety"),
            ("distinct 4-grams per 100 words (same sample)", "distinct_4_per_100"),
            ("words per user turn", "words_per_turn"),
            ("turns with a raw id like ACC-0001", "style_marks.raw_id"),
            ("turns with a raw id of a kind people do not carry (not an order, booking, ticket ...)",
             "uncarried_raw_id_share"),
            ("turns naming an item by a field (\"whose <field> is '...'\")", "style_marks.field_phrase"),
            ("turns with \"from before\" / \"from that list\" / \"you just found\"", "style_marks.back_reference"),
            ("turns with a polite marker", "style_marks.polite"),
            ("turns giving a motive", "style_marks.motive"),
            ("motives given with a request they are not declared to fit (data/intents motives)",
             "unfit_motive_share"),
            ("turns with broken template text (\"?.\", \"Please What's\")", "style_marks.broken_text"),
            ("turns with a template slip (\"1 guests\", \"Unread only? yes\", \"a none post\")",
             "style_marks.template_slip"),
            ("follow-up turns opened by a canned acknowledgement", "acknowledgement_opener_share"),
            ("follow-up references to a tool result's value that no assistant reply showed",
             "unshown_result_share"),
            ("calls taking one object of a multi-object listing the user never said which (\"this lead\" of four)",
             "vague_reference_share"),
            (f"assistant replies writing one label {REPEATS}+ times (\"center CTR-0002 (...)\" again and again)",
             "repeated_label_share"),
            ("bookings of a listed thing with a value the listing did not offer (a slot the search did not return)",
             "unoffered_pick_share"),
            ("multi-turn conversations whose ids are linked in the state", "entity_coherence"),
            ("multi-turn conversations whose user says who they are in 2+ turns", "identity_restated_share"),
            ("ground-truth reads whose result the conversation already showed", "redundant_read_share"),
            ("ground-truth reads no later call or reply uses (non-minimal steps)", "unused_read_share"),
            ("multi-turn conversations whose calls act as one person (persona consistency)", "one_person_share"),
            ("conversations whose user gives themself two names (\"I'm Noah Garcia\" ... \"I'm Hiro Varga\")",
             "two_names_share"),
            ("examples offering tools of 2+ servers", "offered_multi_server_share"),
            ("examples offering distractor tools", "offered_with_distractors_share"),
            ("distractor tools offered per example", "distractors_per_example")]
    lines = ["## Data quality (prove.synth.quality)", "",
             "| measure | this data | BFCL v4 multi-turn |", "|---|---|---|"]
    lines += [f"| {label} | {cell(ours, key)} | {cell(bfcl, key)} |" for label, key in rows]
    if ours.get("raw_id_kinds"):
        lines += ["", "Raw ids in user turns by entity kind (* people carry these): " + ", ".join(
            f"{k}{'*' if carried(k) else ''} ({n})" for k, n in ours["raw_id_kinds"])]
    if ours.get("top_openers"):
        lines += ["", "Commonest openers here: " + ", ".join(f"'{o}' ({n})" for o, n in ours["top_openers"])]
    return lines + [""]


# -- conversations quoted in full ------------------------------------------------------------
def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote_conversation(example: Mapping[str, Any], result_chars: int = 160) -> str:
    """One example as a reader reads it: its id, kind and servers, every user turn, each assistant
    call with its arguments, each tool result cut to `result_chars`, and the assistant's replies
    (the system message and the offered tools are left out)."""
    lines = [f"### {example.get('id', '?')} — {example.get('kind', '?')} on "
             f"{', '.join(example.get('servers', ()))} (seed {example.get('seed', '?')})"]
    for m in example.get("messages", ()):
        role, content = m.get("role"), str(m.get("content") or "")
        if role == "user":
            lines.append(f"USER: {content}")
        elif role == "assistant":
            for call in m.get("tool_calls") or ():
                fn = call.get("function", call)
                args = fn.get("arguments", {})
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except ValueError:
                        pass
                text = json.dumps(args, sort_keys=True, ensure_ascii=False) if not isinstance(args, str) else args
                lines.append(f"  CALL {fn.get('name')}({text})")
            if content.strip():
                lines.append(f"ASSISTANT: {content}")
        elif role == "tool":
            lines.append(f"    -> {_short(content, result_chars)}")
    return "\n".join(lines)


def quote_sample(examples: Sequence[Mapping[str, Any]], n: int, seed: int = 0) -> list[Mapping[str, Any]]:
    """`n` examples drawn by `seed` (not chosen by hand), in the order of the file."""
    if n < 0:
        raise ValueError(f"--quote takes a count of 0 or more, not {n}")
    picked = sorted(random.Random(seed).sample(range(len(examples)), min(n, len(examples))))
    return [examples[i] for i in picked]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m prove.synth.quality --quote 10 --seed 0 results/synth/examples.jsonl`: quote
    conversations in full; without --quote, print the quality table of the file beside BFCL's."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m prove.synth.quality", description=__doc__.splitlines()[0])
    ap.add_argument("path", help="an examples.jsonl written by prove synth")
    ap.add_argument("--quote", type=int, default=None, metavar="N", help="quote N conversations in full")
    ap.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    ap.add_argument("--result-chars", type=int, default=160, help="tool results cut to this many characters")
    args = ap.parse_args(argv)
    path = Path(args.path)
    if not path.is_file():
        ap.error(f"{path}: no such file (give the examples.jsonl a synthesis run wrote)")
    examples = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.quote is not None:
        if args.quote < 0:
            ap.error(f"--quote takes a count of 0 or more, not {args.quote}")
        chosen = quote_sample(examples, args.quote, args.seed)
        print(f"{len(chosen)} of {len(examples)} conversations in {path}, drawn with seed {args.seed}\n")
        print("\n\n".join(quote_conversation(e, args.result_chars) for e in chosen))
        return 0
    from prove.env.registry import load_registry

    linker = Linker(load_registry())
    report = quality_report(turn_summary(e, linker) for e in examples)
    print("\n".join(quality_markdown(report, bfcl_reference())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
