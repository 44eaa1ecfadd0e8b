"""Where the values in a conversation come from: scalar sets of JSON results, whole-token matching
in text, call counts, and provenance records for every sensitive argument of the ground truth.

    records, missing = provenance(example, registry)     # missing == [] when nothing was invented

Generation uses these to record an example's dependencies, error rate and provenance; validation
recomputes them from the example alone. Provenance: every value of a sensitive parameter in a
ground-truth call must come from this user's own words (a user message up to that call's turn) or
from a tool message shown before the call (a result, or an error listing valid ids), and a
person's id taken from a result must sit in a record the user named; otherwise it was invented. Minimality: ``redundant_reads`` names ground-truth reads whose result the
conversation already showed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from prove.env.registry import Registry

__all__ = [
    "ValueSet", "json_values", "text_has_value", "call_stats", "ground_truth_calls",
    "successful_tool_messages", "provenance", "redundant_reads", "held_in", "PERSON_KINDS", "numbers_in",
    "number_key", "ACTING_PARAMS",
]

_NUMBER = re.compile(r"(?<![\w.\-:/])\d[\d,]*(?:\.\d+)?(?![\w\-:/]|\.\d)")
"""A number written on its own: not a piece of a date, time, id or version (2026-03-20, ACC-0003)."""


def _num_key(v: float) -> str:
    return repr(round(float(v), 6))


def numbers_in(text: str) -> set[str]:
    """The numbers written on their own in `text` ("1,200.5", not a piece of a date or id), as
    keys that compare by value: ``number_key(1200.5) in numbers_in("pay 1,200.50")``."""
    return {_num_key(float(m.replace(",", ""))) for m in _NUMBER.findall(text)}


def number_key(value: float) -> str:
    """A number's key in ``numbers_in``'s set."""
    return _num_key(value)


class ValueSet:
    """Scalars of a JSON value, for membership tests (numbers compare by value)."""

    def __init__(self) -> None:
        self.strings: set[str] = set()
        self.numbers: set[str] = set()

    def add(self, node: Any) -> None:
        if isinstance(node, dict):
            for v in node.values():
                self.add(v)
        elif isinstance(node, list):
            for v in node:
                self.add(v)
        elif isinstance(node, bool) or node is None:
            return
        elif isinstance(node, (int, float)):
            self.numbers.add(_num_key(node))
        elif isinstance(node, str):
            self.strings.add(node)

    def has(self, value: Any) -> bool:
        if isinstance(value, bool) or value is None:
            return False
        if isinstance(value, (int, float)):
            return _num_key(value) in self.numbers
        return isinstance(value, str) and value in self.strings


def json_values(node: Any) -> ValueSet:
    out = ValueSet()
    out.add(node)
    return out


def text_has_value(text: str, value: Any) -> bool:
    """Is `value` written in `text`? Strings as a whole token; numbers by value (1,200.5 == 1200.5)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        key = _num_key(value)
        return any(_num_key(float(m.replace(",", ""))) == key for m in _NUMBER.findall(text))
    if not isinstance(value, str) or not value:
        return False
    pattern = r"(?<![\w-])" + re.escape(value) + r"(?![\w-])"
    if re.search(pattern, text):
        return True
    return "@" in value and re.search(pattern, text, re.I) is not None


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return [value]


def call_stats(example: Mapping[str, Any]) -> tuple[int, int]:
    """(calls made, calls that failed) over the whole conversation."""
    tools = [m for m in example.get("messages", ()) if m.get("role") == "tool"]
    errors = sum(str(m.get("content", "")).startswith("Error:") for m in tools)
    return len(tools), errors


ACTING_PARAMS = frozenset({"user_id", "customer_id", "employee_id", "guest_id", "passenger_id", "investor_id",
                           "profile_id", "viewer_profile_id", "requester_profile_id", "sender_id", "agent_id",
                           "rep_id", "requested_by_rep_id"})
"""Parameters that say whom a call acts as (the user of the app), not whom it acts on."""


def ground_truth_calls(example: Mapping[str, Any]) -> list[tuple[int, int, dict[str, Any]]]:
    """(turn, index in turn, call) for every ground-truth call, in execution order."""
    return [(k, i, c) for k, turn in enumerate(example.get("turns", ()))
            for i, c in enumerate(turn.get("calls", ()))]


