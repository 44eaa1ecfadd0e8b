"""Drawing the values a user supplies for the planner: ids and values the live sampling context
holds, enum values, numbers within bounds, dates from the simulated clock, and free text.

What a parameter takes is read from its declarations, never from its name or description: a
string's kind of text, the listing field whose values fit it and an example (`prove.env.types.text`;
a search draws its words from the field it declares), what a number measures (`measure`) and a
date's role among the call's dates (`day`/`moment` `role=`).

    got = user_value(spec, "account_id", ctx, rng, args={})   # UserValue("ACC-0003", "id", None)
    got = user_value(spec, "check_in", ctx, rng, args, Prefer(past=True))
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from prove.env.tool import ToolSpec
from prove.env.types import declared_date_role, declared_format, declared_number
from prove.graph.features import Param, parameters
from prove.synth import phrasing as P
from prove.synth.intents import tool_intents
from prove.synth.plan_lookup import Belonging
from prove.synth.plan_results import base_schema
from prove.synth.sampling import SamplingContext, param_kind, param_source, schema_enum

__all__ = ["Prefer", "ToolParams", "UserValue", "date_format", "date_value", "number", "user_value",
           "is_running_text"]

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
_MADE_UP: dict[str, tuple[str, ...]] = {"reason": _REASONS, "person_name": _NAMES, "title": _TITLES,
                                        "body": _BODIES}
"""Stock text per declared kind of text (`prove.env.types.TEXT_KINDS`); other kinds get a word."""


def is_running_text(feat: Param) -> bool:
    """Whether a parameter declares running text (a message body, a note: text kind 'body'), which
    the user writes and no sampled value fills."""
    return feat.text == "body"


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


@dataclass(frozen=True)
class UserValue:
    """A value the user supplies and how they mention it: `kind` is 'enum' (with the user's
    `words` for it), 'bool', 'id', 'number', 'value' (a date, a sampled value) or 'text'."""

    value: Any
    kind: str
    words: str | None = None


@dataclass(frozen=True)
class Prefer:
    """What a failed rehearsal taught about the values to draw: dates in the past, ids shown beside
    one of the `wanted` words (states: "only open orders"), ids that belong to the conversation's
    world (None: it has none on this server yet, so any do)."""

    past: bool = False
    wanted: frozenset[str] = field(default_factory=frozenset)
    belongs: Belonging | None = None


def date_format(schema: dict[str, Any]) -> str | None:
    """'date', 'datetime' or 'time', from the declared format (`prove.env.types`: `day`, `moment`,
    `clock`)."""
    declared = declared_format(schema)
    return {"date-time": "datetime", "date": "date", "time": "time"}.get(declared or "")


def date_value(fmt: str, param: str, now: str, args: dict[str, Any], rng: Any,
               past: bool = False, role: str | None = None) -> str:
    """A date, date-time or time of day near the simulated `now`, by its declared `role`
    (`prove.env.types.DATE_ROLES`): an end an hour or two after the call's start date among `args`
    (other than `param` itself; a date or a 'return': days after), an expiry years ahead, else a
    working-hours moment some days ahead (behind, when `past`)."""
    try:
        base = datetime.fromisoformat(now) if now else datetime(2026, 3, 16, 9, 0)
    except ValueError:
        base = datetime(2026, 3, 16, 9, 0)
    if fmt == "time":
        return f"{rng.randrange(7, 22):02d}:{rng.choice((0, 15, 30, 45)):02d}"
    start = None
    if role in ("end", "return"):
        for key, value in args.items():
            if isinstance(value, str) and key != param and re.match(r"\d{4}-\d\d-\d\d", value):
                start = datetime.fromisoformat(value)
    if role == "expiry":
        when = base + timedelta(days=700 + rng.randrange(300))
    elif start is not None:
        hours = rng.choice((1, 2)) if fmt == "datetime" and role == "end" else 24 * rng.randrange(1, 4)
        when = start + timedelta(hours=hours)
    else:
        days = rng.randrange(1, 12)
        when = (base + timedelta(days=-days if past else days)).replace(
            hour=rng.randrange(9, 17), minute=rng.choice((0, 30)))
    return when.strftime("%Y-%m-%dT%H:%M" if fmt == "datetime" else "%Y-%m-%d")


_POOLS: dict[str | None, list[int]] = {
    "money": [5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 80, 100, 120, 150, 200, 250],
    "percent": list(range(50, 95, 5)),
    "temperature": [18, 19, 20, 21, 22, 23, 24],
    "level": list(range(20, 101, 10)),
    "rating": [1, 2, 3, 4, 5],
    "score": list(range(30, 91, 10)),
    "reading": [12000 + 250 * i for i in range(40)],
    None: [1, 2, 3],
}
"""Plausible values per declared kind of number (`prove.env.types.NUMBER_KINDS`; None: a count)."""


def number(kind: str | None, schema: dict[str, Any], rng: Any, integer: bool) -> float | int:
    """A plausible number of the declared `kind` (`prove.env.types.declared_number`) within the
    schema's bounds (inclusive or exclusive)."""
    if kind not in _POOLS:
        raise ValueError(f"number kind must be one of {', '.join(k for k in _POOLS if k)} or None; "
                         f"got {kind!r}")
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))

    def fits(v: float) -> bool:
        low = lo is None or v > lo or ("minimum" in schema and v >= lo)
        return low and (hi is None or v < hi or ("maximum" in schema and v <= hi))

    ok = [v for v in _POOLS[kind] if fits(v)]
    if not ok:
        start = int(lo) + 1 if lo is not None else 1
        ok = [start] if hi is None or start <= hi else [hi]
    value = rng.choice(ok)
    return int(value) if integer else value


