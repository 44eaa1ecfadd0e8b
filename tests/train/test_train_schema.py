"""Tool schemas for VERL: normalisation rules, and every registry schema through verl's own class."""

from __future__ import annotations

import json

import pytest
from train_helpers import need_verl

from prove.env.registry import Registry
from prove.train.schema import SchemaError, normalise_property, normalise_tool_schema, row_schemas


def _tool(props: dict, required: list | None = None, defs: dict | None = None) -> dict:
    params = {"type": "object", "properties": props, "required": required or [], "title": "x"}
    if defs:
        params["$defs"] = defs
    return {"type": "function", "function": {"name": "t", "description": "d", "parameters": params}}


def test_optional_any_of_becomes_a_type_list_and_keeps_its_description() -> None:
    out = normalise_property({"anyOf": [{"type": "string"}, {"type": "null"}], "default": None,
                              "description": "City.", "title": "City"})
    assert out == {"type": ["string", "null"], "description": "City.", "default": None}


def test_nullable_enum_lists_null_and_keeps_values() -> None:
    out = normalise_property({"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}]})
    assert out["type"] == ["string", "null"] and out["enum"] == ["a", "b", None]


def test_ref_items_are_inlined_with_nested_properties() -> None:
    defs = {"Att": {"type": "object", "title": "Att", "required": ["name"],
                    "properties": {"name": {"type": "string", "description": "File name."}}}}
    schema = _tool({"files": {"type": "array", "items": {"$ref": "#/$defs/Att"}, "maxItems": 3}},
                   defs=defs)
    files = normalise_tool_schema(schema)["function"]["parameters"]["properties"]["files"]
    assert files["items"]["properties"]["name"] == {"type": "string", "description": "File name."}
    assert files["items"]["required"] == ["name"] and files["maxItems"] == 3
    assert "$defs" not in json.dumps(files) and "title" not in files["items"]


def test_bad_schemas_fail_loudly() -> None:
    with pytest.raises(SchemaError):
        normalise_tool_schema(_tool({"x": {"$ref": "#/$defs/Missing"}}))
    with pytest.raises(SchemaError):
        normalise_tool_schema({"type": "function", "function": {"description": "no name"}})


def test_row_schemas_accepts_json_and_lists_alike() -> None:
    tools = [_tool({"a": {"type": "integer", "minimum": 0}})]
    assert row_schemas(json.dumps(tools)) == row_schemas(tools)
    assert row_schemas(None) == [] and row_schemas("") == []


def test_every_registry_schema_validates_with_verls_schema_class(registry: Registry) -> None:
    need_verl()
    from verl.tools.schemas import OpenAIFunctionToolSchema

    from prove.train.tool import ProveToolSchema

    assert len(registry.tools) >= 100  # 343 with all 20 servers
    checked = 0
    for spec in registry.tools.values():
        schema = normalise_tool_schema(spec.openai_schema())
        verl_schema = OpenAIFunctionToolSchema.model_validate(schema)
        assert verl_schema.function.name == spec.name
        params = schema["function"]["parameters"]
        assert sorted(verl_schema.function.parameters.properties) == sorted(spec.params)
        assert verl_schema.function.parameters.required == list(spec.required)
        kept = ProveToolSchema.model_validate(schema).model_dump(exclude_unset=True, exclude_none=True)
        # What the prompt shows keeps everything the normaliser kept (items, bounds, nested).
        for name, prop in params["properties"].items():
            shown = kept["function"]["parameters"]["properties"][name]
            for key in ("items", "enum", "description", "properties", "minimum", "maximum"):
                if key in prop and prop[key] is not None:
                    assert shown[key] == prop[key], (spec.name, name, key)
            assert "anyOf" not in prop and "$ref" not in json.dumps(prop)
        checked += 1
    assert checked == len(registry.tools)
    print(f"{checked} tool schemas validated against verl's OpenAIFunctionToolSchema")
