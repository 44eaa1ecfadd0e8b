"""Tool calls as models write them and logs record them, parsed into one ``Call`` shape; the reward
scores predictions with it and synthesis reads a teacher's text with it.

Use: ``parse_tool_calls(text)`` → ``list[Call]`` (hermes ``<tool_call>`` blocks);
``normalise_calls(log_or_text)`` → ``list[Call]``; ``calls_fields`` the same as plain tuples (what
scoring reads: cheaper to build and unpack than a NamedTuple per call). Nothing here raises on
JSON-like input: every shape is mapped explicitly to a sensible value, as documented per function.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = [
    "Call", "CallFields", "UNPARSEABLE", "as_list", "loads", "call_fields", "normalise_call",
    "parse_tool_calls", "normalise_calls", "calls_fields",
]

_MISSING = object()  # what ``loads`` returns for text that is not JSON


class Call(NamedTuple):
    """A predicted call: ``ok`` is True/False for a logged outcome, None when unknown."""

    name: str
    arguments: dict
    well_formed: bool  # False when the arguments were not a JSON object
    ok: bool | None


UNPARSEABLE = Call("", {}, False, None)  # a name that matches no tool and no ground truth
CallFields = tuple[str, dict, bool, bool | None]  # a Call's fields, in order, as a plain tuple


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
