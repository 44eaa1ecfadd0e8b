"""Reading a failed rehearsal's error for the planner from its structured detail (prove.env.errors):
values it offers, parameters it asks for, values it rejects, the states it wants, the direction of
time. Never the message's wording: rewording an error changes no plan.

    lessons = Lessons()
    redraw = learn(logged["detail"], spec, arguments, lessons, rng)   # parameters to draw again
    offered({"params": ["branch"], "choices": ["main", "dev"], ...}, {"branch": "x"})  # {"branch": [...]}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from prove.env.tool import ToolSpec
from prove.graph.features import PAGING

__all__ = ["Lessons", "learn", "offered", "same_shape"]

_ID = re.compile(r"\b([A-Z]{2,6})-\d{2,}\b")
_NOT_VALUES = frozenset({"unknown_tool", "unknown_argument"})  # choices that name tools/parameters


def same_shape(a: str, b: str) -> bool:
    """Two values of one kind: same id prefix, both emails, or both free-form tokens."""
    ma, mb = _ID.match(a), _ID.match(b)
    if ma or mb:
        return bool(ma and mb and ma.group(1) == mb.group(1))
    return ("@" in a) == ("@" in b)


def _about(detail: Mapping[str, Any], args: Mapping[str, Any]) -> list[str]:
    """The call's parameters the error is about (named at the raise site or holding a rejected
    value), in the call's order."""
    params = set(detail.get("params") or ()) | set(detail.get("rejected_params") or ())
    return [p for p in args if p in params]


def offered(detail: Mapping[str, Any], args: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Values the error offers instead, for each parameter they replace (those it names, else those
    whose value it rejects) where they can: same shape as the value (an id of the same kind, an
    email for an email), the value itself left out."""
    if detail.get("reason") in _NOT_VALUES:
        return {}
    choices = [c for c in detail.get("choices") or () if isinstance(c, (str, int, float))]
    named = [p for p in args if p in set(detail.get("params") or ())]
    targets = named or [p for p in args if p in set(detail.get("rejected_params") or ())]
    out: dict[str, list[Any]] = {}
    for param in targets:
        value = args[param]
        if isinstance(value, str):
            pool = [c for c in choices if isinstance(c, str) and c != value and same_shape(value, c)]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            pool = [c for c in choices if type(c) is type(value) and c != value]
        else:
            pool = []
        if pool:
            out[param] = pool
    return out


@dataclass
class Lessons:
    """What the errors of one step's rehearsal taught so far; `learn` adds to it, the next draw
    reads it."""

    pinned: dict[str, list[Any]] = field(default_factory=dict)  # param -> values an error offered
    forced: set[str] = field(default_factory=set)  # optional parameters an error asked for
    tried: dict[str, set[str]] = field(default_factory=dict)  # param -> rejected values (repr)
    past: bool = False  # a date must not be in the future
    wanted: set[str] = field(default_factory=set)  # states an error asks for ("open")


def learn(detail: Mapping[str, Any] | None, spec: ToolSpec, args: Mapping[str, Any],
          lessons: Lessons, rng: Any) -> set[str] | None:
    """Read a failed call's structured detail into `lessons`: a parameter it names that the call
    left out is forced (one, drawn with `rng`), values it offers are pinned, values it rejects are
    not drawn again, reason "future" turns dates to the past, `wanted` states are sought. Returns
    the parameters to draw again (None: all)."""
    detail = detail or {}
    named = [p for p in detail.get("params") or () if isinstance(p, str)]
    missing = [p for p in spec.params if p in named and p not in args and p not in PAGING
               and p not in lessons.forced]
    if missing:
        lessons.forced.add(rng.choice(missing))
    valid = offered(detail, args)
    if valid:
        lessons.pinned.update(valid)
        return set(valid)
    about = _about(detail, args)
    redraw = set(about)
    rejected = detail.get("rejected") or ()
    for param in about:
        value = args[param]
        if isinstance(value, (str, int, float)) and any(type(r) is type(value) and r == value
                                                       for r in rejected):
            lessons.tried.setdefault(param, set()).add(repr(value))
    if detail.get("reason") == "future":
        lessons.past = True
    lessons.wanted |= {w for w in detail.get("wanted") or () if isinstance(w, str)}
    return redraw or None
