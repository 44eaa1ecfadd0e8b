"""Offered tool schemas compiled once into fast argument checkers (no jsonschema in the hot path).

Use: ``table = tool_table(tools)``; ``table.get(name)`` → ``ToolSpec`` or None;
``spec.accepts(arguments)`` → bool. Accepts OpenAI ``{"type": "function", "function": {...}}``
and bare ``{"name", "description", "parameters"}`` schemas; anything else is skipped.

What is checked (the "arguments compatible with its schema" third of validity): required keys
present; no keys outside ``properties`` (unless ``additionalProperties`` is true or a schema);
``type`` (string or list of types, JSON semantics: bool is not a number, 3.0 is an integer,
non-finite floats are not numbers), ``enum``/``const``, ``anyOf``/``oneOf`` (any branch), and
recursively ``items`` and nested ``properties``/``required``. Unknown type names and keywords
are unconstrained. Schemas nested deeper than ``MAX_SCHEMA_DEPTH`` are unconstrained below it.

Caching: a tools list is compiled lazily (only the names actually called) and cached by object
identity while a strong reference is held (so an id cannot be reused); single schemas are
cached by their canonical JSON. Tool schemas are treated as immutable.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

MAX_SCHEMA_DEPTH = 16
_TABLE_CACHE_SIZE = 1024
_SPEC_CACHE_SIZE = 4096


def _any(_: Any) -> bool:
    return True


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_int(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, float) and math.isfinite(v) and v.is_integer()


def _is_number(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, float) and math.isfinite(v)


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_null(v: Any) -> bool:
    return v is None


def _is_array(v: Any) -> bool:
    return isinstance(v, (list, tuple))


def _is_object(v: Any) -> bool:
    return isinstance(v, dict)


_TYPE_CHECKS: dict[str, Check] = {
    "string": _is_str,
    "integer": _is_int,
    "number": _is_number,
    "boolean": _is_bool,
    "null": _is_null,
    "array": _is_array,
    "object": _is_object,
}


def json_equal(a: Any, b: Any) -> bool:
    """Equality with JSON typing (True is not 1); used for enum/const membership."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, str) or a is None:
        return a == b
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def _all_of(checks: list[Check]) -> Check:
    if not checks:
        return _any
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(c(v) for c in checks)


def compile_value(schema: Any, depth: int = 0) -> Check:
    """A predicate for one JSON schema (a property, an array's items, a nested object)."""
    if not isinstance(schema, dict) or depth >= MAX_SCHEMA_DEPTH:
        return _any
    checks: list[Check] = []
    typ = schema.get("type")
    if isinstance(typ, str) and typ in _TYPE_CHECKS:
        checks.append(_TYPE_CHECKS[typ])
    elif isinstance(typ, list):
        known = [_TYPE_CHECKS[t] for t in typ if isinstance(t, str) and t in _TYPE_CHECKS]
        if known and len(known) == len(typ):
            checks.append(lambda v, ks=tuple(known): any(k(v) for k in ks))
    enum = schema.get("enum")
    if "const" in schema:
        enum = [schema["const"]]
    if isinstance(enum, list):
        if enum and all(isinstance(e, str) for e in enum):
            allowed = frozenset(enum)
            checks.append(lambda v, s=allowed: isinstance(v, str) and v in s)
        else:
            checks.append(lambda v, es=tuple(enum): any(json_equal(v, e) for e in es))
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            compiled = tuple(compile_value(b, depth + 1) for b in branches)
            checks.append(lambda v, bs=compiled: any(b(v) for b in bs))
    items = schema.get("items")
    if isinstance(items, dict):
        item_check = compile_value(items, depth + 1)
        if item_check is not _any:
            checks.append(
                lambda v, c=item_check: not isinstance(v, (list, tuple)) or all(c(x) for x in v)
            )
    if isinstance(schema.get("properties"), dict) or isinstance(schema.get("required"), list):
        obj = ObjectCheck(schema, depth + 1)
        checks.append(lambda v, o=obj: not isinstance(v, dict) or o(v))
    return _all_of(checks)


