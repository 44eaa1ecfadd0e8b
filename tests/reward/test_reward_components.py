"""Each reward component on hand-built cases, with the arithmetic shown."""

from __future__ import annotations

import pytest
from reward_strategies import TOOLS, deep, executed, fn

from prove.reward import PROVE, RewardConfig, normalise_calls, normalise_ground_truth, score_turn
from prove.reward import components as C
from prove.reward.schema import tool_table
from prove.reward.values import values_match

TABLE = tool_table(TOOLS)


def call(name: str, ok: bool | None = True, **arguments: object) -> dict:
    out: dict = {"name": name, "arguments": arguments}
    if ok is not None:
        out["ok"] = ok
    return out


# 1. validity -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("logged", "thirds"),
    [
        (call("get_balance", account_id="A-1"), 3),  # name, arguments, execution
        (call("get_balance", ok=False, account_id="A-1"), 2),  # failed live
        (call("get_balance", ok=None, account_id="A-1"), 2),  # outcome unknown (text fallback)
        (call("get_balance", account_id=7), 2),  # wrong type
        (call("get_balance", account="A-1"), 2),  # unknown key and required key missing
        (call("get_balance", account_id="A-1", extra=1), 2),  # unknown key
        (call("set_card_status", card_id="C", status="frozen"), 2),  # not in the enum
        (call("transfer_funds", from_account_id="A", to_account_id="B", amount=0), 2),  # bound
        (call("transfer_funds", from_account_id="A", to_account_id="B", amount=True), 2),  # bool
        (call("list_bank_transactions", account_id="A", limit=3.0, since=None), 3),  # 3.0 is integer
        (call("list_bank_transactions", account_id="A", limit=2.5), 2),
        (call("tag_note", note_id="N", tags=["a", 1]), 2),  # array item type
        ({"name": "get_balance", "arguments": "not json", "ok": True}, 2),  # malformed arguments
        ({"name": "get_time", "ok": True}, 3),  # absent arguments of a no-argument tool
        (call("no_such_tool", account_id="A-1"), 1),  # hallucinated name: only execution
        (call("no_such_tool", ok=False), 0),
        ("<tool_call>{garbage", 0),  # not a call object at all
    ],
)
def test_validity_thirds_for_one_call(logged: object, thirds: int) -> None:
    assert C.validity(normalise_calls([logged]), TABLE) == pytest.approx(thirds / 3)


def test_validity_is_the_mean_over_calls_and_zero_without_calls() -> None:
    calls = normalise_calls([call("get_balance", account_id="A"), call("nope", ok=False)])
    assert C.validity(calls, TABLE) == pytest.approx((3 + 0) / 6)
    assert C.validity([], TABLE) == 0.0


