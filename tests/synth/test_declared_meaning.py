"""Synthesis reads what a parameter means from its declarations (`prove.env.types`: entity, kind of
text, listing field, example, format, what a number measures, a date's role), never from its name or
description: every tool of every server with its parameters renamed and every description reworded
reads the same to the planner, and the values it draws for the user (strings, numbers, dates, search
words from the listing field a search declares) are the same.

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
from prove.env.types import day, measure, text
from prove.graph.features import Param, parameters
from prove.synth import phrasing as P
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


def _draw_all(spec: ToolSpec, names: dict[str, str], seed: int) -> dict[str, Any]:
    """The numbers and dates a user supplies for every such parameter of `spec`, drawn in order
    with one rng (an end date sees the start drawn before it), keyed by the original names."""
    rng, args, out = random.Random(seed), {}, {}
    inverse = {v: k for k, v in names.items()}
    for p in spec.params:
        feat = parameters(spec)[p]
        fmt = date_format(spec.input_schema["properties"][p])
        if feat.entity or feat.enum or not (feat.scalar_type in ("integer", "number") or fmt):
            continue
        got = user_value(spec, p, SamplingContext(now={spec.server: "2026-03-16T09:00"}), rng, args)
        assert got is not None
        args[p] = got.value
        out[inverse.get(p, p)] = got.value
    return out


@pytest.mark.parametrize("spec", [t for t in TOOLS if any(
    parameters(t)[p].scalar_type in ("integer", "number") or date_format(t.input_schema["properties"][p])
    for p in t.params)], ids=lambda t: t.name)
def test_renamed_numbers_and_dates_draw_the_same_values(spec: ToolSpec) -> None:
    """What a number measures and what a date is among the call's dates are read from `measure`
    and `role=`: every number and date parameter renamed and reworded draws the same values."""
    other, names = disguised(spec)
    for seed in range(3):
        assert _draw_all(other, names, seed) == _draw_all(anonymous(spec), {}, seed), spec.name


def _with_param(spec: ToolSpec, param: str, new: str, sub: dict[str, Any]) -> ToolSpec:
    """`spec` (anonymous) with `param` renamed to `new` and its schema replaced by `sub`."""
    props = {(new if k == param else k): (sub if k == param else v)
             for k, v in spec.input_schema["properties"].items()}
    return dataclasses.replace(anonymous(spec), input_schema={**spec.input_schema, "properties": props},
                               params=tuple(new if p == param else p for p in spec.params))


def test_a_number_is_drawn_by_its_declared_kind_not_its_name() -> None:
    """A money parameter called `arg0` draws money; a count called `amount` draws a count."""
    spec = REG.tool("list_bank_transactions")  # min_amount: measure("money"), ge=0
    money = spec.input_schema["properties"]["min_amount"]
    plain = {"anyOf": [{"type": "number", "minimum": 0}, {"type": "null"}]}
    drawn = {name: {user_value(_with_param(spec, "min_amount", name, sub), name, SamplingContext(),
                               random.Random(s), {}).value for s in range(30)}
             for name, sub in (("arg0", money), ("amount", plain))}
    assert max(drawn["arg0"]) > 3 and drawn["amount"] <= {1, 2, 3}


def test_an_end_date_is_read_from_its_declared_role_not_its_name() -> None:
    """A date declaring role 'end' follows the call's start date; one called `end` that declares no
    role is a day of its own."""
    spec = REG.tool("create_calendar_event")  # end: moment(..., role="end")
    end = spec.input_schema["properties"]["end"]
    plain = {k: v for k, v in end.items() if k != "x-date"}
    ctx = SamplingContext(now={"calendar": "2026-03-16T09:00"})
    start = {"start": "2026-05-01T10:00"}
    for seed in range(8):
        after = user_value(_with_param(spec, "end", "arg0", end), "arg0", ctx, random.Random(seed), start)
        alone = user_value(_with_param(spec, "end", "end", plain), "end", ctx, random.Random(seed), start)
        assert after is not None and after.value in ("2026-05-01T11:00", "2026-05-01T12:00")
        assert alone is not None and alone.value < "2026-04-01"


def test_a_search_draws_its_words_from_the_field_it_declares() -> None:
    """A search parameter's words come from the listing field it declares (`listed=`), whatever
    that field is called; values under other fields (a `name`, a `title`) are not read."""
    spec = REG.tool("search_bank_customers")  # query: text("query", ..., listed="name")
    query = {**spec.input_schema["properties"]["query"], "x-listed": "handle_xyz"}
    ctx = SamplingContext(values={"handle_xyz": [("Zephyrine Quimby", 0)], "name": [("Alma Borg", 0)],
                                  "title": [("Budget review", 0)]})
    words = {user_value(_with_param(spec, "query", "arg0", query), "arg0", ctx, random.Random(s), {}).value
             for s in range(10)}
    assert words == {"Zephyrine", "Quimby"}
    none = SamplingContext(values={"name": [("Alma Borg", 0)]})
    stock = user_value(_with_param(spec, "query", "arg0", query), "arg0", none, random.Random(0), {})
    assert stock is not None and stock.value not in ("Alma", "Borg")


def test_declarations_refuse_unknown_kinds_and_roles() -> None:
    with pytest.raises(ValueError, match="number kind must be one of money, percent"):
        measure("speed")
    with pytest.raises(ValueError, match="date role must be one of end, return, expiry"):
        day("A day.", role="start")


def test_a_reply_reads_what_names_a_record_and_what_is_money_from_the_result_declarations() -> None:
    """Which field names an item and which numbers are money come from the result's declarations
    (`naming`, ``x-money``), whatever the fields are called."""
    item = {"zz": "Plan the launch", "qq": 12.5, "name": "Other", "amount": 3.25}
    fields = P.ResultFields(naming={"zz": "title"}, money=frozenset({"qq"}))
    text = P.describe_item(item, fields=fields, limit=4)
    assert text.startswith('"Plan the launch" (') and "qq $12.50" in text and "$3.25" not in text
    plain = P.describe_item({"name": "Everyday", "price": 5.5}, fields=P.ResultFields(), limit=4)
    assert "$" not in plain


def test_result_declarations_follow_the_fields_when_they_are_renamed() -> None:
    """A tool's output schema with every property renamed declares the same fields, renamed."""
    spec = REG.tool("search_products")
    before = P.ResultFields.of(spec)
    assert before.naming and before.money

    def renamed(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: {f"f_{p}": renamed(v) for p, v in sub.items()} if k == "properties"
                    else [f"f_{r}" for r in sub] if k == "required" else renamed(sub)
                    for k, sub in node.items()}
        if isinstance(node, list):
            return [renamed(v) for v in node]
        return node

    after = P.ResultFields.of(dataclasses.replace(spec, output_schema=renamed(spec.output_schema)))
    assert after.naming == {f"f_{k}": v for k, v in before.naming.items()}
    assert after.money == {f"f_{k}" for k in before.money}


