"""Reading a failed rehearsal's error for the planner, the way a careful assistant reads it: valid
values it lists, parameters it asks for, values it rejects, the states it wants, the direction of
time. The one place that parses error wording.

    lessons = Lessons()
    redraw = learn(error, spec, arguments, lessons, rng)   # parameters to draw again (None: all)
    listed("unknown branch 'x'; branches: main, dev", {"branch": "x"}, set())   # {"branch": [...]}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from prove.env.tool import ToolSpec
from prove.graph.features import PAGING

__all__ = ["Lessons", "learn", "listed", "same_shape"]

_LISTED_ID = re.compile(r"\b([A-Z]{2,6})-\d{2,}\b")
_EG = re.compile(r"e\.g\. '([^']+)'")


def same_shape(a: str, b: str) -> bool:
    """Two values of one kind: same id prefix, both emails, or both free-form tokens."""
    ma, mb = _LISTED_ID.match(a), _LISTED_ID.match(b)
    if ma or mb:
        return bool(ma and mb and ma.group(1) == mb.group(1))
    return ("@" in a) == ("@" in b)


def _trailing_list(error: str, args: dict[str, Any], params: list[str]) -> dict[str, list[Any]]:
    """A list closing the error ("...; branches: main, dev"), for each of `params` whose value it
    can replace (same shape, the value itself left out)."""
    tail = error.rsplit(": ", 1)[-1] if ": " in error else ""
    items = [re.sub(r" \(.*?\)", "", x).strip() for x in re.sub(r" \(and \d+ more\)$", "", tail).split(", ")]
    items = [x for x in items if x and " " not in x and "'" not in x and len(x) < 80]
    out: dict[str, list[Any]] = {}
    if items and len(items) == len(tail.split(", ")):
        for param in params:
            value = args.get(param)
            pool = [x for x in items if x != value]
            if isinstance(value, str) and pool and same_shape(value, pool[0]):
                out[param] = pool
    return out


def _same_kind_ids(error: str, args: dict[str, Any], quoted: set[str]) -> dict[str, list[Any]]:
    """Ids in the error with the prefix of an id argument ("owners: USR-0010, USR-0021"), for that
    argument (only the quoted ones, when the error quotes any)."""
    found: dict[str, list[str]] = {}
    for m in _LISTED_ID.finditer(error):
        found.setdefault(m.group(1), [])
        if m.group(0) not in found[m.group(1)]:
            found[m.group(1)].append(m.group(0))
    out: dict[str, list[Any]] = {}
    for param, value in args.items():
        if isinstance(value, str) and "-" in value and (param in quoted or not quoted):
            same = [v for v in found.get(value.split("-", 1)[0], ()) if v != value]
            if same:
                out[param] = same
    return out


def listed(error: str, args: dict[str, Any], named: set[str]) -> dict[str, list[Any]]:
    """Values an error offers as valid, for the argument they replace: a trailing list
    ("...; branches: main, dev", "their vehicles: VEH-0003, VEH-0007"), an example
    ("e.g. 'API_TIMEOUT'") or ids of the same kind ("owners: USR-0010, USR-0021"), the first that
    gives anything. `named` are the parameters the error names; without any, the arguments whose
    values it quotes (or, for a trailing list, merely contains)."""
    quoted = {p for p, v in args.items() if isinstance(v, (str, int)) and f"'{v}'" in error}
    mentioned = {p for p, v in args.items() if isinstance(v, str) and len(v) > 2 and v in error}
    out = _trailing_list(error, args, sorted(named or (quoted | mentioned)))
    if out:
        return out
    m = _EG.search(error)
    if m:
        out = {param: [m.group(1)] for param in sorted(named or quoted)
               if isinstance(args.get(param), str)}
        if out:
            return out
    return _same_kind_ids(error, args, quoted)


@dataclass
class Lessons:
    """What the errors of one step's rehearsal taught so far; `learn` adds to it, the next draw
    reads it."""

    pinned: dict[str, list[Any]] = field(default_factory=dict)  # param -> values an error listed
    forced: set[str] = field(default_factory=set)  # optional parameters an error asked for
    tried: dict[str, set[str]] = field(default_factory=dict)  # param -> rejected values (repr)
    past: bool = False  # a date must not be in the future
    wanted: set[str] = field(default_factory=set)  # states an error asks for ("only open orders")


def learn(error: str, spec: ToolSpec, args: dict[str, Any], lessons: Lessons, rng: Any
          ) -> set[str] | None:
    """Read a failed call's error into `lessons`: a missing parameter it names is forced (one, drawn
    with `rng`), values it lists as valid are pinned, values it quotes are rejected, "in the
    future" turns dates to the past, "only open ..." wants those states. Returns the parameters to
    draw again (None: all)."""
    named = set(re.findall(r"(?:parameter|argument) '(\w+)'", error)) & set(args)
    missing = [p for p in spec.params if p not in args and p not in PAGING and p not in lessons.forced
               and re.search(rf"(?<![\w.]){re.escape(p)}(?![\w])", error)]
    if missing:
        lessons.forced.add(rng.choice(missing))
    valid = listed(error, args, named)
    if valid:
        lessons.pinned.update(valid)
        return set(valid)
    redraw = set(named)
    for param, value in args.items():
        if isinstance(value, (str, int, float)) and f"'{value}'" in error:
            lessons.tried.setdefault(param, set()).add(repr(value))
            redraw.add(param)
    if "in the future" in error:
        lessons.past = True
    for words in re.findall(r"\bonly ([a-z_ ,]+)", error):
        lessons.wanted |= {w for w in re.split(r"[ ,]+", words) if len(w) > 2} - {"the", "and"}
    return redraw or None
