"""Offered tool schemas compiled once into fast argument checkers (no jsonschema in the hot path).

Use: ``table = tool_table(tools)``; ``table.get(name)`` → ``ToolSpec`` or None;
``spec.accepts(arguments)`` → bool. Accepts OpenAI ``{"type": "function", "function": {...}}``
and bare ``{"name", "description", "parameters"}`` schemas; anything else is skipped.

What is checked (the "arguments compatible with its schema" third of validity): required keys
present; no keys outside ``properties`` (unless ``additionalProperties`` is true or a schema);
``type`` (string or list of types, JSON semantics: bool is not a number, 3.0 is an integer,
non-finite floats are not numbers), ``enum``/``const``, numeric bounds (``minimum``,
``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``), ``minLength``/``maxLength``,
``anyOf``/``oneOf`` (any branch), local ``$ref`` into ``$defs``/``definitions`` (pydantic emits
them), and recursively ``items`` and nested ``properties``/``required``. Unknown type names and
keywords are unconstrained. Schemas nested deeper than ``MAX_SCHEMA_DEPTH`` are unconstrained
below it, and each ``$ref`` hop counts as 4 levels, so a recursive schema (a tree) is unrolled a
few times, not exponentially often.

Caching: a tools list gets a new ``ToolTable`` on every call, compiled lazily (only the names
actually called), so editing the list between two calls is seen by the second; to score many
rollouts of one row, build its table once (``prove.reward.prepare_turn`` compiles every offered
tool into a frozen table) and pass the ``ToolTable``. A JSON string's table is cached by its
value, and single schemas by their value (``compile_tool``): both keys are values that cannot
change, so neither cache can go stale.
"""

from __future__ import annotations

import marshal
import math
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from prove.calls import as_list, loads

Check = Callable[[Any], bool]

MAX_SCHEMA_DEPTH = 16
_REF_COST = 4  # a $ref hop counts as 4 levels: a recursive schema unrolls at most 4 times
_TABLE_CACHE_SIZE = 1024
_SPEC_CACHE_SIZE = 4096


def _any(_: Any) -> bool:
    return True


def _is_str(v: Any) -> bool:
    return type(v) is str or isinstance(v, str)


def _is_int(v: Any) -> bool:
    t = type(v)
    if t is int:
        return True
    if t is float:
        return math.isfinite(v) and v.is_integer()
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    t = type(v)
    if t is float:
        return math.isfinite(v)
    if t is int:
        return True
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and math.isfinite(v))


def _is_bool(v: Any) -> bool:
    return v is True or v is False


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
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def _all_of(checks: list[Check]) -> Check:
    """Conjunction, unrolled for the short lists real schemas give."""
    if not checks:
        return _any
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        c0, c1 = checks
        return lambda v: c0(v) and c1(v)
    if len(checks) == 3:
        c0, c1, c2 = checks
        return lambda v: c0(v) and c1(v) and c2(v)
    every = tuple(checks)
    return lambda v: all(c(v) for c in every)


def _any_of(checks: tuple[Check, ...]) -> Check:
    """Disjunction; ``Optional[X]`` (X or null) gets its own fast form."""
    if _any in checks:
        return _any
    rest = tuple(c for c in checks if c is not _is_null)
    if len(rest) == len(checks) - 1 and len(rest) == 1:
        only = rest[0]
        return lambda v: v is None or only(v)
    if len(checks) == 1:
        return checks[0]
    return lambda v: any(c(v) for c in checks)


def _bound(key: str, limit: Any, typed: bool) -> Check | None:
    """A numeric or string-length bound; ``typed`` when a type check already ran before it."""
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or math.isnan(limit):
        return None
    if key in ("minLength", "maxLength"):
        if key == "minLength":
            return lambda v: not isinstance(v, str) or len(v) >= limit
        return lambda v: not isinstance(v, str) or len(v) <= limit
    compare = {
        "minimum": lambda v: v >= limit,
        "maximum": lambda v: v <= limit,
        "exclusiveMinimum": lambda v: v > limit,
        "exclusiveMaximum": lambda v: v < limit,
    }[key]
    if typed:
        return compare
    return lambda v: not _is_number(v) or compare(v)