def successful_tool_messages(example: Mapping[str, Any]) -> list[tuple[int, Any]]:
    out = []
    for pos, m in enumerate(example.get("messages", ())):
        if m.get("role") == "tool" and not str(m.get("content", "")).startswith("Error:"):
            try:
                out.append((pos, json.loads(m["content"])))
            except (ValueError, TypeError):
                out.append((pos, m.get("content")))
    return out


PERSON_KINDS: frozenset[str] = frozenset({
    "user", "customer", "employee", "guest", "passenger", "investor", "profile", "agent", "sales_rep",
    "person", "contact", "customer_email", "guest_email", "user_email"})
"""Entity kinds (declared by id parameters) that name a person: who the user is or whom they mean."""


def provenance(example: Mapping[str, Any], registry: Registry
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(records, missing): where each sensitive argument value of the ground truth came from.

    A value is grounded only by this user's own words (a user message before the call) or by a
    tool message shown before it (a result, or an error listing valid ids); a value only the
    system message holds is not. A person (a parameter declaring one of ``PERSON_KINDS``: the
    user's own identity or someone they mean) is grounded by a result only when the record that
    holds the id as a field of its own also holds something the user said (a name, an email, the
    id of the order or chat it belongs to): an id picked from a list of members or strangers is
    an identity the user never stated.

    A record is `{"turn", "call", "param", "value", "source": "user"|"result", "ref", "message",
    "sampled_by"}` (and `"named_by"`, the value the user said, for a person from a result): `ref`
    is the user turn (0-based) or the index of the tool message, `message` the index in
    `messages` of the message the value came from; `sampled_by` the sampling-context probe call
    that also returned the value, if any.
    """
    from prove.env.types import declared_entity

    messages = list(example.get("messages", ()))
    gt = ground_truth_calls(example)
    ok_msgs = successful_tool_messages(example)
    sampled: dict[str, int] = {}
    for vals in (example.get("sampling_context") or {}).get("values", {}).values():
        for v, c in vals:
            sampled.setdefault(repr(v), c)
    # position in `messages` of each ground-truth call's tool message
    if len(ok_msgs) != len(gt):
        return [], [{"reason": f"{len(gt)} ground-truth calls but {len(ok_msgs)} successful tool messages"}]
    user_at = [j for j, m in enumerate(messages) if m.get("role") == "user"]
    records, missing = [], []
    parsed_cache: dict[int, Any] = {}
    for (k, i, call), (pos, _) in zip(gt, ok_msgs, strict=True):
        spec = registry.tools.get(call.get("name"))
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        if spec is None:
            missing.append({"turn": k, "call": i, "reason": f"unknown tool {call.get('name')!r}"})
            continue
        users = [(t, j, str(messages[j].get("content") or "")) for t, j in enumerate(user_at) if j < pos]
        earlier = [(j, m, _parsed(parsed_cache, j, m)) for j, m in enumerate(messages[:pos])
                   if m.get("role") == "tool"]
        schema = spec.input_schema
        for param in spec.sensitive:
            if args.get(param) is None:
                continue
            kind = declared_entity(schema.get("properties", {}).get(param, {}), schema.get("$defs"))
            person = kind in PERSON_KINDS
            for value in _flat(args[param]):
                rec = {"turn": k, "call": i, "param": param, "value": value,
                       "sampled_by": sampled.get(repr(value))}
                src = _source(value, users, earlier, person)
                if isinstance(src, str):
                    missing.append({**rec, "reason": src, **({"person": True} if person and "person" in src else {})})
                    continue
                records.append({**rec, **src})
    return records, missing


def redundant_reads(example: Mapping[str, Any], registry: Registry) -> list[dict[str, Any]]:
    """Ground-truth reads the conversation did not need: a successful read (a tool not marked
    ``write``) whose whole result an earlier successful tool result already held, every field with
    the same value (a get of a record its listing showed, a status read right after the write that
    returned it). One ``{"turn", "call", "name", "shown_in"}`` per such call, ``shown_in`` the
    earlier tool message's index in ``messages``; [] when calls and tool messages do not pair up
    (replay reports that)."""
    gt = ground_truth_calls(example)
    results = successful_tool_messages(example)
    if len(gt) != len(results):
        return []
    found = []
    for (k, i, call), (pos, result) in zip(gt, results, strict=True):
        spec = registry.tools.get(call.get("name"))
        if spec is None or spec.write:
            continue
        shown = next((j for j, earlier in results if j < pos and held_in(result, earlier)), None)
        if shown is not None:
            found.append({"turn": k, "call": i, "name": call["name"], "shown_in": shown})
    return found


def held_in(result: Any, earlier: Any) -> bool:
    """Whether a read's result (a non-empty JSON object) is already held by an earlier result: some
    object in it has every one of the result's fields, with the same values."""
    if not isinstance(result, dict) or not result:
        return False
    return any(all(key in d and d[key] == v for key, v in result.items()) for d in _dicts(earlier))


def _dicts(node: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object in a parsed result, the result itself first."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _dicts(v)
    elif isinstance(node, list):
        for v in node:
            yield from _dicts(v)


_TEXT = object()


def _parsed(cache: dict[int, Any], j: int, msg: Mapping[str, Any]) -> Any:
    """A tool message as a ValueSet (results) or `_TEXT` (errors, non-JSON), parsed once."""
    if j not in cache:
        content = str(msg.get("content", ""))
        if content.startswith("Error:"):
            cache[j] = _TEXT
        else:
            try:
                cache[j] = json_values(json.loads(content))
            except ValueError:
                cache[j] = _TEXT
    return cache[j]


def _source(value: Any, users: list[tuple[int, int, str]],
            earlier: list[tuple[int, Mapping[str, Any], Any]], person: bool) -> dict[str, Any] | str:
    """Where `value` came from (``source``, ``ref``, ``message`` and, for a person taken from a
    result, ``named_by``), or why it is not grounded."""
    for t, j, text in users:
        if text_has_value(text, value):
            return {"source": "user", "ref": t, "message": j}
    unnamed: int | None = None
    for j, msg, parsed in earlier:
        if parsed is _TEXT:
            if text_has_value(str(msg.get("content", "")), value):
                return {"source": "result", "ref": j, "message": j}
        elif parsed.has(value):
            if not person:
                return {"source": "result", "ref": j, "message": j}
            named = _named_by(value, _result(msg), [text for _, _, text in users])
            if named is not None:
                return {"source": "result", "ref": j, "message": j, "named_by": named}
            unnamed = j if unnamed is None else unnamed
    if unnamed is not None:
        return (f"a person's id that only tool message {unnamed} holds, in no record the user named "
                "(by its id, a name or another value they said): an identity the user never stated")
    return "value appears in no user turn or earlier tool message"


def _result(msg: Mapping[str, Any]) -> Any:
    try:
        return json.loads(str(msg.get("content", "")))
    except ValueError:
        return None


def _named_by(value: Any, result: Any, users: list[str]) -> Any:
    """A value the user said that a record holding `value` as a field of its own also holds (the
    record or one that contains it), or None: how the user named the person `value` ids."""
    for chain in _holders(result, ()):
        if not any(_equal(v, value) for v in chain[-1].values()):
            continue
        for record in reversed(chain):
            for v in record.values():
                if isinstance(v, (str, int)) and not isinstance(v, bool) and not _equal(v, value) \
                        and _tie(v) and any(_says(text, v) for text in users):
                    return v
    return None


def _says(text: str, v: Any) -> bool:
    """The user's text names `v`: the whole value, or one capitalised word of a name or title
    ("Farid" for "Farid Okafor", as a person searches by first name)."""
    if text_has_value(text, v):
        return True
    return isinstance(v, str) and " " in v and any(
        len(w) >= 3 and w[0].isupper() and text_has_value(text, w) for w in v.split())


def _holders(node: Any, chain: tuple[dict[str, Any], ...]) -> Iterator[tuple[dict[str, Any], ...]]:
    """Every JSON object in a result with the objects that contain it (outermost first)."""
    if isinstance(node, dict):
        chain = (*chain, node)
        yield chain
        for v in node.values():
            yield from _holders(v, chain)
    elif isinstance(node, list):
        for v in node:
            yield from _holders(v, chain)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return _num_key(a) == _num_key(b)
    return a == b


def _tie(v: Any) -> bool:
    """Whether a field value is specific enough to name a record by: a name, an id, an email, a
    date (3+ characters with a capital, a digit, a space or an @); not a status word or a count."""
    if isinstance(v, int):
        return abs(v) >= 1000
    return isinstance(v, str) and len(v) >= 3 and any(c.isdigit() or c.isupper() or c in "@ " for c in v)
