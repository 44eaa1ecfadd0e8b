"""Synthesis reads what a parameter means from its declarations (`prove.env.types`: entity, kind of
text, listing field, example, format), never from its name or description: every tool of every
server with its parameters renamed and every description reworded reads the same to the planner,
and the values it draws for the user are the same.

    .venv/bin/python -m pytest tests/synth/test_declared_meaning.py -q
"""

from __future__ import annotations

import copy
import dataclasses
import random
from typing import Any

import pytest

from prove.env.hub import Hub
from prove.env.registry import load_registry
from prove.env.tool import ToolSpec
from prove.env.types import text
from prove.graph.features import Param, parameters
from prove.synth.plan_values import date_format, user_value
from prove.synth.sampling import LiveSampler, SamplingContext, param_source

REG = load_registry()
TOOLS = [REG.tool(name) for name in sorted(REG.tools)]
WORDS = "Some words, e.g. 'nothing'."


def _reworded(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: WORDS if k == "description" and isinstance(v, str) else _reworded(v)
                for k, v in node.items()}
    if isinstance(node, list):
        return [_reworded(v) for v in node]
    return node


def anonymous(spec: ToolSpec) -> ToolSpec:
    """`spec` under a name no intents file knows (so neither side reads written requests)."""
    return dataclasses.replace(spec, name=f"anonymous_{spec.name}")


def disguised(spec: ToolSpec) -> tuple[ToolSpec, dict[str, str]]:
    """`anonymous(spec)` with every parameter renamed (`arg0`, ...) and every description
    reworded; returns it with the old -> new parameter names."""
    names = {p: f"arg{i}" for i, p in enumerate(spec.params)}
    schema = copy.deepcopy(spec.input_schema)
    schema["properties"] = {names[p]: sub for p, sub in schema.get("properties", {}).items()}
    schema["required"] = [names[p] for p in schema.get("required", [])]
    spec = dataclasses.replace(
        anonymous(spec), description=WORDS, input_schema=_reworded(schema),
        params=tuple(names[p] for p in spec.params), required=tuple(names[p] for p in spec.required),
        sensitive=tuple(names[p] for p in spec.sensitive))
    return spec, names


def reading(p: Param) -> tuple[Any, ...]:
    """What the planner reads off a parameter, all but its name and description."""
    return (p.type, p.required, p.sensitive, p.enum, p.entity, p.text, p.listed, p.example)


@pytest.mark.parametrize("spec", TOOLS, ids=lambda t: t.name)
def test_renaming_and_rewording_leave_the_reading_of_every_parameter(spec: ToolSpec) -> None:
    other, names = disguised(spec)
    before, after = parameters(spec), parameters(other)
    for p in spec.params:
        assert reading(after[names[p]]) == reading(before[p]), f"{spec.name}.{p}"
        assert param_source(other, names[p]) == param_source(spec, p), f"{spec.name}.{p}"
        assert date_format(other.input_schema["properties"][names[p]]) == date_format(
            spec.input_schema["properties"][p])


@pytest.fixture(scope="module")
def sampler() -> LiveSampler:
    return LiveSampler(Hub(REG.subset(["banking", "email", "crm", "carrental", "wiki"])))


@pytest.mark.parametrize("server", ["banking", "email", "crm", "carrental", "wiki"])
def test_renamed_and_reworded_strings_draw_the_same_values(server: str, sampler: LiveSampler) -> None:
    """Every string a user supplies (ids, values a listing shows, free text of each kind; dates and
    enums aside) is drawn the same under other names and words, from the same live probe."""
    ctx = sampler.probe(server, 1)
    drawn = 0
    for spec in REG.server(server).tools:
        other, names = disguised(spec)
        plain = anonymous(spec)
        for p in spec.params:
            feat = parameters(spec)[p]
            if feat.scalar_type != "string" or feat.enum or date_format(
                    spec.input_schema["properties"][p]):
                continue
            for seed in range(3):
                a = user_value(plain, p, ctx, random.Random(seed), {})
                b = user_value(other, names[p], ctx, random.Random(seed), {})
                assert a == b, f"{spec.name}.{p} (seed {seed}): {a} != {b}"
                drawn += a is not None
    assert drawn > 20


def test_the_declared_kind_of_text_decides_the_value_not_the_name() -> None:
    """Two parameters under one name but of declared kinds 'reason' and 'body' draw from their own
    kinds; a declared listing field is sampled from, whatever the parameter is called."""
    spec = REG.tool("create_deploy_freeze")  # reason: text("reason", ...)
    reason = spec.input_schema["properties"]["reason"]
    body = {**reason, "x-text": "body"}
    as_body = dataclasses.replace(anonymous(spec), input_schema={
        **spec.input_schema, "properties": {**spec.input_schema["properties"], "reason": body}})
    for seed in range(4):
        said = user_value(anonymous(spec), "reason", SamplingContext(), random.Random(seed), {})
        written = user_value(as_body, "reason", SamplingContext(), random.Random(seed), {})
        assert said is not None and written is not None and said.kind == written.kind == "text"
        assert said.value != written.value and written.value.endswith((".", "!", "?"))
    city = REG.tool("search_bank_customers")  # city: text("word", ..., listed="city")
    ctx = SamplingContext(values={"city": [("Lisbon", 0)], "town": [("Oslo", 0)]})
    got = user_value(anonymous(city), "city", ctx, random.Random(0), {})
    assert got is not None and (got.value, got.kind) == ("Lisbon", "value")


def test_text_refuses_an_unknown_kind_and_a_bad_field() -> None:
    with pytest.raises(ValueError, match="text kind must be one of query, title"):
        text("essay", "An essay.")
    with pytest.raises(ValueError, match="listed must name a result field"):
        text("word", "A city.", listed="the city")