def test_validity_follows_pydantic_refs_optional_and_sets() -> None:
    pydantic = pytest.importorskip("pydantic")
    from enum import Enum
    from typing import Literal

    class Colour(str, Enum):
        red = "red"
        blue = "blue"

    class Args(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        colour: Colour
        size: Literal["s", "m"] = "s"
        labels: set[str] = set()
        note: str | None = None

    tools = [fn("paint", {}, [])]
    tools[0]["function"]["parameters"] = Args.model_json_schema()
    table = tool_table(tools)
    good = normalise_calls([call("paint", colour="red", labels=["x", "y"], note=None)])
    bad = normalise_calls([call("paint", colour="green"), call("paint", colour="red", size="xl"),
                           call("paint", colour="red", note=3)])
    assert C.validity(good, table) == 1.0
    assert C.validity(bad, table) == pytest.approx(2 / 3)
    assert table.get("paint").param_schema("labels") == {"uniqueItems": True}


# 2. coverage -------------------------------------------------------------------------------

CHAIN = {  # look up, then transfer, then check: 0 -> 1 -> 2
    "calls": [
        {"name": "get_balance", "arguments": {"account_id": "A"}},
        {"name": "transfer_funds",
         "arguments": {"from_account_id": "A", "to_account_id": "B", "amount": 50}},
        {"name": "list_bank_transactions", "arguments": {"account_id": "A"}},
    ],
    "depends_on": [[0, 1], [1, 2]],
}


def test_coverage_counts_steps_completed_in_dependency_order() -> None:
    g0, g1, g2 = CHAIN["calls"]
    assert score_turn(executed([g0, g1, g2]), CHAIN, TOOLS)["coverage"] == 1.0
    # transfer before the balance check: it cannot cover step 1, so 2 loses its predecessor too
    assert score_turn(executed([g1, g0, g2]), CHAIN, TOOLS)["coverage"] == pytest.approx(1 / 3)
    assert score_turn(executed([g2, g1, g0]), CHAIN, TOOLS)["coverage"] == pytest.approx(1 / 3)
    # a later repeat of the transfer completes the chain: 3 of 3
    assert score_turn(executed([g1, g0, g1, g2]), CHAIN, TOOLS)["coverage"] == 1.0


def test_coverage_needs_name_and_every_ground_truth_key_but_not_the_values() -> None:
    gt = {"calls": [CHAIN["calls"][1]], "depends_on": []}
    wrong_values = call("transfer_funds", from_account_id="X", to_account_id="Y", amount=1,
                        memo="extra keys are fine")
    missing_key = call("transfer_funds", from_account_id="A", to_account_id="B")
    assert score_turn([wrong_values], gt, TOOLS)["coverage"] == 1.0
    assert score_turn([wrong_values], gt, TOOLS)["arg_match"] == 0.0
    assert score_turn([missing_key], gt, TOOLS)["coverage"] == 0.0


def test_a_failed_execution_does_not_complete_its_step_but_an_unknown_outcome_does() -> None:
    gt = {"calls": [CHAIN["calls"][0]], "depends_on": []}
    assert score_turn(executed(gt["calls"], ok=False), gt, TOOLS)["coverage"] == 0.0
    unknown = [dict(gt["calls"][0])]
    assert score_turn(unknown, gt, TOOLS)["coverage"] == 1.0
    lenient = RewardConfig(coverage_requires_success=False)
    assert score_turn(executed(gt["calls"], ok=False), gt, TOOLS, lenient)["coverage"] == 1.0


def test_matching_is_the_largest_not_the_greedy_one() -> None:
    # steps: a0 needs key account_id; a1 needs account_id + limit. Call p0 fits both, p1 only a0.
    gt = {"calls": [{"name": "list_bank_transactions", "arguments": {"account_id": "A"}},
                    {"name": "list_bank_transactions", "arguments": {"account_id": "A", "limit": 5}}],
          "depends_on": []}
    p0 = call("list_bank_transactions", account_id="A", limit=5)
    p1 = call("list_bank_transactions", account_id="A")
    result = score_turn([p0, p1], gt, TOOLS)
    assert result["n_matched"] == 2  # p0 -> a1, p1 -> a0; greedy p0 -> a0 would leave a1 open
    assert result["arg_match"] == 1.0


def test_among_largest_matchings_the_best_argument_values_win() -> None:
    gt = {"calls": [{"name": "get_balance", "arguments": {"account_id": "A"}}], "depends_on": []}
    result = score_turn([call("get_balance", account_id="Z"), call("get_balance", account_id="A")],
                        gt, TOOLS)
    assert (result["coverage"], result["arg_match"]) == (1.0, 1.0)


def test_greedy_fallback_beyond_the_search_budget_is_a_valid_lower_bound() -> None:
    calls = normalise_calls([call("list_bank_transactions", account_id="A", limit=5),
                             call("list_bank_transactions", account_id="A")])
    gt = normalise_ground_truth({"calls": [
        {"name": "list_bank_transactions", "arguments": {"account_id": "A"}},
        {"name": "list_bank_transactions", "arguments": {"account_id": "A", "limit": 5}}]})
    options = C.compatible_pairs(calls, gt, TABLE, PROVE)
    assert C.best_matching(options, gt.need, budget=1 << 17)[0] == 2
    assert C.best_matching(options, gt.need, budget=0)[0] == 1  # greedy: p0 takes a0 first


def test_huge_turns_use_the_greedy_search_and_stay_fast() -> None:
    gt = {"calls": [{"name": "get_balance", "arguments": {"account_id": str(i)}}
                    for i in range(40)], "depends_on": [[i, i + 1] for i in range(39)]}
    result = score_turn(executed(gt["calls"] * 3), gt, TOOLS)
    assert result["coverage"] == 1.0 and result["arg_match"] == 1.0


# 3. adaptive efficiency --------------------------------------------------------------------


def test_budget_and_efficiency_arithmetic() -> None:
    assert C.budget(1, 0.5) == 2  # 1 + ceil(0.5)
    assert C.budget(4, 0.5) == 6  # 4 + 2
    assert C.budget(5, 0.5) == 8  # 5 + ceil(2.5)
    assert C.budget(10, 0.7) == 17  # 10 + 7, although 10 * 0.7 = 7.000000000000001 in floats
    assert C.budget(3, 0.0) == 3
    assert C.efficiency(3, 2, 0.5) == 1.0  # B = 3
    assert C.efficiency(4, 2, 0.5) == 0.5  # one over: 1 - 1/2
    assert C.efficiency(5, 2, 0.5) == 0.0  # two over: 1 - 2/2
    assert C.efficiency(9, 2, 0.5) == 0.0
    assert C.efficiency(4, 3, 0.0) == pytest.approx(2 / 3)  # tight budget B = 3: 1 - 1/3


# 4. tool-name signal -----------------------------------------------------------------------


def test_name_signal_is_a_multiset_overlap_over_the_larger_count() -> None:
    assert C.name_signal(["a", "b", "b", "c"], ["a", "a", "b"]) == 2 / 4  # a once, b once
    assert C.name_signal(["a", "a"], ["a", "a", "b"]) == 2 / 3
    assert C.name_signal(["a", "b", "c", "d", "e"], ["a"]) == 1 / 5  # breadth does not pay
    assert C.name_signal([], ["a"]) == 0.0
    assert C.name_signal([], []) == 1.0


# 5. argument-value match -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gt", "pred", "schema", "match"),
    [
        ("New York", "  new   YORK ", None, True),  # whitespace and case
        ("New York", "Newark", None, False),
        (100, 100.0, None, True),
        (100, "100", None, True),  # numeric string
        ("100.50", 100.5, None, True),
        (100.0, 100.0000001, None, True),  # within rel_tol 1e-6
        (100.0, 100.01, None, False),
        (1, True, None, False),  # bool is not a number
        (True, 1, None, False),
        (None, None, None, True),
        (None, "", None, False),
        (["a", "b"], ["b", "a"], None, False),  # ordered list
        (["a", "b"], ["B", " a"], {"uniqueItems": True}, True),  # a set
        (["a", "a"], ["a", "b"], {"uniqueItems": True}, False),
        ({"x": 1, "y": ["p"]}, {"y": ["P"], "x": 1.0}, None, True),
        ({"x": 1}, {"x": 1, "y": 2}, None, False),
        (10**400, 10**400, None, True),  # exact for ints too large for a float
        (10**400, 1e300, None, False),
        (deep(100), deep(100), None, False),  # beyond MAX_VALUE_DEPTH: no match, no crash
    ],
)
def test_value_normalisation_rules(gt: object, pred: object, schema: object, match: bool) -> None:
    assert values_match(gt, pred, schema, PROVE) is match


