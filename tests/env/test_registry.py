"""Registry and schema quality: unique names, every tool and parameter described, enums present."""

from __future__ import annotations

import os
import typing

import pytest
from pydantic import BaseModel

from prove.env import FAMILIES, Registry, ServerSpec, load_registry
from prove.env.tool import ToolSpec

REG = load_registry()
ALL_TOOLS = sorted(REG.tools)


def test_tool_names_are_globally_unique_and_clash_is_rejected() -> None:
    names = [t.name for s in REG.servers.values() for t in s.tools]
    assert len(names) == len(set(names))
    banking = REG.server("banking")
    clone = ServerSpec(name="banking2", family="finance", description="dup", state_model=banking.state_model,
                       initial_state=banking.initial_state, tools=banking.tools[:1])
    with pytest.raises(ValueError, match="must be globally unique") as err:
        Registry([banking, clone])
    assert banking.tools[0].name in str(err.value)


def test_unknown_family_and_server_are_explained() -> None:
    from prove_servers.banking import state, tools

    with pytest.raises(ValueError, match="not one of"):
        ServerSpec.build("x", "gaming", "d", state.BankState, state.initial_state, tools)
    with pytest.raises(KeyError, match="known servers: .*banking"):
        REG.server("nope")


@pytest.mark.skipif(bool(os.environ.get("PROVE_SERVERS")), reason="PROVE_SERVERS restricts the registry")
def test_the_full_library_is_20_servers_and_343_tools_across_eight_families() -> None:
    assert len(REG.servers) == 20
    assert len(REG.tools) == 343
    per_family = {f: sum(s.family == f for s in REG.servers.values()) for f in FAMILIES}
    assert all(n >= 2 for n in per_family.values()), per_family


def test_every_family_is_known() -> None:
    assert {s.family for s in REG.servers.values()} <= set(FAMILIES)


def _has_enum(schema: dict) -> bool:
    """An enum at the top, inside anyOf/oneOf, or in a list's items."""
    if "enum" in schema or "const" in schema:
        return True
    nested = [*schema.get("anyOf", []), *schema.get("oneOf", [])]
    if isinstance(schema.get("items"), dict):
        nested.append(schema["items"])
    return any(_has_enum(s) for s in nested)


@pytest.mark.parametrize("name", ALL_TOOLS)
def test_schema_quality(name: str) -> None:
    spec: ToolSpec = REG.tool(name)
    assert len(spec.description) >= 15, f"{name}: description too short"
    schema = spec.input_schema
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    hints = typing.get_type_hints(spec.fn, include_extras=True)
    for pname, prop in schema.get("properties", {}).items():
        assert prop.get("description"), f"{name}.{pname} has no description"
        # A Literal in the type hint must surface as an enum in the schema.
        if "Literal" in repr(hints[pname]):
            assert _has_enum(prop), f"{name}.{pname}: Literal without enum"
    assert spec.output_schema and spec.output_schema.get("type") == "object", f"{name}: no output schema"
    assert issubclass(hints["return"], BaseModel)
    assert set(spec.sensitive) <= set(spec.params)
    assert spec.openai_schema()["function"]["name"] == name


@pytest.mark.parametrize("server", sorted(REG.servers))
def test_server_shape(server: str) -> None:
    spec = REG.server(server)
    assert 10 <= len(spec.tools) <= 25
    assert any(t.write for t in spec.tools) and any(not t.write for t in spec.tools)
    assert any(t.sensitive for t in spec.tools), f"{server} declares no sensitive parameter"
    assert any("enum" in repr(t.input_schema) for t in spec.tools), f"{server} has no enum parameter"