_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength")
_ANNOTATIONS = frozenset(("description", "title", "default", "examples"))  # never constrain
_NUMBER_KEYS = frozenset(("type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"))


NumberLimits = tuple[bool, float, float, float, float]  # (integer?, min, max, xmin, xmax)


def _number_limits(integer: bool, schema: Mapping[str, Any]) -> NumberLimits:
    """The bounds of a number or integer schema, absent ones as infinities."""
    limits = {k: schema[k] for k in _BOUNDS[:4] if k in schema
              and type(schema[k]) in (int, float) and not math.isnan(schema[k])}
    return (integer, limits.get("minimum", -math.inf), limits.get("maximum", math.inf),
            limits.get("exclusiveMinimum", -math.inf), limits.get("exclusiveMaximum", math.inf))


def _number_ok(v: Any, limits: NumberLimits) -> bool:
    """A number (an integer if asked; bool and non-finite floats are neither) within bounds."""
    integer, lo, hi, lo_x, hi_x = limits
    t = type(v)
    if t is float:
        if v - v != 0 or (integer and not v.is_integer()):  # inf and nan fail v - v == 0
            return False
    elif t is not int:  # bool has its own type
        return False
    return lo <= v <= hi and lo_x < v < hi_x


def _number_check(integer: bool, schema: Mapping[str, Any]) -> Check:
    """One predicate for a number or integer with optional bounds (the common case, fused)."""
    limits = _number_limits(integer, schema)
    return lambda v: _number_ok(v, limits)


def _resolve(schema: dict, defs: Mapping[str, Any]) -> Any:
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            return defs.get(ref[len(prefix):])
    return None  # a remote or malformed reference: unconstrained


def _frozen(value: Any, depth: int = 0) -> Any:
    """An enum member with its dicts and lists copied, so a cached spec does not change with the
    schema it was built from (below ``MAX_SCHEMA_DEPTH``: enough for any real schema, bounded on
    adversarial ones; other types, which ``compile_tool`` never caches, are kept)."""
    if depth < MAX_SCHEMA_DEPTH:
        if type(value) is dict:
            return {k: _frozen(v, depth + 1) for k, v in value.items()}
        if type(value) is list:
            return [_frozen(v, depth + 1) for v in value]
    return value


def compile_value(schema: Any, depth: int = 0, defs: Mapping[str, Any] | None = None) -> Check:
    """A predicate for one JSON schema (a property, an array's items, a nested object)."""
    defs = defs if defs is not None else {}
    while isinstance(schema, dict) and "$ref" in schema and depth < MAX_SCHEMA_DEPTH:
        schema = _resolve(schema, defs)
        depth += _REF_COST
    if not isinstance(schema, dict) or depth >= MAX_SCHEMA_DEPTH:
        return _any
    checks: list[Check] = []
    enum = [schema["const"]] if "const" in schema else schema.get("enum")
    str_enum = isinstance(enum, list) and bool(enum) and all(isinstance(e, str) for e in enum)
    typ = schema.get("type")
    numeric = typ in ("number", "integer")
    if numeric and schema.keys() - _ANNOTATIONS <= _NUMBER_KEYS:
        return _number_check(typ == "integer", schema)
    if isinstance(typ, str) and typ in _TYPE_CHECKS and not (str_enum and typ == "string"):
        checks.append(_TYPE_CHECKS[typ])
    elif isinstance(typ, list):
        known = tuple(_TYPE_CHECKS[t] for t in typ if isinstance(t, str) and t in _TYPE_CHECKS)
        if known and len(known) == len(typ):
            checks.append(_any_of(known))
    if str_enum:
        allowed = frozenset(enum)
        checks.append(lambda v: isinstance(v, str) and v in allowed)
    elif isinstance(enum, list):
        options = tuple(_frozen(e) for e in enum)
        checks.append(lambda v: any(json_equal(v, e) for e in options))
    for key in _BOUNDS:
        if key in schema:
            bound = _bound(key, schema[key], typed=numeric)
            if bound is not None:
                checks.append(bound)
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            checks.append(_any_of(tuple(compile_value(b, depth + 1, defs) for b in branches)))
    items = schema.get("items")
    if isinstance(items, dict):
        item_check = compile_value(items, depth + 1, defs)
        if item_check is not _any:
            checks.append(
                lambda v: not isinstance(v, (list, tuple)) or all(item_check(x) for x in v)
            )
    if isinstance(schema.get("properties"), dict) or isinstance(schema.get("required"), list):
        obj = object_check(schema, depth + 1, defs)[0]
        checks.append(lambda v: not isinstance(v, dict) or obj(v))
    return _all_of(checks)


