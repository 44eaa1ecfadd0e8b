"""Where the values in a conversation come from: scalar sets of JSON results, whole-token matching
in text, call counts, and provenance records for every sensitive argument of the ground truth.

    records, missing = provenance(example, registry)     # missing == [] when nothing was invented

Generation uses these to record an example's dependencies, error rate and provenance; validation
recomputes them from the example alone. Provenance: every value of a sensitive parameter in a
ground-truth call must appear in a user turn up to that call's turn, in an earlier tool message (a
result or an error listing valid ids), or in the sampling context shown in the system message;
otherwise it was invented. Minimality: ``redundant_reads`` names ground-truth reads whose result the
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
    "successful_tool_messages", "provenance", "redundant_reads", "held_in",
]

_NUMBER = re.compile(r"(?<![\w.\-:/])\d[\d,]*(?:\.\d+)?(?![\w\-:/]|\.\d)")
"""A number written on its own: not a piece of a date, time, id or version (2026-03-20, ACC-0003)."""


def _num_key(v: float) -> str:
    return repr(round(float(v), 6))


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


def provenance(example: Mapping[str, Any], registry: Registry
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(records, missing): where each sensitive argument value of the ground truth came from.

    A record is `{"turn", "call", "param", "value", "source": "user"|"result"|"context",
    "ref", "sampled_by"}`: `ref` is the user turn, the 0-based index of the earlier tool message,
    or null; `sampled_by` the sampling-context probe call that also returned the value, if any.
    """
    messages = list(example.get("messages", ()))
    gt = ground_truth_calls(example)
    ok_msgs = successful_tool_messages(example)
    sampled: dict[str, int] = {}
    for vals in (example.get("sampling_context") or {}).get("values", {}).values():
        for v, c in vals:
            sampled.setdefault(repr(v), c)
    system = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    # position in `messages` of each ground-truth call's tool message
    if len(ok_msgs) != len(gt):
        return [], [{"reason": f"{len(gt)} ground-truth calls but {len(ok_msgs)} successful tool messages"}]
    records, missing = [], []
    parsed_cache: dict[int, Any] = {}
    for (k, i, call), (pos, _) in zip(gt, ok_msgs, strict=True):
        spec = registry.tools.get(call.get("name"))
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        if spec is None:
            missing.append({"turn": k, "call": i, "reason": f"unknown tool {call.get('name')!r}"})
            continue
        users = [m["content"] for m in messages[:pos] if m.get("role") == "user"]
        earlier = [(j, m, parsed) for j, m in enumerate(messages[:pos]) if m.get("role") == "tool"
                   for parsed in (_parsed(parsed_cache, j, m),)]
        for param in spec.sensitive:
            if args.get(param) is None:
                continue
            for value in _flat(args[param]):
                rec = {"turn": k, "call": i, "param": param, "value": value,
                       "sampled_by": sampled.get(repr(value))}
                src = _source(value, users, earlier, system)
                if src is None:
                    missing.append({**rec, "reason": "value appears in no user turn, earlier tool "
                                                     "result or shown context"})
                    continue
                rec["source"], rec["ref"] = src
                records.append(rec)
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


def _source(value: Any, users: list[str], earlier: list[tuple[int, Mapping[str, Any], Any]],
            system: str) -> tuple[str, int | None] | None:
    for t, text in enumerate(users):
        if text_has_value(str(text), value):
            return "user", t
    for j, msg, parsed in earlier:
        if parsed is _TEXT:
            if text_has_value(str(msg.get("content", "")), value):
                return "result", j
        elif parsed.has(value):
            return "result", j
    if system and text_has_value(system, value):
        return "context", None
    return None