def test_string_and_numeric_string_rules_can_be_switched_off() -> None:
    strict = RewardConfig(normalise_strings=False, numeric_strings=False)
    assert not values_match("New York", "new york", None, strict)
    assert not values_match(100, "100", None, strict)


def test_arg_match_is_the_reproduced_share_over_matched_pairs_divided_by_n_g() -> None:
    gt = {"calls": [
        {"name": "transfer_funds",
         "arguments": {"from_account_id": "A", "to_account_id": "B", "amount": 50}},
        {"name": "get_balance", "arguments": {"account_id": "B"}},
    ], "depends_on": []}
    pred = [call("transfer_funds", from_account_id="A", to_account_id="C", amount="50.00")]
    result = score_turn(pred, gt, TOOLS)
    assert result["coverage"] == 1 / 2
    assert result["arg_match"] == pytest.approx((2 / 3) / 2)  # 2 of 3 values, 1 of 2 steps


def test_uniqueitems_lists_match_in_any_order_through_the_tool_schema() -> None:
    gt = {"calls": [{"name": "tag_note", "arguments": {"note_id": "N", "tags": ["x", "y"]}},
                    {"name": "plan_route", "arguments": {"stops": ["x", "y"]}}]}
    pred = executed([{"name": "tag_note", "arguments": {"note_id": "N", "tags": ["y", "x"]}},
                     {"name": "plan_route", "arguments": {"stops": ["y", "x"]}}])
    result = score_turn(pred, gt, TOOLS)
    assert result["arg_match"] == pytest.approx((1 + 0) / 2)  # stops is an ordered list


# composition -------------------------------------------------------------------------------


def test_score_is_the_weighted_mean_of_the_reported_components() -> None:
    g0, g1, g2 = CHAIN["calls"]
    pred = executed([g1, g0, g2]) + [call("nope", ok=False)]
    result = score_turn(pred, CHAIN, TOOLS)
    # validity (3+3+3+0)/12 = .75; coverage 1/3; B = 3 + 2 = 5 so efficiency 1; name 3/4;
    # args: only step 0 is matched, with all its values right: 1/3
    assert result["validity"] == pytest.approx(0.75)
    assert result["coverage"] == pytest.approx(1 / 3)
    assert result["efficiency"] == 1.0
    assert result["name_signal"] == pytest.approx(3 / 4)
    assert result["arg_match"] == pytest.approx(1 / 3)
    expected = 0.1 * 0.75 + 0.3 / 3 + 0.2 * 1.0 + 0.2 * 0.75 + 0.2 / 3
    assert result["score"] == pytest.approx(expected)
    only_validity = RewardConfig(w_validity=1, w_coverage=0, w_efficiency=0, w_name=0, w_args=0)
    assert score_turn(pred, CHAIN, TOOLS, only_validity)["score"] == pytest.approx(0.75)


def test_config_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        RewardConfig(w_coverage=-1)
    with pytest.raises(ValueError):
        RewardConfig(w_validity=0, w_coverage=0, w_efficiency=0, w_name=0, w_args=0)
    with pytest.raises(ValueError):
        RewardConfig(beta=float("nan"))