_SIMPLE_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "boolean": bool, "object": dict, "array": (list, tuple),
}
_ANY, _ISINSTANCE, _STR_ENUM, _NUMBER, _ARRAY_OF, _PREDICATE, _NOTHING = range(7)
_ARRAY_KEYS = frozenset(("type", "items", "uniqueItems"))  # uniqueItems is for value matching
Plan = tuple[bool, int, Any]  # (null allowed, kind, data) for one property


def _plan(schema: Any, depth: int, defs: Mapping[str, Any]) -> Plan:
    """How to check one property: the shapes real tool schemas use most (a plain type, a string
    enum, a bounded number, an array of a plain type, each possibly ``Optional``) are checked
    inline by ``object_check``; the rest through the general predicate of ``compile_value``,
    which accepts exactly the same values for these shapes."""
    nullable = False
    while isinstance(schema, dict) and "$ref" in schema and depth < MAX_SCHEMA_DEPTH:
        schema = _resolve(schema, defs)
        depth += _REF_COST
    if isinstance(schema, dict) and schema.keys() - _ANNOTATIONS == {"anyOf"}:
        branches = schema["anyOf"]
        if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
            nullable = True
            schema = branches[1 - branches.index({"type": "null"})]
            while isinstance(schema, dict) and "$ref" in schema and depth < MAX_SCHEMA_DEPTH:
                schema = _resolve(schema, defs)
                depth += _REF_COST
    if not isinstance(schema, dict) or depth >= MAX_SCHEMA_DEPTH:
        return nullable, _ANY, None
    keys = schema.keys() - _ANNOTATIONS
    typ = schema.get("type")
    enum = schema.get("enum")
    if keys == {"type"} and isinstance(typ, str) and typ in _SIMPLE_TYPES:
        return nullable, _ISINSTANCE, _SIMPLE_TYPES[typ]
    if (keys in ({"enum"}, {"enum", "type"}) and typ in (None, "string") and isinstance(enum, list)
            and enum and all(isinstance(e, str) for e in enum)):
        return nullable, _STR_ENUM, frozenset(enum)
    if typ in ("number", "integer") and keys <= _NUMBER_KEYS:
        return nullable, _NUMBER, _number_limits(typ == "integer", schema)
    items = schema.get("items")
    if (typ == "array" and "items" in keys and keys <= _ARRAY_KEYS and isinstance(items, dict)
            and items.keys() - _ANNOTATIONS == {"type"} and isinstance(items["type"], str)
            and items["type"] in _SIMPLE_TYPES and depth + 1 < MAX_SCHEMA_DEPTH):
        return nullable, _ARRAY_OF, _SIMPLE_TYPES[items["type"]]
    predicate = compile_value(schema, depth, defs)
    return nullable, (_ANY if predicate is _any else _PREDICATE), predicate