def _ids(cands: list[Any], entity: str | None, ctx: SamplingContext, args: dict[str, Any],
         prefer: Prefer) -> list[Any]:
    """Candidate ids narrowed the way a conversation would use them: another id than the call's
    others of the kind (from, to), one of the conversation's world, one in a wanted state; each
    narrowing is dropped when it leaves nothing."""
    if entity is not None:
        cands = [v for v in cands if v not in args.values()] or cands
    belongs = prefer.belongs
    if belongs is not None and entity is not None:
        cands = [v for v in cands if belongs(entity, v, None)] or [
            v for v in belongs.linked(entity) if v not in args.values()] or cands
    if prefer.wanted:
        cands = [v for v in cands if ctx.attrs.get(v, frozenset()) & prefer.wanted] or cands
    return cands


def _made_up(text: str | None, example: str | None, rng: Any) -> str:
    """Free text for a parameter nothing sampled fits: its declared example, else stock text of its
    declared kind (a reason, a title, a person's name, a message body), else a word."""
    if example and rng.random() < 0.5:
        return example
    stock = _MADE_UP.get(text or "")
    if stock is not None:
        return rng.choice(stock)
    return example if example else rng.choice(_WORDS)


def _query(cands: list[Any], rng: Any) -> str:
    """A search word: a word of a value the listing field the search declares showed (`cands`),
    else a stock word."""
    pool = [v for v in cands if isinstance(v, str)]
    if not pool:
        return rng.choice(_WORDS)
    word = [w for w in re.split(r"\W+", rng.choice(pool[:40])) if len(w) >= 3]
    return rng.choice(word) if word else rng.choice(_WORDS)


def user_value(spec: ToolSpec, param: str, ctx: SamplingContext, rng: Any, args: dict[str, Any],
               prefer: Prefer | None = None,
               params: Callable[[ToolSpec], dict[str, Param]] = parameters) -> UserValue | None:
    """A value for a parameter the user supplies, or None (an id nothing sampled offers). `args`
    are the call's arguments so far; `params` reads a tool's parameters (pass a `ToolParams` to
    read each tool once); `prefer` carries what earlier failures taught (see `Prefer`): a probed
    id that belongs is preferred, else one the state links to the conversation's ids, else any."""
    prefer = prefer if prefer is not None else Prefer()
    schema = spec.input_schema.get("properties", {}).get(param, {})
    feat = params(spec)[param]
    enum = schema_enum(schema)
    base = base_schema(schema)
    is_array = base.get("type") == "array"

    def one(value: Any) -> Any:
        return [value] if is_array else value

    if enum:
        value = rng.choice(enum)
        return UserValue(one(value), "enum", P.enum_words(value, rng))
    kind = base_schema(base.get("items", {})).get("type", "string") if is_array else base.get("type")
    if kind == "boolean":
        return UserValue(rng.random() < 0.5, "bool")
    entity = param_kind(spec, param)
    if kind in ("integer", "number"):
        if entity is not None:
            nums = [v for v, _ in ctx.candidates(param_source(spec, param))
                    if isinstance(v, (int, float))
                    and not isinstance(v, bool)]
            if nums:
                return UserValue(rng.choice(nums[:30]), "id")
        return UserValue(number(declared_number(schema), base, rng, kind == "integer"), "number")
    fmt = date_format(base)
    if fmt:
        return UserValue(one(date_value(fmt, param, ctx.now.get(spec.server, ""), args, rng,
                                        prefer.past, declared_date_role(schema))), "value")
    cands = [v for v, _ in ctx.candidates(param_source(spec, param)) if isinstance(v, str) and v]
    example = feat.example
    if entity is not None or feat.sensitive:
        cands = _ids(cands, entity, ctx, args, prefer)
        if is_array and cands:
            n = min(len(cands), max(1, int(base.get("minItems", 1))))
            return UserValue(rng.sample(cands[:40], n), "id")
        if cands:
            return UserValue(one(rng.choice(cands[:40])), "id")
        return UserValue(one(example), "id") if example else None
    if feat.text == "query":
        return UserValue(one(_query(cands, rng)), "text")
    if cands and not is_running_text(feat):
        return UserValue(one(rng.choice(cands[:40])), "value")
    written = tool_intents(spec.server, spec.name)
    if written is not None and written.text.get(param):
        return UserValue(one(rng.choice(written.text[param])), "text")
    return UserValue(one(_made_up(feat.text, example, rng)), "text")