class ObjectCheck:
    """Required keys, allowed keys and per-property predicates of one object schema."""

    __slots__ = ("required", "props", "schemas", "allow_extra")

    def __init__(self, schema: Mapping[str, Any], depth: int = 0) -> None:
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = schema.get("required")
        required = required if isinstance(required, list) else []
        extra = schema.get("additionalProperties", False)
        self.required = frozenset(k for k in required if isinstance(k, str))
        self.schemas: dict[str, Any] = {k: v for k, v in props.items() if isinstance(k, str)}
        self.props: dict[str, Check] = {
            k: compile_value(v, depth) for k, v in self.schemas.items()
        }
        self.allow_extra = extra is True or isinstance(extra, dict)

    def __call__(self, args: dict) -> bool:
        if not args.keys() >= self.required:
            return False
        props = self.props
        for key, value in args.items():
            check = props.get(key) if isinstance(key, str) else None
            if check is None:
                if not self.allow_extra:
                    return False
            elif not check(value):
                return False
        return True


class ToolSpec:
    """One offered tool: its name, its argument check and its parameter schemas."""

    __slots__ = ("name", "check", "set_params")

    def __init__(self, name: str, parameters: Any) -> None:
        self.name = name
        self.check = ObjectCheck(parameters if isinstance(parameters, dict) else {})
        # Parameters whose value is a list used as a set (JSON schema ``uniqueItems: true``).
        self.set_params = frozenset(
            k for k, s in self.check.schemas.items() if isinstance(s, dict) and s.get("uniqueItems") is True
        )

    def accepts(self, arguments: Any) -> bool:
        return isinstance(arguments, dict) and self.check(arguments)

    def param_schema(self, key: str) -> Any:
        return self.check.schemas.get(key)


def _unwrap(schema: Any) -> tuple[str, Any] | None:
    """(name, parameters) from an OpenAI or bare function schema; None if it is neither."""
    if not isinstance(schema, dict):
        return None
    fn = schema.get("function")
    if isinstance(fn, dict):
        schema = fn
    name = schema.get("name")
    if not isinstance(name, str) or not name:
        return None
    return name, schema.get("parameters")


_spec_cache: OrderedDict[str, ToolSpec] = OrderedDict()


def compile_tool(name: str, parameters: Any) -> ToolSpec:
    """A ``ToolSpec``, cached by the canonical JSON of (name, parameters)."""
    try:
        key = json.dumps([name, parameters], sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):  # non-string keys mixed, cycles, depth
        return ToolSpec(name, parameters)
    spec = _spec_cache.get(key)
    if spec is None:
        spec = ToolSpec(name, parameters)
        _spec_cache[key] = spec
        if len(_spec_cache) > _SPEC_CACHE_SIZE:
            _spec_cache.popitem(last=False)
    return spec


class ToolTable:
    """Name → offered schema, compiled on first use of a name."""

    __slots__ = ("_raw", "_specs")

    def __init__(self, tools: Any) -> None:
        self._raw: dict[str, Any] = {}
        self._specs: dict[str, ToolSpec | None] = {}
        for schema in tools if isinstance(tools, (list, tuple)) else ():
            unwrapped = _unwrap(schema)
            if unwrapped is not None and unwrapped[0] not in self._raw:
                self._raw[unwrapped[0]] = unwrapped[1]

    def get(self, name: str) -> ToolSpec | None:
        try:
            return self._specs[name]
        except KeyError:
            pass
        spec = compile_tool(name, self._raw[name]) if name in self._raw else None
        self._specs[name] = spec
        return spec

    def __contains__(self, name: object) -> bool:
        return name in self._raw

    def __len__(self) -> int:
        return len(self._raw)


_table_cache: OrderedDict[int, tuple[Any, ToolTable]] = OrderedDict()
_EMPTY = ToolTable(())


def tool_table(tools: Any) -> ToolTable:
    """The compiled table for an offered-tools list (cached by identity, strong ref held)."""
    if not isinstance(tools, (list, tuple)) or not tools:
        return _EMPTY
    hit = _table_cache.get(id(tools))
    if hit is not None and hit[0] is tools:
        return hit[1]
    table = ToolTable(tools)
    _table_cache[id(tools)] = (tools, table)
    if len(_table_cache) > _TABLE_CACHE_SIZE:
        _table_cache.popitem(last=False)
    return table