def object_check(
    schema: Mapping[str, Any], depth: int = 0, defs: Mapping[str, Any] | None = None
) -> tuple[Callable[[dict], bool], dict[str, Any]]:
    """(predicate over an arguments dict, its property schemas) for one object schema: required
    keys present, no key outside ``properties`` unless additional ones are allowed, each value
    accepted by its property's plan."""
    if defs is None:  # the top of a tool's parameters: where pydantic puts $defs
        found = schema.get("$defs", schema.get("definitions"))
        defs = found if isinstance(found, dict) else {}
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required_list = schema.get("required")
    required_list = required_list if isinstance(required_list, list) else []
    extra = schema.get("additionalProperties", False)
    required = tuple(dict.fromkeys(k for k in required_list if isinstance(k, str)))
    schemas: dict[str, Any] = {k: v for k, v in props.items() if isinstance(k, str)}
    plans: dict[str, Plan] = {k: _plan(v, depth, defs) for k, v in schemas.items()}
    allow_extra = extra is True or isinstance(extra, dict)
    unknown: Plan = (False, _ANY if allow_extra else _NOTHING, None)  # a key outside properties
    get = plans.get

    def check(args: dict) -> bool:
        for key in required:  # cheaper than a set comparison for the few keys tools require
            if key not in args:
                return False
        for key, value in args.items():
            nullable, kind, data = get(key, unknown)
            if kind == _ISINSTANCE:
                if isinstance(value, data):
                    continue
            elif kind == _STR_ENUM:
                if type(value) is str and value in data:
                    continue
            elif kind == _NUMBER:
                if _number_ok(value, data):
                    continue
            elif kind == _ARRAY_OF:
                if isinstance(value, (list, tuple)):
                    for item in value:
                        if not isinstance(item, data):
                            break
                    else:
                        continue
            elif kind == _PREDICATE:
                if data(value):
                    continue
            elif kind == _ANY:
                continue
            if value is None and nullable:  # rejected by the plan, but null is allowed
                continue
            return False
        return True

    return check, schemas


def value_view(schema: Any, defs: Mapping[str, Any], depth: int = 0) -> dict | None:
    """What value matching needs of a parameter schema (``uniqueItems``, ``items``,
    ``properties``), with ``$ref`` inlined and ``Optional`` (anyOf with null) unwrapped."""
    while isinstance(schema, dict) and "$ref" in schema and depth < MAX_SCHEMA_DEPTH:
        schema = _resolve(schema, defs)
        depth += _REF_COST
    if not isinstance(schema, dict) or depth >= MAX_SCHEMA_DEPTH:
        return None
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
            if len(real) == 1:
                return value_view(real[0], defs, depth + 1)
    view: dict[str, Any] = {}
    if schema.get("uniqueItems") is True:
        view["uniqueItems"] = True
    items = value_view(schema.get("items"), defs, depth + 1)
    if items:
        view["items"] = items
    props = schema.get("properties")
    if isinstance(props, dict):
        nested = {k: value_view(v, defs, depth + 1) for k, v in props.items()}
        nested = {k: v for k, v in nested.items() if v}
        if nested:
            view["properties"] = nested
    return view or None


class ToolSpec:
    """One offered tool: its name, its argument predicate and what value matching needs, built
    from the schema's value (it keeps none of the schema's dicts or lists)."""

    __slots__ = ("name", "check", "values")

    def __init__(self, name: str, parameters: Any) -> None:
        parameters = parameters if isinstance(parameters, dict) else {}
        found = parameters.get("$defs", parameters.get("definitions"))
        defs = found if isinstance(found, dict) else {}
        self.name = name
        self.check, schemas = object_check(parameters, 0, defs)
        views = {k: value_view(v, defs) for k, v in schemas.items()}
        self.values: dict[str, dict] = {k: v for k, v in views.items() if v}

    def accepts(self, arguments: Any) -> bool:
        return isinstance(arguments, dict) and self.check(arguments)

    def param_schema(self, key: Any) -> dict | None:
        """The value view of one parameter (None when it has nothing special)."""
        return self.values.get(key) if isinstance(key, str) else None


