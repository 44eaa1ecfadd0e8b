"""Hypothesis strategies and fixtures shared by the reward tests: offered tools, valid calls,
ground truths with dependency edges, and arbitrary JSON-like garbage."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st


def fn(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An OpenAI function schema as PROVE's servers emit it (additionalProperties false)."""
    parameters = {"type": "object", "properties": properties, "required": required,
                  "additionalProperties": False}
    return {"type": "function", "function": {"name": name, "description": name,
                                             "parameters": parameters}}


STR = {"type": "string"}
AMOUNT = {"type": "number", "exclusiveMinimum": 0, "maximum": 1_000_000}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 50}
STATUS = {"type": "string", "enum": ["active", "locked", "cancelled"]}
OPT_STR = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
TAGS = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
STOPS = {"type": "array", "items": {"type": "string"}}
FLAG = {"type": "boolean"}

TOOLS: list[dict[str, Any]] = [
    fn("get_balance", {"account_id": STR}, ["account_id"]),
    fn("transfer_funds", {"from_account_id": STR, "to_account_id": STR, "amount": AMOUNT,
                          "memo": STR}, ["from_account_id", "to_account_id", "amount"]),
    fn("list_bank_transactions", {"account_id": STR, "limit": LIMIT, "since": OPT_STR}, ["account_id"]),
    fn("set_card_status", {"card_id": STR, "status": STATUS}, ["card_id", "status"]),
    fn("tag_note", {"note_id": STR, "tags": TAGS}, ["note_id", "tags"]),
    fn("plan_route", {"stops": STOPS, "avoid_tolls": FLAG}, ["stops"]),
    fn("get_time", {}, []),
    fn("search_flights", {"origin": STR, "destination": STR, "date": OPT_STR},
       ["origin", "destination"]),
]
TOOL_NAMES = [t["function"]["name"] for t in TOOLS]
PROPS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}

_ids = st.text("ABCDEFXYZ0123456789-", min_size=1, max_size=8)


def value_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values the schema accepts."""
    if "anyOf" in schema:
        return st.one_of(st.none(), _ids)
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema["type"]
    if kind == "number":
        return st.floats(0.01, 1_000_000, allow_nan=False).map(lambda x: round(x, 2))
    if kind == "integer":
        return st.integers(1, 50)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        unique = schema.get("uniqueItems", False)
        return st.lists(_ids, min_size=1, max_size=4, unique=unique)
    return _ids


@st.composite
def valid_call(draw: st.DrawFn, names: list[str] | None = None) -> dict[str, Any]:
    """A call to an offered tool with schema-valid arguments (required + some optional)."""
    name = draw(st.sampled_from(names or TOOL_NAMES))
    params = PROPS[name]
    keys = list(params["required"]) + [
        k for k in params["properties"] if k not in params["required"] and draw(st.booleans())
    ]
    return {"name": name, "arguments": {k: draw(value_for(params["properties"][k])) for k in keys}}


@st.composite
def ground_truths(
    draw: st.DrawFn, min_size: int = 1, max_size: int = 5, distinct_names: bool = False,
    min_edges: int = 0,
) -> dict[str, Any]:
    """``{"calls", "depends_on"}`` with forward edges (i < j); names distinct on request."""
    if distinct_names:
        names = draw(st.lists(st.sampled_from(TOOL_NAMES), min_size=min_size, max_size=max_size,
                              unique=True))
        calls = [draw(valid_call([n])) for n in names]
    else:
        calls = draw(st.lists(valid_call(), min_size=min_size, max_size=max_size))
    pairs = [[i, j] for j in range(len(calls)) for i in range(j)]
    edges = draw(st.lists(st.sampled_from(pairs), unique_by=tuple, min_size=min(min_edges,
                          len(pairs)), max_size=len(pairs))) if pairs else []
    return {"calls": calls, "depends_on": edges}


def executed(calls: list[dict[str, Any]], ok: bool = True) -> list[dict[str, Any]]:
    """The calls as the live log records them."""
    return [dict(c, ok=ok, **({"result": {}} if ok else {"error": "failed"})) for c in calls]


def linear_extension(n: int, edges: list[list[int]], order: list[int]) -> list[int]:
    """A topological order of range(n) under ``edges``, breaking ties by position in ``order``."""
    rank = {v: r for r, v in enumerate(order)}
    preds = {j: {i for i, jj in edges if jj == j} for j in range(n)}
    done: list[int] = []
    while len(done) < n:
        ready = [v for v in range(n) if v not in done and preds[v] <= set(done)]
        done.append(min(ready, key=rank.__getitem__))
    return done


json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
    | st.sampled_from(TOOL_NAMES + ["", "<tool_call>", "name", "arguments", "ok"])
)
json_like = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(
        st.sampled_from(["name", "arguments", "ok", "error", "calls", "depends_on", "function",
                         "account_id", "amount", "tags", "type", "parameters", "properties"])
        | st.text(max_size=6), inner, max_size=5),
    max_leaves=30,
)


def deep(depth: int, leaf: Any = 1) -> Any:
    """A value nested ``depth`` levels deep (lists and dicts alternating)."""
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"a": value}
    return value


def is_bounded_result(result: dict[str, Any], keys: tuple[str, ...]) -> bool:
    return tuple(result) == keys and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        for v in result.values()
    )
