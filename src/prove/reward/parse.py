"""Input normalisation for the reward: logged calls, hermes ``<tool_call>`` text, ground truth.

Use: ``normalise_calls(log_or_text)`` → ``list[Call]``; ``parse_tool_calls(text)`` → ``list[Call]``;
``normalise_ground_truth(gt)`` → ``GroundTruth``. Nothing here raises on JSON-like input: every
shape is mapped explicitly to a sensible value, as documented per function. Scoring reads
logged calls as plain tuples of the same fields (``calls_fields``): cheaper to build and to
unpack than a NamedTuple per call.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

_MISSING = object()  # what ``loads`` returns for text that is not JSON


class Call(NamedTuple):
    """A predicted call: ``ok`` is True/False for a logged outcome, None when unknown."""

    name: str
    arguments: dict
    well_formed: bool  # False when the arguments were not a JSON object
    ok: bool | None


UNPARSEABLE = Call("", {}, False, None)  # a name that matches no tool and no ground truth
CallFields = tuple[str, dict, bool, bool | None]  # a Call's fields, in order, as a plain tuple


class GroundTruth(NamedTuple):
    """One turn's ground truth, normalised: ``need[j]`` is the bitmask of j's predecessors."""

    names: tuple[str, ...]
    arguments: tuple[dict, ...]
    keys: tuple[frozenset, ...]
    need: tuple[int, ...]
    by_name: dict[str, tuple[int, ...]]  # name → the steps with that name, in order


EMPTY_GROUND_TRUTH = GroundTruth((), (), (), (), {})


def as_list(value: Any) -> list | None:
    """A list for lists, tuples and array-likes (numpy arrays from parquet); None otherwise."""
    if isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, (str, bytes, dict)):
        out = tolist()
        return out if isinstance(out, list) else None
    return None


def loads(text: str, default: Any = _MISSING) -> Any:
    """``json.loads`` that maps malformed or pathologically nested text to ``default``."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return default


_JSON_SPACE = " \t\n\r"  # the whitespace json.loads skips before a value


def _arguments(raw: Any) -> tuple[dict, bool]:
    """(arguments, well_formed): absent/null → ({}, True); a JSON-object string is decoded (text
    that does not open with ``{`` cannot be one, and is not decoded)."""
    if isinstance(raw, dict):
        return raw, True
    if raw is None:
        return {}, True
    if isinstance(raw, str) and raw.lstrip(_JSON_SPACE).startswith("{"):
        decoded = loads(raw)
        if isinstance(decoded, dict):
            return decoded, True
    return {}, False


_new = tuple.__new__  # builds a Call without NamedTuple's slower keyword-handling __new__


def call_fields(item: Any, outcome: bool = True) -> CallFields:
    """One call from our log format ``{"name", "arguments", "ok", ...}`` or OpenAI's
    ``{"function": {"name", "arguments": <json str>}}``, as the plain tuple of a ``Call``'s
    fields. Not a dict → ``UNPARSEABLE``; a non-string name → ``""`` (matches nothing). ``ok``
    is read only when ``outcome`` is True: ``ok: true/false``, else ``False`` if an ``error`` is
    logged, else unknown (None). A ``Call`` (already normalised, e.g. parsed from text) is
    returned as it is."""
    if not isinstance(item, dict):
        return item if type(item) is Call else UNPARSEABLE
    fn = item.get("function")
    src = fn if fn is not None and isinstance(fn, dict) else item
    name = src.get("name")
    if not isinstance(name, str):
        name = ""
    arguments = src.get("arguments")
    if type(arguments) is dict:
        well_formed = True
    else:
        arguments, well_formed = _arguments(arguments)
    ok = None
    if outcome:
        ok = item.get("ok")
        if ok is not True and ok is not False:
            ok = False if "ok" not in item and item.get("error") is not None else None
    return name, arguments, well_formed, ok


def normalise_call(item: Any, outcome: bool = True) -> Call:
    """``call_fields`` as a ``Call``."""
    fields = call_fields(item, outcome)
    return fields if type(fields) is Call else _new(Call, fields)


_OPEN, _CLOSE = "<tool_call>", "</tool_call>"


def parse_tool_calls(text: Any) -> list[Call]:
    """Hermes-style calls in model text, in order: what ``<tool_call>(.*?)</tool_call>`` finds
    (VERL's hermes parser), scanned in linear time. Their outcome is unknown (``ok=None``): text
    carries no live result, so they never earn validity's execution third. A block that is not a
    JSON object, and a trailing ``<tool_call>`` cut off before ``</tool_call>``, count as
    unparseable calls."""
    if not isinstance(text, str):
        return []
    calls = []
    start = text.find(_OPEN)
    while start >= 0:
        end = text.find(_CLOSE, start + len(_OPEN))
        if end < 0:
            calls.append(UNPARSEABLE)
            break
        calls.append(normalise_call(loads(text[start + len(_OPEN):end].strip()), outcome=False))
        start = text.find(_OPEN, end + len(_CLOSE))
    return calls