_spec_cache: OrderedDict[bytes, ToolSpec] = OrderedDict()


def compile_tool(name: str, parameters: Any) -> ToolSpec:
    """A ``ToolSpec``, cached by the value of (name, parameters): its ``marshal`` bytes, which
    exist only for plain built-in values (dicts, lists, strings, numbers, bools, None) and decode
    back to an equal value of the same types (True is not 1, 1 is not 1.0), so two schemas share
    a spec only if they are the same value; however often a schema is copied or unpickled, its
    copies hit. A schema holding anything else, or nested too deeply to marshal, is compiled
    and not cached."""
    try:
        key = marshal.dumps((name, parameters), 2)  # version 2: no back-references to objects
    except (ValueError, RecursionError):
        return ToolSpec(name, parameters)
    spec = _spec_cache.get(key)
    if spec is None:
        spec = ToolSpec(name, parameters)
        _spec_cache[key] = spec
        if len(_spec_cache) > _SPEC_CACHE_SIZE:
            _spec_cache.popitem(last=False)
    return spec


class _Compiled(dict):
    """name → ``ToolSpec`` for the names looked up so far; a missing name is compiled on first
    lookup if it is offered, and gives None (stored nowhere) if it is not."""

    __slots__ = ("offered",)

    def __init__(self, offered: dict[str, Any]) -> None:
        super().__init__()
        self.offered = offered

    def __missing__(self, name: str) -> ToolSpec | None:
        if name not in self.offered:
            return None
        spec = self[name] = compile_tool(name, self.offered[name])
        return spec


class ToolTable:
    """The offered tools by name (``names``: name → raw parameters), compiled on first use.
    ``get(name)`` is the compiled tool, or None when no offered tool has this name (a plain dict
    lookup once the name has been seen: it runs for every scored call). ``compile_all`` compiles
    every offered tool now, after which the table no longer reads ``names``' schemas."""

    __slots__ = ("names", "get", "_complete")

    def __init__(self, tools: list) -> None:
        names: dict[str, Any] = {}
        for schema in tools:  # OpenAI {"function": {...}} or bare {"name", "parameters"}
            if isinstance(schema, dict):
                fn = schema.get("function")
                body = fn if isinstance(fn, dict) else schema
                name = body.get("name")
                if isinstance(name, str) and name and name not in names:
                    names[name] = body.get("parameters")
        self.names = names
        self._complete = False
        self.get: Callable[[str], ToolSpec | None] = _Compiled(names).__getitem__

    def compile_all(self) -> ToolTable:
        """Compile every offered tool (once) and return the table: a snapshot of the schemas as
        they are now, safe to share across the rollouts of a row and to keep."""
        if not self._complete:
            for name in self.names:
                self.get(name)
            self._complete = True
        return self

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __len__(self) -> int:
        return len(self.names)


_table_cache: OrderedDict[str, ToolTable] = OrderedDict()  # JSON text → its table
_EMPTY = ToolTable([]).compile_all()


def tool_table(tools: Any) -> ToolTable:
    """The table for an offered-tools list (a list, tuple, array-like or its JSON string; anything
    else offers nothing); a ``ToolTable`` is returned as it is. A list gets a new table on every
    call (see the module doc); a JSON string's table is cached by the string's value (the
    rollouts of a parquet row, and every copy of the same text, share it)."""
    if type(tools) is ToolTable:
        return tools
    if isinstance(tools, str):
        hit = _table_cache.get(tools)
        if hit is not None:
            return hit
        items = as_list(loads(tools, None))
        if not items:
            return _EMPTY
        table = _table_cache[tools] = ToolTable(items)
        if len(_table_cache) > _TABLE_CACHE_SIZE:
            _table_cache.popitem(last=False)
        return table
    items = as_list(tools)
    return ToolTable(items) if items else _EMPTY
