"""Plausible random tool arguments drawn from a server's live state and a tool's JSON schema.

    pool = ValuePool.of(hub, episode_id, "banking"); calls = random_calls(tools, pool, rng, 50)

Used by the concurrency tests, the fuzzer and the benchmarks. What a value may be is read from
the parameter's declarations (prove.env.types), never its name: an id parameter is drawn from the
ids of its declared entity kind (`x-entity`) that exist in the state, found through the same
declarations on the state model's fields; a parameter declaring the listing field it takes
(`x-listed`) from the state's values under that field, or its declared example (`x-example`);
dates near the state's simulated now by their declared format; enums from the schema, numbers
within their bounds, other strings from a few stock words. Deterministic for a given
`random.Random`.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from prove.env.tool import ToolSpec
from prove.env.types import (
    ENTITY,
    declared_entity,
    declared_example,
    declared_format,
    declared_listed,
    entity_values,
    state_schema,
)

__all__ = ["ValuePool", "random_arguments", "random_calls"]

_WORDS = ("alpha", "weekly sync", "urgent", "Berlin", "groceries", "hello there", "Q3 plan", "x")


class ValuePool:
    """Every scalar value in a state: ids by their declared entity kind, other values by the field
    holding them (ids are only found by kind), for the parameters that declare that field.

    `state_schema` is the state model's JSON schema (``type(state).model_json_schema()``); its
    ``x-entity`` declarations say which fields hold ids of which kind.
    """

    def __init__(self, state_json: Any, state_schema: Mapping[str, Any]) -> None:
        self.now = str(state_json.get("now", "")) if isinstance(state_json, dict) else ""
        self.by_kind: dict[str, list[Any]] = defaultdict(list)
        self.by_field: dict[str, list[Any]] = defaultdict(list)
        for kind, value in entity_values(state_json, state_schema):
            self.by_kind[kind].append(value)
        self._walk(state_json, None)
        self.by_kind = {k: sorted(set(v), key=repr) for k, v in self.by_kind.items()}
        ids = {v for values in self.by_kind.values() for v in values}
        self.by_field = {k: sorted(set(v) - ids, key=repr) for k, v in self.by_field.items()}

    @classmethod
    def of(cls, hub: Any, episode_id: str, server: str) -> ValuePool:
        """The pool of one server's state in an open episode of `hub`."""
        model = hub.registry.server(server).state_model
        return cls(hub.state(episode_id, server), state_schema(model))

    def _walk(self, node: Any, key: str | None) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                self._walk(v, k)
        elif isinstance(node, list):
            for item in node:
                self._walk(item, key)
        elif key is not None and isinstance(node, (str, int, float)) and not isinstance(node, bool):
            self.by_field[key].append(node)

    def ids(self, kind: str) -> list[Any]:
        """The ids of entity `kind` the state holds (where its fields declare them)."""
        return self.by_kind.get(kind, [])

    def candidates(self, schema: Mapping[str, Any]) -> list[Any]:
        """Values for a parameter by what its schema declares: existing ids of its entity kind,
        else the state's values under the listing field it takes and its example (none when it
        declares neither: a name says nothing)."""
        kind = declared_entity(schema)
        if kind is not None:
            return self.ids(kind)
        listed, example = declared_listed(schema), declared_example(schema)
        found = list(self.by_field.get(listed, [])) if listed else []
        return found + [example] if example is not None and example not in found else found

    def date(self, fmt: str, rng: random.Random) -> str:
        """A date ('date') or date-time ('date-time') a few days around the state's now."""
        try:
            base = datetime.fromisoformat(self.now)
        except ValueError:
            base = datetime(2026, 3, 16, 9, 0)
        when = base + timedelta(days=rng.randrange(-10, 11), hours=rng.randrange(0, 9))
        return when.strftime("%Y-%m-%d" if fmt == "date" else "%Y-%m-%dT%H:%M")


def _unwrap(schema: dict[str, Any]) -> dict[str, Any]:
    options = [s for s in schema.get("anyOf", []) if s.get("type") != "null"]
    return {**schema, **options[0]} if options else schema


def _value(schema: dict[str, Any], param: str, pool: ValuePool, rng: random.Random) -> Any:
    s = _unwrap(schema)
    if "enum" in s:
        return rng.choice(s["enum"])
    kind = s.get("type")
    found = [v for v in pool.candidates(schema) if kind != "string" or isinstance(v, str)]
    if kind == "string":
        if found and rng.random() < 0.9:
            return rng.choice(found)
        fmt = declared_format(schema)
        if fmt in ("date", "date-time") and rng.random() < 0.9:
            return pool.date(fmt, rng)
        if fmt == "time" and rng.random() < 0.9:
            return f"{rng.randrange(7, 22):02d}:{rng.choice((0, 15, 30, 45)):02d}"
        return rng.choice(_WORDS)
    if kind in ("integer", "number"):
        lo = s.get("minimum", s.get("exclusiveMinimum", 0))
        hi = s.get("maximum", s.get("exclusiveMaximum", max(lo, 0) + 500))
        nums = [v for v in found if isinstance(v, (int, float)) and lo <= v <= hi]
        if nums and rng.random() < 0.5:
            v = rng.choice(nums)
        else:
            v = rng.uniform(lo, min(hi, lo + 500))
        if kind == "integer":
            v = int(v)
            v = min(max(v, int(lo) + (1 if "exclusiveMinimum" in s else 0)), int(hi))
        else:
            v = round(max(v, lo + 0.01) if "exclusiveMinimum" in s else v, 2)
        return v
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        item = s.get("items", {"type": "string"})
        if declared_entity(s) and ENTITY not in item:
            item = {**item, ENTITY: declared_entity(s)}
        return [_value(item, param, pool, rng) for _ in range(rng.randrange(1, 3))]
    return rng.choice(_WORDS)


def random_arguments(spec: ToolSpec, pool: ValuePool, rng: random.Random) -> dict[str, Any]:
    """Schema-valid-looking arguments for `spec`: all required ones, some optional ones."""
    props = spec.input_schema.get("properties", {})
    args = {}
    for name, schema in props.items():
        if name in spec.required or rng.random() < 0.3:
            args[name] = _value(schema, name, pool, rng)
    return args


def random_calls(
    tools: list[ToolSpec], pool: ValuePool, rng: random.Random, n: int, write_share: float = 0.5
) -> list[dict[str, Any]]:
    """`n` calls mixing reads and writes (about `write_share` writes)."""
    reads = [t for t in tools if not t.write] or tools
    writes = [t for t in tools if t.write] or tools
    calls = []
    for _ in range(n):
        spec = rng.choice(writes if rng.random() < write_share else reads)
        calls.append({"name": spec.name, "arguments": random_arguments(spec, pool, rng)})
    return calls