def normalise_calls(pred: Any) -> list[Call]:
    """Predicted calls from a log (list of dicts; a single dict is one call), a string of model
    text (parsed with ``parse_tool_calls``), or nothing (None or any other type → no calls)."""
    return _each_call(pred, normalise_call)


def calls_fields(pred: Any) -> list[CallFields]:
    """``normalise_calls`` with logged calls as plain tuples (what scoring reads)."""
    if type(pred) is list:  # the usual log, first
        return [call_fields(item) for item in pred]
    return _each_call(pred, call_fields)


def _each_call(pred: Any, make: Callable[[Any], Any]) -> list:
    """The calls in ``pred`` (text, one dict, or a list-like of items), ``make`` building each."""
    if isinstance(pred, str):
        return parse_tool_calls(pred)
    if isinstance(pred, dict):
        return [make(pred)]
    items = as_list(pred)
    if items is None:
        return []
    return [make(item) for item in items]


def _edge(raw: Any) -> tuple[Any, Any]:
    pair = raw if type(raw) is list else as_list(raw)
    if pair is None or len(pair) != 2:
        return None, None
    return pair[0], pair[1]


_gt_cache: OrderedDict[Any, tuple[Any, GroundTruth]] = OrderedDict()
_GT_CACHE_SIZE = 1024


def normalise_ground_truth(gt: Any) -> GroundTruth:
    """``{"calls": [...], "depends_on": [[i, j], ...]}`` (or its JSON string, or a bare list of
    calls). Calls without a non-empty string name or with non-object arguments are dropped and
    edges renumbered; edges naming dropped or out-of-range calls are dropped, and so are edges
    with i >= j: the ground-truth sequence was executed in order, so every real edge points
    forward (this also makes the dependency graph acyclic). A ``GroundTruth`` is returned as it
    is. Cached like ``schema.tool_table``: JSON strings by value, anything else by identity with
    a strong reference held (so an id cannot be reused; the rollouts of one prompt share one
    object). A ground truth is treated as immutable: edit one in place after scoring and the
    cache is stale."""
    if type(gt) is GroundTruth:
        return gt
    key = gt if isinstance(gt, str) else id(gt)
    hit = _gt_cache.get(key)
    if hit is not None and (hit[0] is gt or isinstance(gt, str)):
        return hit[1]
    normalised = _normalise_ground_truth(loads(gt) if isinstance(gt, str) else gt)
    _gt_cache[key] = (gt, normalised)
    if len(_gt_cache) > _GT_CACHE_SIZE:
        _gt_cache.popitem(last=False)
    return normalised


def _normalise_ground_truth(gt: Any) -> GroundTruth:
    if isinstance(gt, dict):
        raw_calls = gt.get("calls")
        if type(raw_calls) is not list:
            raw_calls = as_list(raw_calls) or []
        raw_edges = gt.get("depends_on")
        if type(raw_edges) is not list:
            raw_edges = as_list(raw_edges) or []
    else:
        raw_calls = as_list(gt) or []
        raw_edges = []
    names: list[str] = []
    arguments: list[dict] = []
    keys: list[frozenset] = []
    by_name: dict[str, tuple[int, ...]] = {}
    index: list[int] = []  # old position → new position, -1 when dropped
    for call in raw_calls:
        if isinstance(call, dict):
            name = call.get("name")
            args = call.get("arguments")
            if args is None:
                args = {}
            if type(name) is str and name and isinstance(args, dict):
                g = len(names)
                index.append(g)
                names.append(name)
                arguments.append(args)
                keys.append(frozenset(args))
                by_name[name] = by_name[name] + (g,) if name in by_name else (g,)
                continue
        index.append(-1)
    if not names:
        return EMPTY_GROUND_TRUTH
    need = [0] * len(names)
    n_raw = len(raw_calls)
    for raw in raw_edges:
        i, j = raw if type(raw) is list and len(raw) == 2 else _edge(raw)
        if type(i) is not int or type(j) is not int or not 0 <= i < j < n_raw:
            continue
        a, b = index[i], index[j]
        if a >= 0 and b >= 0:
            need[b] |= 1 << a
    return _new(GroundTruth, (tuple(names), tuple(arguments), tuple(keys), tuple(need), by_name))