def test_a_mention_names_the_declared_entity_and_says_id_only_of_a_generated_id() -> None:
    """The thing a parameter names is its declared entity kind (a `viewer_profile_id` names a
    profile); "ID" is said of generated ids, never of a natural key (a repository's owner/name)."""
    for seed in range(20):
        said = P.mention("viewer_profile_id", "PRF-0003", "result-single", random.Random(seed),
                         entity="profile")
        assert said in ("that profile", "this profile", "the same profile")
        repo = P.mention("repo", "acme/web", "id", random.Random(seed), entity="repository")
        assert repo == "repo acme/web"
        other = P.mention("arg0", "ACC-0003", "result-single", random.Random(seed), entity="account")
        assert other.endswith(" account")
    ids = {P.mention("arg0", "ACC-0003", "id", random.Random(s), entity="account") for s in range(30)}
    assert "arg0 ID ACC-0003" in ids
    assert {P.mention("account_id", "ACC-0003", "id", random.Random(s)) for s in range(30)} == {
        "account ACC-0003"}  # nothing declared: no name says it is an id


def test_a_rate_limit_a_score_and_a_window_end_draw_what_they_declare() -> None:
    """A daily-rate ceiling is money (not a count of 1-3 dollars), a 0-100 lead score a score (not
    1-5 stars), and a free-window end an hour or two after its start (not days later, past the
    tool's 24-hour window): read from `measure("money")`, `measure("score")` and `role="end"`."""
    ctx = SamplingContext(now={"calendar": "2026-03-16T09:00"})
    rates = {user_value(REG.tool("search_rental_cars"), "max_daily_rate", ctx, random.Random(s), {}).value
             for s in range(30)}
    scores = {user_value(REG.tool("list_leads"), "min_score", ctx, random.Random(s), {}).value
              for s in range(30)}
    assert min(rates) >= 5 and max(rates) >= 35, rates  # the fleet's cheapest class rents at 35+
    assert min(scores) >= 30 and max(scores) <= 90 and len(scores) > 3, scores
    start = {"free_from": "2026-05-01T10:00"}
    ends = {user_value(REG.tool("list_meeting_rooms"), "free_until", ctx, random.Random(s), start).value
            for s in range(8)}
    assert ends <= {"2026-05-01T11:00", "2026-05-01T12:00"}, ends


