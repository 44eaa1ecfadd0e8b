"""Tool declaration for PROVE servers: the `@tool` decorator, `ToolSpec`, and the model-facing error.

A tool is a plain function `fn(state, **arguments) -> pydantic.BaseModel`. Its docstring is its
description, its type hints (``Annotated[..., Field(description=...)]``, ``Literal``) are its input
schema, its return type is its output schema. ``@tool(write=True, sensitive=("account_id",))``
marks it a write and names the parameters whose values must have provenance.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver.utilities.func_metadata import func_metadata
from pydantic import BaseModel, ValidationError

from prove.env.errors import ToolError
from prove.env.helpers import CURRENT_CALL
from prove.env.types import MONEY, model_facing

__all__ = ["ToolError", "ToolSpec", "tool", "MAX_STRING_CHARS", "MAX_ARGUMENT_DEPTH"]

MAX_STRING_CHARS = 4096
"""Longest string a tool argument may carry; longer ones are rejected before the tool runs."""
MAX_ARGUMENT_DEPTH = 8
"""Deepest nesting of lists/objects in tool arguments."""

_ATTR = "__prove_tool__"


def tool(*, write: bool = False, sensitive: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Mark a function as a tool: a read (default) or a write, with its sensitive parameters."""

    def mark(fn: Callable) -> Callable:
        setattr(fn, _ATTR, {"write": write, "sensitive": tuple(sensitive)})
        return fn

    return mark


def is_tool(fn: Any) -> bool:
    return callable(fn) and hasattr(fn, _ATTR)


@dataclass(frozen=True)
class ToolSpec:
    """A tool as every door sees it: schemas, read/write flag, sensitive parameters, validator."""

    name: str
    server: str
    description: str
    write: bool
    sensitive: tuple[str, ...]
    fn: Callable[..., BaseModel]
    public_fn: Callable[..., Any] = field(repr=False)
    input_schema: dict[str, Any] = field(repr=False)
    output_schema: dict[str, Any] | None = field(repr=False)
    arg_model: type[BaseModel] = field(repr=False)
    params: tuple[str, ...] = ()
    required: tuple[str, ...] = ()

    @classmethod
    def from_function(cls, fn: Callable, server: str) -> ToolSpec:
        marks = getattr(fn, _ATTR, None)
        if marks is None:
            raise TypeError(f"{fn.__qualname__} is not decorated with @tool")
        sig = inspect.signature(fn, eval_str=True)
        params = list(sig.parameters.values())
        if not params or params[0].name != "state":
            raise TypeError(f"tool {fn.__name__}: the first parameter must be `state`")
        public_sig = sig.replace(parameters=params[1:])

        def public_fn(**kwargs: Any) -> Any:  # the signature MCP sees: no `state`
            raise RuntimeError("PROVE tools are dispatched by the hub, not called directly")

        public_fn.__name__ = fn.__name__
        public_fn.__doc__ = fn.__doc__
        public_fn.__signature__ = public_sig  # type: ignore[attr-defined]
        meta = func_metadata(public_fn, structured_output=True)
        schema = meta.arg_model.model_json_schema(by_alias=True)
        schema["additionalProperties"] = False
        _lift_descriptions(schema)
        names = tuple(p.name for p in params[1:])
        unknown = set(marks["sensitive"]) - set(names)
        if unknown:
            raise TypeError(f"tool {fn.__name__}: sensitive names unknown parameters {sorted(unknown)}")
        def run(state: Any, **kwargs: Any) -> Any:  # the body, knowing its call (helpers.find)
            token = CURRENT_CALL.set((schema, kwargs))
            try:
                return fn(state, **kwargs)
            finally:
                CURRENT_CALL.reset(token)

        functools.update_wrapper(run, fn)
        return cls(
            name=fn.__name__,
            server=server,
            description=inspect.cleandoc(fn.__doc__ or ""),
            write=marks["write"],
            sensitive=marks["sensitive"],
            fn=run,
            public_fn=public_fn,
            input_schema=schema,
            output_schema=meta.output_schema,
            arg_model=meta.arg_model,
            params=names,
            required=tuple(schema.get("required", ())),
        )

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Check and coerce model-supplied arguments; raise ToolError naming what is wrong."""
        if not isinstance(arguments, Mapping):
            raise ToolError(
                f"arguments of {self.name} must be a JSON object, got {type(arguments).__name__}",
                reason="type")
        unknown = [k for k in arguments if k not in self.params]
        if unknown:
            raise ToolError(
                f"unknown argument(s) {', '.join(map(repr, unknown))} for {self.name}; "
                f"valid arguments: {', '.join(self.params) or '(none)'}",
                reason="unknown_argument", params=[str(k) for k in unknown], choices=self.params)
        checks = self.__dict__.get("_strict_checks") or _checks(self)
        args = dict(arguments)
        for key, value in args.items():
            fast, money = checks[key]
            if type(value) in fast:  # a plain scalar of an accepted type (the common case)
                if type(value) is str and len(value) > MAX_STRING_CHARS:
                    _check_size(value, key, 0)
            else:
                _check_size(value, key, 0)
                schema = self.input_schema.get("properties", {}).get(key, {})
                problem = _strict(value, schema, self.input_schema.get("$defs", {}))
                if problem is not None:
                    raise ToolError(f"invalid arguments for {self.name}: argument '{key}' must "
                                    f"be {problem} (got {_shown(value)})", reason="type",
                                    params=(key,))
            if money and type(value) in (int, float):
                args[key] = round(value + 0.0, 2)  # money is cents: 0.004 is 0.00, not > 0
        try:
            model = self.arg_model.model_validate(args)
        except ValidationError as exc:
            raise _described(exc, self) from None
        return {name: getattr(model, name) for name in self.params}

    def openai_schema(self) -> dict[str, Any]:
        """This tool as an OpenAI function schema (what a policy is offered)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": model_facing(self.input_schema),
            },
        }


