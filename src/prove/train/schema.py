"""Tool schemas for VERL: flatten the servers' JSON Schemas into what verl's schema model accepts.

    from prove.train.schema import normalise_tool_schema
    normalise_tool_schema(registry.tool("transfer_funds").openai_schema())

verl 0.9.1's ``OpenAIFunctionPropertySchema`` needs a ``type`` on every property and silently drops
everything but ``type``/``description``/``enum``. FastMCP/pydantic schemas carry ``anyOf`` for
``Optional[...]``, ``$ref`` into ``$defs`` for nested models, ``items``, bounds and defaults. This
module inlines ``$ref``, folds ``anyOf`` into a type list (merging the branches' enums, items and
properties), drops ``title`` noise and keeps what helps a model call the tool (descriptions, enums,
items, nested properties, defaults, bounds). The result validates against verl's own class, and
``prove.train.tool.ProveToolSchema`` keeps the extra keys in the prompt. Pure: no verl import.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

__all__ = [
    "normalise_tool_schema", "normalise_property", "row_schemas", "SchemaError", "KEPT_KEYS",
]

KEPT_KEYS: tuple[str, ...] = (
    "type", "description", "enum", "items", "properties", "required", "default",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "pattern", "format", "minItems", "maxItems", "additionalProperties",
)
"""Property keys kept in the normalised schema, in this order (``title`` and ``$defs`` go)."""

_MAX_DEPTH = 16
_ALL_TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"]


class SchemaError(ValueError):
    """A schema that cannot be expressed for verl (unresolvable ``$ref``, too deep)."""


def _resolve(node: Any, defs: Mapping[str, Any], depth: int) -> Any:
    """Inline every ``$ref`` (``#/$defs/Name``) of ``node``; sibling keys override the target."""
    if depth > _MAX_DEPTH:
        raise SchemaError("schema nests (or recurses through $ref) deeper than 16 levels")
    if isinstance(node, list):
        return [_resolve(v, defs, depth + 1) for v in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if not ref.startswith("#/") or name not in defs:
            raise SchemaError(f"unresolvable $ref {ref!r}")
        out.update(_resolve(defs[name], defs, depth + 1))
    for key, value in node.items():
        if key not in ("$ref", "$defs", "definitions"):
            out[key] = _resolve(value, defs, depth + 1)
    return out


def _types(node: Mapping[str, Any]) -> list[str]:
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


def _fold_any_of(node: Mapping[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [A, B], ...}`` → one node: types unioned, enums/items/properties merged."""
    branches = [b for b in (node.get("anyOf") or node.get("oneOf") or []) if isinstance(b, Mapping)]
    folded: dict[str, Any] = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
    types: list[str] = _types(folded)
    enum: list[Any] = []
    has_enum = False
    for branch in branches:
        branch = _fold_any_of(branch) if ("anyOf" in branch or "oneOf" in branch) else branch
        branch_types = _types(branch) or (["string"] if "enum" in branch else [])
        types += [t for t in branch_types if t not in types]
        if "enum" in branch:
            has_enum = True
            enum += [v for v in branch["enum"] if v not in enum]
        elif "const" in branch:
            has_enum = True
            enum += [branch["const"]] if branch["const"] not in enum else []
        for key in ("items", "properties", "required", "description", "format", "pattern",
                    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                    "minLength", "maxLength", "minItems", "maxItems"):
            if key in branch and key not in folded:
                folded[key] = branch[key]
    if has_enum:
        # A nullable enum must list null, or the value the schema allows (None) fails it.
        if "null" in types and None not in enum:
            enum.append(None)
        folded["enum"] = enum
    if types:
        folded["type"] = types
    return folded


def normalise_property(node: Any, *, depth: int = 0) -> dict[str, Any]:
    """One property schema (``$ref`` already inlined) in verl-acceptable form, recursively."""
    if depth > _MAX_DEPTH:
        raise SchemaError("property schema nests deeper than 16 levels")
    if not isinstance(node, Mapping):
        raise SchemaError(f"a property schema must be an object, got {type(node).__name__}")
    if "anyOf" in node or "oneOf" in node:
        node = _fold_any_of(node)
    if "const" in node and "enum" not in node:
        node = {**node, "enum": [node["const"]]}
    types = _types(node)
    if not types:
        if "enum" in node:
            types = sorted({_json_type(v) for v in node["enum"]})
        elif "properties" in node:
            types = ["object"]
        elif "items" in node:
            types = ["array"]
        else:
            types = list(_ALL_TYPES)  # `Any`: say so rather than guess
    out: dict[str, Any] = {}
    for key in KEPT_KEYS:
        if key == "type":
            out["type"] = types[0] if len(types) == 1 else types
        elif key not in node:
            continue
        elif key == "items":
            items = node["items"]
            out["items"] = (normalise_property(items, depth=depth + 1)
                            if isinstance(items, Mapping) else {"type": list(_ALL_TYPES)})
        elif key == "properties":
            out["properties"] = {name: normalise_property(sub, depth=depth + 1)
                                 for name, sub in node["properties"].items()}
        elif key == "additionalProperties" and isinstance(node[key], Mapping):
            out[key] = normalise_property(node[key], depth=depth + 1)
        else:
            out[key] = copy.deepcopy(node[key])
    return out


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else "object"


def normalise_tool_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI function tool schema (``{"type": "function", "function": {...}}`` or the bare
    function object) with normalised parameters: ``{"type": "function", "function": {"name",
    "description", "parameters": {"type": "object", "properties", "required", ...}}}``."""
    fn = schema.get("function", schema) if schema.get("type") == "function" else schema
    if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
        raise SchemaError(f"not a function schema (no name): {str(schema)[:120]}")
    params = fn.get("parameters") or fn.get("inputSchema") or {"type": "object", "properties": {}}
    defs = params.get("$defs") or params.get("definitions") or {}
    params = _resolve(params, defs, 0)
    props = params.get("properties") or {}
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {name: normalise_property(sub) for name, sub in props.items()},
        "required": [r for r in params.get("required", []) if r in props],
    }
    if params.get("additionalProperties") is False:
        parameters["additionalProperties"] = False
    return {
        "type": "function",
        "function": {
            "name": fn["name"],
            "description": fn.get("description") or "",
            "parameters": parameters,
        },
    }


@lru_cache(maxsize=4096)
def _schemas_of(tools_json: str) -> tuple[dict[str, Any], ...]:
    return tuple(normalise_tool_schema(t) for t in json.loads(tools_json))


def row_schemas(tools: Any) -> list[dict[str, Any]]:
    """A training row's offered schemas (JSON string or list), normalised; cached by value.
    The returned dicts are shared between calls: read them, do not modify them."""
    if tools is None or (isinstance(tools, str) and not tools.strip()):
        return []
    text = tools if isinstance(tools, str) else json.dumps(list(tools), sort_keys=True)
    return list(_schemas_of(text))