def test_a_record_without_a_declared_name_is_labelled_by_its_own_id_whatever_its_fields_are_called() -> None:
    """No field is a label for its name (`sku`, `email`, `city`...): a record whose result declares
    no `naming` field reads as its own id, renamed or not; a declared one labels it."""
    item = {"rma_id": "RMA-0003", "sku": "SKU-1004", "email": "ada@x.com", "city": "Lisbon"}
    renamed = {"rma_id": "RMA-0003", "f1": "SKU-1004", "f2": "ada@x.com", "f3": "Lisbon"}
    plain = P.ResultFields()
    assert P._label(item, plain)[1] == P._label(renamed, plain)[1] == "rma RMA-0003"
    assert P._label(renamed, P.ResultFields(naming={"f1": "name"})) == ("f1", "SKU-1004")


def test_the_thing_a_listed_object_is_reads_its_declared_own_id_not_the_list_key() -> None:
    """What a described leaf belongs to (`Fed.info['item']`) is the kind its object's own id
    declares (`Resolvers.own_kinds`), the same under any list key; with none declared, nothing."""
    from prove.synth.plan_lookup import Resolvers
    from prove.synth.plan_results import fed_from, find_key

    owners = Resolvers().own_kinds(REG.server("banking"), "list_bank_transactions")
    assert owners["transactions[]"] == "transaction"
    rows = [{"transaction_id": "TXN-0001", "account_id": "ACC-0001", "description": "Coffee at Nola"},
            {"transaction_id": "TXN-0002", "account_id": "ACC-0002", "description": "Rent for May"}]
    for key in ("transactions", "zz"):
        fed = fed_from(find_key({key: rows}, "account_id"), "account_id", random.Random(1), {}, "account",
                       {f"{key}[]": "transaction"})
        assert fed.kind == "result-item" and fed.info["item"] == "transaction", fed
        bare = fed_from(find_key({key: rows}, "account_id"), "account_id", random.Random(1), {}, "account")
        assert bare.info["item"] == "", bare  # never "transaction" read off the key


def test_the_noun_of_a_mention_is_its_declared_entity_never_the_parameter_name() -> None:
    """A parameter's thing is the entity it declares, else the kind the feeding result declares,
    else "item": `to_account_id` and `arg0` read the same."""
    for seed in range(6):
        said = {P.mention(p, "ACC-0003", "result-single", random.Random(seed), entity="account")
                for p in ("to_account_id", "arg0")}
        assert len(said) == 1 and said.pop().endswith(" account")
        bare = {P.mention(p, "ACC-0003", "result-single", random.Random(seed)) for p in ("to_account_id", "arg0")}
        assert len(bare) == 1 and bare.pop().endswith(" item")
    assert P.entity_of(None, "payee") == "payee" and P.entity_of("scheduled_payment") == "scheduled payment"


def test_the_users_name_is_the_field_its_listing_declares_names_a_person() -> None:
    """`_who` takes the persona's name from a lookup described by a declared name (`naming`
    'name'/'alone'), whatever the field is called; an undeclared field called `name` is no name."""
    from types import SimpleNamespace

    from prove.synth.planner import Mention, Planned
    from prove.synth.programmatic import ProgrammaticTeacher

    def who(info: dict[str, Any]) -> str | None:
        plan = Planned(0, "list_accounts", {}, [Mention("customer_id", "named", "CUS-0001", info)])
        convo = SimpleNamespace(scratch={"plans": [[plan]]}, env=SimpleNamespace(registry=REG))
        return ProgrammaticTeacher()._who(convo)  # type: ignore[arg-type]

    assert who({"descr_field": "zz", "descr": "Ada Chen", "descr_how": "alone"}) == "Ada Chen"
    assert who({"descr_field": "zz", "descr": "Ada Chen", "descr_how": "name"}) == "Ada Chen"
    assert who({"descr_field": "name", "descr": "ada@x.com", "descr_how": None}) is None
    assert who({"descr_field": "title", "descr": "Q3 plan", "descr_how": "title"}) is None