def _lift_descriptions(schema: dict[str, Any]) -> None:
    """`Alias | None` puts the alias's description inside `anyOf`; state it on the property too."""
    for prop in schema.get("properties", {}).values():
        if "description" not in prop:
            found = [o["description"] for o in prop.get("anyOf", ()) if "description" in o]
            if found:
                prop["description"] = found[0]


_SCALARS: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "integer": (int,), "boolean": (bool,),
    "null": (type(None),),
}


def _checks(spec: ToolSpec) -> dict[str, tuple[frozenset[type], bool]]:
    """Per parameter: the Python types accepted without a closer look, and whether it is money."""
    found = spec.__dict__.get("_strict_checks")
    if found is None:
        defs = spec.input_schema.get("$defs", {})
        found = {}
        for name, prop in spec.input_schema.get("properties", {}).items():
            types: set[type] = set()
            for option in prop.get("anyOf") or [prop]:
                for _ in range(16):
                    if "$ref" not in option:
                        break
                    option = defs.get(str(option["$ref"]).rsplit("/", 1)[-1], {})
                kind = option.get("type")
                if kind in _SCALARS and "anyOf" not in option:
                    types.update(_SCALARS[kind])
            found[name] = (frozenset(types), bool(prop.get(MONEY)))
        object.__setattr__(spec, "_strict_checks", found)  # a cache on the frozen spec
    return found


_JSON_TYPES = {"number": "a number", "integer": "an integer", "string": "a string",
               "boolean": "true or false", "array": "an array", "object": "an object",
               "null": "null"}


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _strict(value: Any, schema: Mapping[str, Any], defs: Mapping[str, Any]) -> str | None:
    """None if `value` has the JSON type `schema` advertises, else the accepted type in words.

    Stricter than pydantic's lax mode, exactly as strict as the schema: no bool for a number or
    an integer, no string for a number, an integer or a boolean, no fraction for an integer.
    """
    for _ in range(16):
        if "$ref" not in schema:
            break
        schema = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        problems = [_strict(value, o, defs) for o in options]
        if any(p is None for p in problems):
            return None
        return " or ".join(dict.fromkeys(p for p in problems if p))
    kind = schema.get("type")
    if kind is None:
        return None
    if kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind == "integer":
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    elif kind == "string":
        ok = isinstance(value, str)
    elif kind == "boolean":
        ok = isinstance(value, bool)
    elif kind == "null":
        ok = value is None
    elif kind == "array":
        if not isinstance(value, list):
            return "an array"
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                inner = _strict(item, items, defs)
                if inner is not None:
                    return f"an array whose items are {inner} (item {i} is {_shown(item)})"
        return None
    elif kind == "object":
        if not isinstance(value, dict):
            return "an object"
        props = schema.get("properties", {})
        for key, item in value.items():
            if key in props:
                inner = _strict(item, props[key], defs)
                if inner is not None:
                    return f"an object whose '{key}' is {inner}"
        return None
    else:
        return None
    return None if ok else _JSON_TYPES[kind] + ("" if kind != "number" else " (not true/false)")


def _check_size(value: Any, key: str, depth: int) -> None:
    if isinstance(value, str):
        if len(value) > MAX_STRING_CHARS:
            raise ToolError(
                f"argument '{key}' is {len(value)} characters long; the limit is {MAX_STRING_CHARS}",
                reason="limit", params=(key,))
        return
    if depth >= MAX_ARGUMENT_DEPTH and isinstance(value, (list, dict)):
        raise ToolError(f"argument '{key}' is nested deeper than {MAX_ARGUMENT_DEPTH} levels",
                        reason="limit", params=(key,))
    if isinstance(value, list):
        for item in value:
            _check_size(item, key, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _check_size(item, key, depth + 1)


def _described(exc: ValidationError, spec: ToolSpec) -> ToolError:
    """Pydantic's complaint as a ToolError: the message names each argument, the detail carries
    them, a missing one as reason "missing", and an enum's values (from the schema) as choices."""
    errors = exc.errors(include_url=False)
    params = [str(err["loc"][0]) for err in errors if err["loc"]]
    props, defs = spec.input_schema.get("properties", {}), spec.input_schema.get("$defs", {})
    choices: list[Any] = []
    for name in params:
        choices += [c for c in _enum(props.get(name, {}), defs) if c not in choices]
    missing = any(err["type"] == "missing" for err in errors)
    return ToolError(_describe(errors, spec), reason="missing" if missing else "invalid",
                     params=params, choices=choices)


def _enum(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> list[Any]:
    """The values an enum parameter accepts (through Optional's anyOf and $refs; [] if none)."""
    if "$ref" in schema:
        schema = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
    if "enum" in schema:
        return list(schema["enum"])
    return [v for sub in schema.get("anyOf", ()) for v in _enum(sub, defs)]


def _describe(errors: list[Any], spec: ToolSpec) -> str:
    parts = []
    for err in errors:
        loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if err["type"] == "missing":
            parts.append(f"missing required argument '{loc}'")
            continue
        got = err.get("input")
        shown = repr(got)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        parts.append(f"argument '{loc}': {err['msg']} (got {shown})")
    return (
        f"invalid arguments for {spec.name}: " + "; ".join(parts)
        + f". Required: {', '.join(spec.required) or '(none)'}"
    )
