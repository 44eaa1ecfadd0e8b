"""The declared-meaning rules every server keeps (servers/README): entity ids, dates, pages, names.

    .venv/bin/python -m pytest tests/env/test_declarations.py -q
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from prove.env import load_registry
from prove.env.tool import ToolSpec
from prove.env.types import (
    DEFAULT_LIMIT,
    ENTITY,
    EXAMPLE,
    MONEY,
    NAMING,
    declared_entity,
    declared_example,
    declared_format,
    declared_listed,
    declared_text,
    model_facing,
    money_fields,
    naming,
    naming_fields,
    parse_day,
    parse_moment,
)

REG = load_registry()
TOOLS = [REG.tool(name) for name in sorted(REG.tools)]
LISTING = ("list_", "search_", "find_")


def _properties(schema: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every (path, property schema) of a JSON schema, through $ref, anyOf and array items."""
    defs = schema.get("$defs", {})

    def walk(node: Mapping[str, Any], path: str, depth: int) -> Iterator[tuple[str, Mapping[str, Any]]]:
        if depth > 6:
            return
        if "$ref" in node:
            node = defs.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
        for option in node.get("anyOf", ()):
            yield from walk(option, path, depth + 1)
        if isinstance(node.get("items"), Mapping):
            yield from walk(node["items"], path + "[]", depth + 1)
        for key, sub in node.get("properties", {}).items():
            yield f"{path}.{key}" if path else key, sub
            yield from walk(sub, f"{path}.{key}" if path else key, depth + 1)

    yield from walk(schema, "", 0)


def _produced(server: str) -> set[str]:
    spec = REG.server(server)
    kinds: set[str] = set()
    for t in spec.tools:
        out = t.output_schema or {}
        kinds |= {k for _, sub in _properties(out) if (k := declared_entity(sub, out.get("$defs")))}
    return kinds


def _consumed(t: ToolSpec) -> dict[str, str]:
    schema = t.input_schema
    return {p: k for p, sub in schema.get("properties", {}).items()
            if (k := declared_entity(sub, schema.get("$defs")))}


@pytest.mark.parametrize("t", TOOLS, ids=lambda t: t.name)
def test_every_id_parameter_declares_its_entity_kind(t: ToolSpec) -> None:
    kinds = _consumed(t)
    undeclared = [p for p in t.params if p.endswith(("_id", "_ids")) and p not in kinds]
    assert not undeclared, f"{t.server}.{t.name}: declare with prove.env.types.entity_id(kind, ...): {undeclared}"


@pytest.mark.parametrize("server", sorted(REG.servers))
def test_every_consumed_entity_kind_is_produced_by_a_tool_of_the_server(server: str) -> None:
    produced = _produced(server)
    orphans = {f"{t.name}.{p}": k for t in REG.server(server).tools for p, k in _consumed(t).items()
               if k not in produced}
    assert not orphans, (f"{server}: these parameters take ids no tool of the server returns "
                         f"(declare the result field with the same entity_id alias): {orphans}")


@pytest.mark.parametrize("server", sorted(REG.servers))
def test_every_listed_field_is_shown_by_a_read_of_the_server(server: str) -> None:
    """A parameter's `listed` field (prove.env.types.text/day/moment) is one a read tool's result
    has, or the sampler never fills it."""
    shown = {path.rsplit(".", 1)[-1].removesuffix("[]") for t in REG.server(server).tools
             if not t.write for path, _ in _properties(t.output_schema or {})}
    unseen = {f"{t.name}.{p}": field for t in REG.server(server).tools
              for p, sub in t.input_schema.get("properties", {}).items()
              if (field := declared_listed(sub)) is not None and field not in shown}
    assert not unseen, f"{server}: no read tool returns these listed fields: {unseen}"


@pytest.mark.parametrize("t", TOOLS, ids=lambda t: t.name)
def test_an_example_the_description_shows_is_declared(t: ToolSpec) -> None:
    """Synthesis reads a parameter's example from its declaration (`example=`), never from the
    description; a description that shows one ("e.g. 'ACC-0003'") declares the same value."""
    wrong = {}
    for p, sub in t.input_schema.get("properties", {}).items():
        top = "description" in sub  # a role's own description carries its own example
        text = str(sub.get("description") if top else next(
            (o.get("description") for o in sub.get("anyOf", ()) if o.get("description")), ""))
        declared = sub.get(EXAMPLE) if top else declared_example(sub)
        shown = re.search(r"e\.g\. '([^']+)'", text)
        kept = declared_entity(sub) or declared_text(sub) or p in t.sensitive
        if kept and shown and shown.group(1) != declared:
            wrong[p] = (shown.group(1), declared)
    assert not wrong, f"{t.name}: declare example= (shown, declared): {wrong}"


