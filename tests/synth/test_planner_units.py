"""The planner's parts on small hand-written inputs: reading results (plan_results), lookups and
belonging (plan_lookup), drawing values (plan_values), reading errors (plan_errors), and the
records the planner hands the teacher (planner).

    .venv/bin/python -m pytest tests/synth/test_planner_units.py -q
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

import pytest

from prove.env.registry import Registry, load_registry
from prove.graph.chains import Edge
from prove.synth.plan_errors import Lessons, learn, offered, same_shape
from prove.synth.plan_lookup import (
    Belonging,
    Pick,
    Resolver,
    Resolvers,
    listing_arguments,
    pick_named,
)
from prove.synth.plan_results import (
    Descriptor,
    base_schema,
    descriptor,
    fed_from,
    feeds_all,
    field_name,
    find_key,
    value_type,
)
from prove.synth.plan_values import (
    Prefer,
    ToolParams,
    date_format,
    date_value,
    number,
    user_value,
)
from prove.synth.planner import Draft, Mention, Planned, Planner, turn_calls
from prove.synth.programmatic import repair_call
from prove.synth.sampling import SamplingContext, kind_key

ACCOUNTS = {"accounts": [
    {"account_id": "ACC-0001", "name": "Everyday", "type": "checking", "opened": "2024-01-02"},
    {"account_id": "ACC-0002", "name": "Savings", "type": "savings", "opened": "2024-01-02"},
    {"account_id": "ACC-0003", "name": "Savings", "type": "checking", "opened": "2025-06-30"},
], "total": 3, "next_offset": None}


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry().subset(["banking", "hotels"])


# -- plan_results ---------------------------------------------------------------------------

def test_find_key_gives_each_listed_value_with_its_object_and_list() -> None:
    hits = find_key(ACCOUNTS, "account_id")
    assert [h.value for h in hits] == ["ACC-0001", "ACC-0002", "ACC-0003"]
    assert [h.path for h in hits] == [f"accounts[{i}].account_id" for i in range(3)]
    assert hits[1].item is ACCOUNTS["accounts"][1]
    assert hits[1].siblings is ACCOUNTS["accounts"]


def test_find_key_reads_scalar_lists_nested_objects_and_skips_flags() -> None:
    result = {"ids": ["T-1", "T-2", True, None], "owner": {"user_id": "USR-0001"}, "done": True}
    assert [(h.value, h.path, h.item) for h in find_key(result, "ids")] == [
        ("T-1", "ids[0]", None), ("T-2", "ids[1]", None)]
    (owner,) = find_key(result, "user_id")
    assert (owner.value, owner.path, owner.siblings) == ("USR-0001", "owner.user_id", None)
    assert find_key(result, "done") == []


def test_descriptor_picks_a_field_that_tells_the_object_apart() -> None:
    items = ACCOUNTS["accounts"]
    assert descriptor(items[0], items, "ACC-0001") == Descriptor("name", "Everyday")
    # two accounts share the name 'Savings': the type tells them apart, not the name
    assert descriptor(items[1], items, "ACC-0002") == Descriptor("type", "savings")


def test_descriptor_falls_back_to_a_date_and_refuses_ids_and_quotes() -> None:
    items = [{"id": "EV-0001", "starts": "2026-03-20", "ref": "EV-0009", "note": "it's fine"},
             {"id": "EV-0002", "starts": "2026-03-21", "ref": "EV-0009", "note": "ok"}]
    assert descriptor(items[0], items, "EV-0001") == Descriptor("starts", "2026-03-20")
    twins = [{"id": "A-01", "name": "Same"}, {"id": "A-02", "name": "Same"}]
    assert descriptor(twins[0], twins, "A-01") is None


def test_schema_helpers_see_through_optional_and_arrays() -> None:
    optional = {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None}
    assert base_schema(optional)["type"] == "integer" and base_schema(optional)["minimum"] == 1
    assert value_type({"type": "array", "items": {"type": "string"}}) == "string"
    assert value_type(base_schema(optional)) == "integer"
    assert field_name("accounts[].account_id") == "account_id"


def test_feeds_all_needs_a_value_for_every_edge() -> None:
    by_field = Edge(0, 1, "explicit", argument="account_id", field="accounts[].account_id")
    by_argument = Edge(0, 2, "explicit", argument="total")
    missing = Edge(0, 3, "explicit", argument="card_id", field="cards[].card_id")
    assert feeds_all(ACCOUNTS, [by_field, by_argument])
    assert not feeds_all(ACCOUNTS, [by_field, missing])
    assert feeds_all({"accounts": []}, [])


def test_fed_from_one_value_is_the_one_from_before() -> None:
    fed = fed_from(find_key({"account": {"account_id": "ACC-0001"}}, "account_id"), "account_id",
                   random.Random(0))
    assert (fed.value, fed.kind) == ("ACC-0001", "result-single")
    assert fed.info == {"source_entity": fed.info["source_entity"]}


def test_fed_from_a_listing_describes_the_item_it_picks() -> None:
    hits = find_key(ACCOUNTS, "account_id")
    for seed in range(6):
        fed = fed_from(hits, "account_id", random.Random(seed), owners={"accounts[]": "account"})
        assert fed.kind == "result-item"
        item = next(a for a in ACCOUNTS["accounts"] if a["account_id"] == fed.value)
        assert item[fed.info["descr_field"]] == fed.info["descr"]
        assert fed.info["item"] == "account"  # the kind the listed objects' own id declares


def test_fed_from_alike_items_takes_the_first() -> None:
    twins = {"rows": [{"code": "A-01"}, {"code": "A-02"}]}
    fed = fed_from(find_key(twins, "code"), "code", random.Random(1))
    assert (fed.value, fed.kind) == ("A-01", "result-ordinal")


# -- plan_lookup ----------------------------------------------------------------------------

HELD = {"guest:G-1": frozenset({1, 2}), "reservation:R-1": frozenset({1}),
        "reservation:R-2": frozenset({2}), "reservation:R-3": frozenset({3}),
        "guest:G-2": frozenset({3})}


def test_belonging_follows_the_records_that_hold_the_conversations_ids() -> None:
    belongs = Belonging.of(HELD, [("guest", "G-1")], {})
    assert belongs("reservation", "R-1") and belongs("reservation", "R-2")
    assert not belongs("reservation", "R-3")
    assert belongs.linked("reservation") == ["R-1", "R-2"]


def test_belonging_also_through_the_listed_object_or_the_probe() -> None:
    belongs = Belonging.of(HELD, [("guest", "G-1")], {"R-9": frozenset({"G-1", "open"})})
    assert belongs("reservation", "R-8", {"reservation_id": "R-8", "guest_id": "G-1"})
    assert not belongs("reservation", "R-8", {"reservation_id": "R-8", "guest_id": "G-2"})
    assert belongs("reservation", "R-9")  # made during the conversation, seen beside the guest


def test_resolvers_find_the_listing_of_a_kind(registry: Registry) -> None:
    resolvers = Resolvers()
    found = resolvers(registry.server("banking"), "account")
    assert Resolver("list_accounts", "account_id") in found
    assert resolvers(registry.server("banking"), "no_such_kind") == []


def test_listing_arguments_scope_by_known_ids_then_fall_back_to_required(registry: Registry) -> None:
    listing = registry.tool("list_bank_transactions")  # requires account_id
    feats = ToolParams()(listing)
    assert listing_arguments(listing, feats, {"customer": "CUS-1"}) == []
    assert listing_arguments(listing, feats, {"account": "ACC-0001"}) == [{"account_id": "ACC-0001"}]
    accounts = registry.tool("list_accounts")  # nothing required: scoped, then unscoped
    assert listing_arguments(accounts, ToolParams()(accounts), {"customer": "CUS-1"}) == [
        {"customer_id": "CUS-1"}, {}]


def _pick(**kw: Any) -> Pick:
    return Pick(**{"kind": "account", "json_type": "string", "args": {}, "belongs": None,
                   "bad": set(), **kw})


def test_pick_named_draws_a_nameable_id_not_rejected_nor_already_used() -> None:
    hits = find_key(ACCOUNTS, "account_id")
    for seed in range(5):
        named = pick_named(hits, _pick(bad={repr("ACC-0002")}, args={"from": "ACC-0003"}),
                           random.Random(seed))
        assert named is not None and named.value == "ACC-0001"
        assert named.descriptor == Descriptor("name", "Everyday")


def test_pick_named_prefers_the_conversations_world_and_needs_a_descriptor() -> None:
    held = {"account:ACC-0003": frozenset({7}), "customer:CUS-1": frozenset({7})}
    belongs = Belonging.of(held, [("customer", "CUS-1")], {})
    for seed in range(5):
        named = pick_named(find_key(ACCOUNTS, "account_id"), _pick(belongs=belongs),
                           random.Random(seed))
        assert named is not None and named.value == "ACC-0003"
    twins = {"accounts": [{"account_id": "A-01", "name": "Same"}, {"account_id": "A-02", "name": "Same"}]}
    assert pick_named(find_key(twins, "account_id"), _pick(), random.Random(0)) is None
    assert pick_named(find_key(ACCOUNTS, "account_id"), _pick(json_type="integer"),
                      random.Random(0)) is None


# -- plan_values ----------------------------------------------------------------------------

def test_date_format_from_the_declaration_only() -> None:
    assert date_format({"type": "string", "format": "date"}) == "date"
    assert date_format({"type": "string", "format": "date-time"}) == "datetime"
    clock = {"type": "string", "pattern": "^([01]\\d|2[0-3]):[0-5]\\d$"}
    assert date_format({**clock, "x-format": "time"}) == "time"  # prove.env.types.clock
    assert date_format(clock) is None  # a pattern alone declares nothing
    assert date_format({"type": "string"}) is None


def test_date_value_ahead_of_now_behind_when_past_and_ends_after_start() -> None:
    now = "2026-03-16T09:00"
    for seed in range(10):
        ahead = date_value("date", "check_in", now, {}, random.Random(seed))
        behind = date_value("date", "since", now, {}, random.Random(seed), past=True)
        assert "2026-03-17" <= ahead <= "2026-03-28" and "2026-03-05" <= behind <= "2026-03-15"
        end = date_value("date", "check_out", now, {"check_in": "2026-04-01"}, random.Random(seed),
                         role="return")  # the declared role, not the name, makes it an end
        assert "2026-04-02" <= end <= "2026-04-04"
        meeting = date_value("datetime", "arg1", now, {"arg0": "2026-04-01T10:00"}, random.Random(seed),
                             role="end")
        assert meeting in ("2026-04-01T11:00", "2026-04-01T12:00")
        start = date_value("datetime", "start_time", now, {}, random.Random(seed))
        assert 9 <= datetime.fromisoformat(start).hour < 17
        hhmm = date_value("time", "at", now, {}, random.Random(seed))
        assert 7 <= int(hhmm[:2]) < 22 and hhmm[3:] in ("00", "15", "30", "45")


def test_number_stays_within_the_schemas_bounds() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        assert 0 < number("money", {"exclusiveMinimum": 0, "maximum": 30}, rng, False) <= 30
        assert number("rating", {"minimum": 1, "maximum": 5}, rng, True) in range(1, 6)
        assert number(None, {"exclusiveMinimum": 3}, rng, True) == 4  # no stock value fits
        assert number(None, {"minimum": 10, "maximum": 5}, rng, True) == 5
    with pytest.raises(ValueError, match="number kind must be one of money, percent"):
        number("amount", {}, random.Random(0), False)  # a kind, never a parameter's name


def _ctx() -> SamplingContext:
    return SamplingContext(values={kind_key("account"): [("ACC-0001", 0), ("ACC-0002", 0),
                                                          ("ACC-0003", 0)]},
                           now={"banking": "2026-03-16T09:00"},
                           attrs={"ACC-0002": frozenset({"ACC-0002", "frozen"})})


def test_user_value_draws_an_id_other_than_the_calls_others(registry: Registry) -> None:
    spec = registry.tool("transfer_funds")
    for seed in range(8):
        got = user_value(spec, "to_account_id", _ctx(), random.Random(seed),
                         {"from_account_id": "ACC-0001"}, params=ToolParams())
        assert got is not None and got.kind == "id" and got.value in ("ACC-0002", "ACC-0003")


def test_user_value_follows_what_errors_taught(registry: Registry) -> None:
    spec = registry.tool("get_balance")
    for seed in range(5):
        got = user_value(spec, "account_id", _ctx(), random.Random(seed), {},
                         Prefer(wanted=frozenset({"frozen"})))
        assert got is not None and got.value == "ACC-0002"
    belongs = Belonging.of({"customer:C-1": frozenset({4}), "account:ACC-0007": frozenset({4})},
                           [("customer", "C-1")], {})
    got = user_value(spec, "account_id", _ctx(), random.Random(0), {}, Prefer(belongs=belongs))
    assert got is not None and got.value == "ACC-0007"  # linked by the state, though not probed


def test_user_value_without_candidates_uses_the_declared_example(registry: Registry) -> None:
    # AccountId = entity_id("account", ..., example="ACC-0003"); a role without one gives nothing
    got = user_value(registry.tool("get_balance"), "account_id", SamplingContext(),
                     random.Random(0), {})
    assert got is not None and (got.value, got.kind) == ("ACC-0003", "id")
    assert user_value(registry.tool("transfer_funds"), "from_account_id", SamplingContext(),
                      random.Random(0), {}) is None
    # a sensitive value with a declared example (crm Email: example="ana.silva@acme.com") uses it
    crm = load_registry().subset(["crm"])
    got = user_value(crm.tool("create_crm_contact"), "email", SamplingContext(), random.Random(0), {})
    assert got is not None and (got.value, got.kind) == ("ana.silva@acme.com", "id")
    assert user_value(crm.tool("update_crm_contact"), "email", SamplingContext(),
                      random.Random(0), {}) is None  # no example declared there


def test_user_value_enum_number_and_date(registry: Registry) -> None:
    spec = registry.tool("list_bank_transactions")
    enum = user_value(spec, "category", _ctx(), random.Random(0), {})
    assert enum is not None and enum.kind == "enum" and enum.value in (
        "groceries", "dining", "travel", "utilities", "salary", "rent", "shopping", "health",
        "transfer", "other") and enum.words
    amount = user_value(spec, "min_amount", _ctx(), random.Random(0), {})
    assert amount is not None and amount.kind == "number" and amount.value >= 0
    since = user_value(spec, "since", _ctx(), random.Random(0), {}, Prefer(past=True))
    assert since is not None and since.kind == "value" and since.value < "2026-03-16"


# -- plan_errors ----------------------------------------------------------------------------

def _detail(**facts: Any) -> dict[str, Any]:
    """A hub error detail (prove.env.errors.ToolError.detail_for) with `facts` filled in."""
    return {"reason": "invalid", "params": [], "rejected_params": [], "rejected": [], "choices": [],
            "wanted": [], **facts}


def test_offered_gives_choices_of_the_same_shape_to_the_named_parameters() -> None:
    detail = _detail(params=["branch"], rejected_params=["branch"], rejected=["feature"],
                     choices=["main", "dev", "release", "feature"])
    assert offered(detail, {"branch": "feature", "repo": "REPO-0001"}) == {
        "branch": ["main", "dev", "release"]}  # the refused value left out
    detail = _detail(rejected_params=["vehicle_id"], choices=["VEH-0003", "VEH-0007", "USR-0001"])
    assert offered(detail, {"vehicle_id": "VEH-0001", "user_id": "USR-0001"}) == {
        "vehicle_id": ["VEH-0003", "VEH-0007"]}  # no name: the rejected one; ids of its kind only


def test_offered_prefers_named_parameters_and_skips_other_shapes_and_names() -> None:
    # "pull request #9 not found in 'repo' (parameter 'number')": the choices are for number
    detail = _detail(params=["number"], rejected_params=["repo"], choices=[3, 5])
    assert offered(detail, {"repo": "acme/app", "number": 9}) == {"number": [3, 5]}
    holders = _detail(rejected_params=["account_id"], choices=["USR-0001", "USR-0002"])
    assert offered(holders, {"account_id": "ACC-0001"}) == {}
    tools = _detail(reason="unknown_argument", params=["acount_id"], choices=["account_id"])
    assert offered(tools, {"acount_id": "ACC-0001"}) == {}  # parameter names are not values


def test_same_shape() -> None:
    assert same_shape("ACC-0001", "ACC-0093")
    assert not same_shape("ACC-0001", "USR-0001") and not same_shape("ACC-0001", "main")
    assert same_shape("a@x.io", "b@y.io") and not same_shape("a@x.io", "main")


def test_learn_pins_offered_values_and_redraws_only_those(registry: Registry) -> None:
    lessons = Lessons()
    args = {"account_id": "ACC-0001"}
    detail = _detail(reason="state", params=["account_id"], rejected=["ACC-0001"],
                     rejected_params=["account_id"], choices=["ACC-0002", "ACC-0005"])
    assert learn(detail, registry.tool("get_balance"), args, lessons, random.Random(0)) == {
        "account_id"}
    assert lessons.pinned == {"account_id": ["ACC-0002", "ACC-0005"]}
    assert lessons.tried == {} and not lessons.past


def test_learn_rejects_values_and_reads_time_and_states(registry: Registry) -> None:
    lessons = Lessons()
    args = {"account_id": "ACC-0001", "since": "2026-04-01"}
    detail = _detail(reason="future", rejected=["2026-04-01"], rejected_params=["since"],
                     wanted=["open", "pending"])
    redraw = learn(detail, registry.tool("list_bank_transactions"), args, lessons, random.Random(0))
    assert redraw == {"since"}
    assert lessons.tried == {"since": {repr("2026-04-01")}}
    assert lessons.past and lessons.wanted == {"open", "pending"}
    assert learn(None, registry.tool("get_balance"), args, Lessons(), random.Random(0)) is None


def test_learn_forces_a_parameter_the_error_asks_for(registry: Registry) -> None:
    lessons = Lessons()
    detail = _detail(reason="missing", params=["category", "min_amount"])
    assert learn(detail, registry.tool("list_bank_transactions"), {"account_id": "ACC-0001"},
                 lessons, random.Random(0)) is None
    assert len(lessons.forced) == 1 and lessons.forced <= {"category", "min_amount"}
    # paging parameters are never forced, nor names the tool does not take
    other = Lessons()
    learn(_detail(reason="missing", params=["offset", "min_amounts"]),
          registry.tool("list_bank_transactions"), {"account_id": "ACC-0001"}, other,
          random.Random(0))
    assert other.forced == set()


def test_repair_call_reads_the_detail_not_the_message() -> None:
    intended = {"name": "list_bank_transactions",
                "arguments": {"account_id": "ACC-0001", "category": "dining"}}
    def failed(name: str, args: dict[str, Any], **facts: Any) -> dict[str, Any]:
        return {"name": name, "arguments": args, "error": "whatever the words", "detail": _detail(**facts)}
    fixed = repair_call(failed("list_bank_transaction", {"account_id": "ACC-0001"},
                               reason="unknown_tool", choices=["list_bank_transactions"]), intended)
    assert fixed["name"] == "list_bank_transactions"
    fixed = repair_call(failed(intended["name"], {"category": "dining"}, reason="missing",
                               params=["account_id"]), intended)
    assert fixed["arguments"] == {"category": "dining", "account_id": "ACC-0001"}
    fixed = repair_call(failed(intended["name"], {"account_id": "ACC-0001", "category": "Dining out"},
                               params=["category"], choices=["groceries", "dining"]), intended)
    assert fixed["arguments"]["category"] == "dining"  # the offered value closest to what was sent
    fixed = repair_call(failed(intended["name"], {"account_id": "ACC-0002", "category": "dining"},
                               reason="not_found", params=["account_id"]), intended)
    assert fixed["arguments"]["account_id"] == "ACC-0001"
    nothing = failed(intended["name"], {"account_id": "ACC-0002"}, reason="limit")
    assert repair_call(nothing, intended) == intended  # names nothing to fix: the intended call


# -- planner --------------------------------------------------------------------------------

def test_turn_calls_put_each_calls_lookups_first() -> None:
    look = Planned(0, "list_accounts", {}, [], intent="lookup")
    first = Planned(0, "get_balance", {"account_id": "ACC-1"}, [], lookups={"account_id": look})
    second = Planned(1, "list_bank_transactions", {"account_id": "ACC-1"}, [])
    assert [p.tool for p in turn_calls([first, second])] == [
        "list_accounts", "get_balance", "list_bank_transactions"]


def test_a_draft_keeps_enum_words_only_for_enums() -> None:
    draft = Draft()
    draft.add(Mention("status", "enum", "frozen", {"words": "on hold"}))
    draft.add(Mention("account_id", "named", "ACC-1", {"descr_field": "name", "descr": "Everyday"}))
    draft.add(Mention("note", "text", "hi", {}))
    assert draft.args == {"status": "frozen", "account_id": "ACC-1", "note": "hi"}
    assert draft.words == {"status": "on hold"}
    assert [m.param for m in draft.mentions] == ["status", "account_id", "note"]


def test_a_thing_a_later_request_took_is_that_thing_not_the_listings_word_for_it() -> None:
    """"I need to call off the placed one" then "Is the driver on the way with the placed order?"
    (the order cancelled a turn before): a value fed from a listing that a step after the listing
    already passed is referred to as the one last dealt with, whatever the listing called it."""
    from types import SimpleNamespace

    listing = Planned(0, "list_food_orders", {}, [], result={"orders": [{"order_id": "FOD-0057"}]})
    cancel = Planned(1, "cancel_food_order", {"order_id": "FOD-0057", "reason": "wrong_address"}, [])
    tag = Planned(2, "tag_orders", {"order_ids": ["FOD-0061"]}, [])
    planner = SimpleNamespace(by_step={0: listing, 1: cancel, 2: tag})
    assert Planner._named_since(planner, 0, "FOD-0057")  # type: ignore[arg-type]
    assert Planner._named_since(planner, 0, "FOD-0061")  # inside a list of ids too
    assert not Planner._named_since(planner, 1, "FOD-0057")  # the cancel is the listing itself or before
    assert not Planner._named_since(planner, 0, "FOD-0062")