@pytest.mark.parametrize("t", TOOLS, ids=lambda t: t.name)
def test_date_parameters_declare_one_format(t: ToolSpec) -> None:
    loose = [p for p, sub in t.input_schema.get("properties", {}).items()
             if re.search(r"YYYY-MM-DD|ISO 8601|\bdate\b.*\(", str(sub.get("description", "")))
             and declared_format(sub) is None]
    assert not loose, f"{t.name}: use prove.env.types.day/moment for {loose}"


@pytest.mark.parametrize("t", [t for t in TOOLS if t.name.startswith(LISTING)], ids=lambda t: t.name)
def test_every_list_and_search_tool_pages_and_counts(t: ToolSpec) -> None:
    props = t.input_schema.get("properties", {})
    assert {"offset", "limit"} <= set(props), f"{t.name} must take offset and limit (prove.env.types)"
    assert props["limit"].get("default") == DEFAULT_LIMIT, f"{t.name}: default limit must be {DEFAULT_LIMIT}"
    out = (t.output_schema or {}).get("properties", {})
    assert {"total", "next_offset"} <= set(out), f"{t.name} must return a prove.env.types.Page"


def test_no_list_tool_cuts_its_results_silently() -> None:
    """Every listing returns `total`; a page shorter than the total points at the next one."""
    from prove.env.hub import Hub

    short = []
    for name in sorted(REG.servers):
        hub = Hub(REG.subset([name]))
        for t in REG.server(name).tools:
            if not t.name.startswith(LISTING) or t.required:
                continue
            out = hub.call(t.name, {"limit": 1}, episode_id="declarations")
            if not out["ok"]:
                continue
            result = out["result"]
            items = next((v for v in result.values() if isinstance(v, list)), [])
            if result["total"] > len(items) and result["next_offset"] is None:
                short.append(t.name)
    assert not short, f"these listings drop results without a next_offset: {short}"


def _noun_phrase(name: str) -> list[str]:
    return name.split("_")[1:]


def test_names_say_whose_entity_when_two_servers_share_a_noun() -> None:
    """`search_bank_customers` beside `search_shop_customers` reads as if it searched every customer."""
    clashes = []
    for a in TOOLS:
        for b in TOOLS:
            pa, pb = _noun_phrase(a.name), _noun_phrase(b.name)
            if (a.server != b.server and a.name.split("_")[0] == b.name.split("_")[0]
                    and len(pa) < len(pb) and pb[-len(pa):] == pa):
                clashes.append(f"{a.server}.{a.name} vs {b.server}.{b.name}")
    assert not clashes, clashes


def test_names_put_the_qualifier_first() -> None:
    servers = "|".join(sorted(REG.servers))
    trailing = [t.name for t in TOOLS if re.search(rf"_for_({servers})$", t.name)]
    assert not trailing, f"name the domain before the noun (list_support_customer_orders): {trailing}"


def test_model_facing_schemas_drop_declarations_and_mcp_keeps_them() -> None:
    t = REG.tool("transfer_funds")
    assert t.input_schema["properties"]["from_account_id"][ENTITY] == "account"
    offered = t.openai_schema()["function"]["parameters"]
    assert ENTITY not in str(offered) and "from_account_id" in offered["properties"]
    assert model_facing({"a": [{"x-entity": "k", "type": "string"}]}) == {"a": [{"type": "string"}]}


@pytest.mark.parametrize("bad", ["2026-4-2", "April 1", "2026-02-30", "1999-12-31", "", "2026-04-02T10:00",
                                 "2026-W19-1", "2026-123", " 2026-04-02"])
def test_one_date_parser_one_message(bad: str) -> None:
    with pytest.raises(ToolError, match=r"^when must be a date YYYY-MM-DD .*got '"):
        parse_day(bad, "when")
    assert str(parse_day("2026-04-02", "when")) == "2026-04-02"


@pytest.mark.parametrize("bad", ["2026-04-02", "2026-04-02 10:00", "2026-04-02T25:00", "2026-04-02T10:00+02:00",
                                 "2026-04-02T10:00Z", "2026-04-02T10", "2026-W19-1T10:00"])
def test_one_datetime_parser_one_message(bad: str) -> None:
    with pytest.raises(ToolError, match=r"^at must be a date and time YYYY-MM-DDTHH:MM"):
        parse_moment(bad, "at")
    assert parse_moment("2026-04-02T09:30", "at").hour == 9


def test_the_value_pool_finds_ids_by_declared_kind_not_by_parameter_name() -> None:
    import random

    from prove.env.hub import Hub
    from prove.env.sampling import ValuePool, random_arguments

    hub = Hub(REG.subset(["banking"]))
    hub.open("pool", 3)
    pool = ValuePool.of(hub, "pool", "banking")
    state = hub.state("pool", "banking")
    assert pool.candidates({"type": "string", "x-entity": "account"}) == sorted(state["accounts"])
    assert pool.candidates({"type": "string"}) == []  # a name alone says nothing
    rng = random.Random(0)
    drawn = {random_arguments(REG.tool("transfer_funds"), pool, rng)["to_account_id"] for _ in range(40)}
    assert drawn & set(state["accounts"]) and len(drawn & set(state["accounts"])) > 3


def test_the_value_pool_draws_strings_by_the_declared_listing_field_not_the_parameter_name() -> None:
    """A `city` filter declares the listing field it takes (`listed="city"`): renamed, it draws the
    same cities; a parameter called `city` that declares nothing draws none of them."""
    import dataclasses
    import random

    from prove.env.hub import Hub
    from prove.env.sampling import ValuePool, random_arguments

    hub = Hub(REG.subset(["banking"]))
    hub.open("pool", 3)
    pool = ValuePool.of(hub, "pool", "banking")
    cities = {c["city"] for c in hub.state("pool", "banking")["customers"].values()}
    spec = REG.tool("search_bank_customers")
    props = spec.input_schema["properties"]
    assert props["city"]["x-listed"] == "city"

    def only(name: str, schema: dict[str, Any]) -> Any:
        return dataclasses.replace(spec, input_schema={"properties": {name: schema}, "required": [name]},
                                   params=(name,), required=(name,))

    def draws(name: str, schema: dict[str, Any]) -> list[Any]:
        rng = random.Random(5)
        return [random_arguments(only(name, schema), pool, rng)[name] for _ in range(30)]

    declared = draws("city", props["city"])
    assert draws("arg0", props["city"]) == declared and len(set(declared) & cities) > 2
    plain = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert not set(draws("city", plain)) & cities


def _objects(schema: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every object schema with properties in a JSON schema: the top and each of its `$defs`."""
    yield schema
    yield from schema.get("$defs", {}).values()


@pytest.mark.parametrize("t", TOOLS, ids=lambda t: t.name)
def test_a_record_declares_at_most_one_naming_field_and_money_on_numbers(t: ToolSpec) -> None:
    """What names a record (`naming`) is one string field of it; a money field (x-money) is a number."""
    out = t.output_schema or {}
    for obj in _objects(out):
        props = obj.get("properties", {})
        named = {k: v for k, v in props.items() if NAMING in str(v)}
        assert len(named) <= 1, f"{t.name}: {obj.get('title')} declares several naming fields: {sorted(named)}"
        for key, sub in named.items():
            assert sub.get("type") == "string" or any(o.get("type") == "string" for o in sub.get("anyOf", ())), \
                f"{t.name}: {obj.get('title')}.{key} names its record but is not a string"
        for key in money_fields(obj, out.get("$defs", {})) & set(props):
            sub = props[key]
            kinds = {sub.get("type"), *(o.get("type") for o in sub.get("anyOf", ()))}
            assert kinds & {"number", "integer"}, f"{t.name}: {obj.get('title')}.{key} is money but not a number"


def test_naming_and_money_are_read_through_references_options_and_lists() -> None:
    class Line(BaseModel):
        label: str = Field(json_schema_extra=naming("title"))
        unit_price: float = Field(json_schema_extra={MONEY: True})
        quantity: int

    class Basket(BaseModel):
        owner: str | None = Field(default=None, json_schema_extra=naming("alone"))
        lines: list[Line]
        main: Line | None = None
        total: int

    schema = Basket.model_json_schema()
    assert naming_fields(schema) == {"owner": "alone", "label": "title"}
    assert money_fields(schema) == {"unit_price"}
    with pytest.raises(ValueError, match="naming kind must be one of name, alone, title"):
        naming("nickname")
