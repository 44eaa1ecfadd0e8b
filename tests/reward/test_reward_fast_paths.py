"""The reward's caches and fast paths agree with the plain definitions they stand in for."""

from __future__ import annotations

import copy
import gc
import json
import weakref
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from reward_strategies import TOOLS, executed, fn, ground_truths, json_like, valid_call

from prove.calls import call_fields, calls_fields
from prove.reward import (
    PROVE,
    normalise_calls,
    normalise_ground_truth,
    prepare_turn,
    score_batch,
    score_turn,
)
from prove.reward import components as C
from prove.reward.schema import compile_value, object_check, tool_table
from prove.reward.values import values_match

FAST = settings(max_examples=200, deadline=None)
GT = {"calls": [{"name": "get_balance", "arguments": {"account_id": "A"}},
                {"name": "tag_note", "arguments": {"note_id": "N", "tags": ["x", "y"]}}],
      "depends_on": [[0, 1]]}


class CallList(list):
    """A bare list of ground-truth calls that can be weakly referenced."""


class ToolList(list):
    """An offered-tools list that can be weakly referenced."""


def test_a_ground_truth_normalises_alike_from_its_object_a_copy_and_its_text() -> None:
    gt = copy.deepcopy(GT)
    first = normalise_ground_truth(gt)
    assert normalise_ground_truth(gt) is first  # cached by value: the rollouts of a row share it
    assert normalise_ground_truth(copy.deepcopy(gt)) == first
    text = json.dumps(gt)
    assert normalise_ground_truth(text) == first
    assert normalise_ground_truth(text) is normalise_ground_truth(text)  # text: cached by value
    assert normalise_ground_truth(first) is first


def test_scoring_keeps_no_reference_to_a_rows_objects() -> None:
    gt, tools = CallList(copy.deepcopy(GT["calls"])), ToolList(copy.deepcopy(TOOLS))
    alive = weakref.ref(gt), weakref.ref(tools)
    score_turn(executed(GT["calls"]), gt, tools)
    score_batch([""], [gt], [tools])
    del gt, tools
    gc.collect()
    assert [ref() for ref in alive] == [None, None]


def test_ground_truths_marshal_cannot_hold_are_normalised_anew_and_are_snapshots() -> None:
    gt = CallList(copy.deepcopy(GT["calls"]))  # a list subclass: no value key, no cache
    first = normalise_ground_truth(gt)
    assert first == normalise_ground_truth(list(gt))
    gt[1]["arguments"]["tags"].append("z")
    assert first.arguments[1]["tags"] == ["x", "y"]
    assert normalise_ground_truth(gt).arguments[1]["tags"] == ["x", "y", "z"]


def test_scores_are_the_same_from_a_cold_cache_a_warm_one_and_after_eviction() -> None:
    gt, pred = copy.deepcopy(GT), executed(GT["calls"])
    pred[1]["arguments"] = {"note_id": "N", "tags": ["y", "X"]}
    cold = score_turn(pred, json.dumps(gt), json.dumps(TOOLS))
    assert score_turn(pred, json.dumps(gt), json.dumps(TOOLS)) == cold
    for i in range(1100):  # more texts than the caches keep
        text = json.dumps({"calls": [{"name": "get_time", "arguments": {"i": i}}]})
        score_turn([], text, json.dumps([fn(f"tool_{i}", {}, [])]))
    assert score_turn(pred, json.dumps(gt), json.dumps(TOOLS)) == cold
    assert score_turn(pred, gt, TOOLS) == cold
    assert score_turn(pred, copy.deepcopy(gt), copy.deepcopy(TOOLS)) == cold


def test_a_row_edited_between_two_calls_scores_as_edited() -> None:
    gt, tools = copy.deepcopy(GT), copy.deepcopy(TOOLS)
    pred = executed(GT["calls"])
    assert score_turn(pred, gt, tools)["score"] == 1.0
    gt["calls"][0]["arguments"]["account_id"] = "B"  # the prediction no longer reproduces it
    assert score_turn(pred, gt, tools)["arg_match"] == 0.5  # (0 + 1) / 2 steps
    gt["calls"][1]["arguments"]["memo"] = "m"  # step 1 now needs a key the call lacks
    assert score_turn(pred, gt, tools)["coverage"] == 0.5
    tools[0]["function"]["parameters"]["properties"]["account_id"] = {"type": "integer"}
    edited = score_turn(pred, gt, tools)
    assert edited["validity"] == 1 - 1 / 6  # get_balance's arguments no longer fit its schema
    assert edited == score_turn(pred, copy.deepcopy(gt), copy.deepcopy(tools))  # as if fresh
    assert score_batch([""], [gt], [tools], [pred])[0] == edited
    del gt["calls"][1]
    assert score_turn(pred, gt, tools)["n_gt"] == 1


def test_a_prepared_turn_is_a_snapshot_that_later_edits_do_not_reach() -> None:
    gt, tools = copy.deepcopy(GT), copy.deepcopy(TOOLS)
    pred = executed(GT["calls"])
    turn = prepare_turn(gt, tools)
    before = score_turn(pred, *turn)
    assert before == score_turn(pred, GT, TOOLS)
    gt["calls"][1]["arguments"]["tags"].append("z")  # nested values are copied too
    gt["depends_on"].clear()
    tools[0]["function"]["parameters"]["properties"]["account_id"]["type"] = "integer"
    tools[4]["function"]["parameters"]["properties"]["tags"]["uniqueItems"] = False
    assert score_turn(pred, *turn) == before
    assert score_turn(pred, *prepare_turn(gt, tools)) != before


def test_a_table_compiles_offered_names_and_answers_none_for_the_rest() -> None:
    table = tool_table(copy.deepcopy(TOOLS))
    spec = table.get("get_balance")
    assert spec is not None and table.get("get_balance") is spec
    assert table.get("no_such_tool") is None and table.get("no_such_tool") is None
    assert "no_such_tool" not in table and len(table) == len(TOOLS)


@FAST
@given(st.lists(json_like | valid_call(), max_size=6))
def test_scoring_reads_the_same_fields_normalise_calls_reports(log: list[Any]) -> None:
    fields = calls_fields(log)
    assert fields == [tuple(c) for c in normalise_calls(log)]
    assert all(type(f) is tuple for f, item in zip(fields, log, strict=True)
               if isinstance(item, dict))  # logged calls: plain tuples, no NamedTuple each
    assert [call_fields(item) for item in log] == fields


_NUMBERS = st.builds(
    lambda typ, bounds: {"type": typ, **bounds},
    st.sampled_from(["number", "integer"]),
    st.dictionaries(st.sampled_from(["minimum", "maximum", "exclusiveMinimum",
                                     "exclusiveMaximum"]),
                    st.integers(-5, 5) | st.floats(-5, 5) | st.just(float("nan")), max_size=3),
)
_ARRAYS = st.builds(
    lambda item, unique: {"type": "array", "items": {"type": item},
                          **({"uniqueItems": True} if unique else {})},
    st.sampled_from(["string", "boolean", "object", "array", "integer"]), st.booleans(),
)
_SCHEMAS = st.one_of(_NUMBERS, _ARRAYS, st.sampled_from([
    {"type": "string"}, {"type": "boolean"}, {"enum": ["a", "b"]}, {"type": "null"}, {},
]))
_VALUES = json_like | st.sampled_from([0, 1, 2.5, -3, 3.0, float("inf"), True, None, ["a"],
                                       [True], [{}], [[1]], ("a",), 10**400])


@FAST
@given(_SCHEMAS, st.booleans(), _VALUES)
def test_inline_argument_checks_accept_exactly_what_the_general_predicate_accepts(
    schema: dict[str, Any], optional: bool, value: Any
) -> None:
    if optional:
        schema = {"anyOf": [schema, {"type": "null"}]}
    check = object_check({"properties": {"x": schema}})[0]
    assert check({"x": value}) == compile_value(schema)(value)


@FAST
@given(st.dictionaries(st.sampled_from(["a", "b", "tags"]), json_like, max_size=3),
       st.dictionaries(st.sampled_from(["a", "b", "tags", "c"]), json_like, max_size=4),
       st.booleans())
def test_the_argument_value_share_is_values_match_key_by_key(
    gt_args: dict[str, Any], pred_args: dict[str, Any], copy_some: bool
) -> None:
    if copy_some:  # equal values, the case the fast paths take
        pred_args = {**copy.deepcopy(gt_args), **{k: v for k, v in pred_args.items() if k == "c"}}
    spec = tool_table(TOOLS).get("tag_note")
    hits = sum(1 for k, v in gt_args.items() if k in pred_args
               and values_match(v, pred_args[k], spec.param_schema(k), PROVE))
    expected = hits / len(gt_args) if gt_args else 1.0
    assert C.pair_value(gt_args, pred_args, spec, PROVE) == expected


@FAST
@given(ground_truths(), st.lists(valid_call(), max_size=8), st.integers(0, 2))
def test_matching_over_the_calls_that_name_a_ground_truth_tool_is_matching_over_all(
    gt: dict[str, Any], pred: list[dict[str, Any]], failed: int
) -> None:
    log = executed(gt["calls"][failed:] + pred)
    normalised, table = normalise_ground_truth(gt), tool_table(TOOLS)
    calls = calls_fields(log)
    relevant = C.call_facts(calls, table, normalised.by_name)[1]
    assert relevant == [c for c in calls if c[0] in normalised.by_name]
    everything = C.compatible_pairs(calls, normalised, table, PROVE)
    assert [o for o in everything if o] == [o for o in C.compatible_pairs(
        relevant, normalised, table, PROVE) if o]
    for budget in (0, 1 << 17):
        assert C.best_matching(everything, normalised.need, budget) == C.best_matching(
            [o for o in everything if o], normalised.need, budget)


def test_schemas_share_a_compiled_spec_only_when_they_are_the_same_json_value() -> None:
    def accepts(enum: list[Any], extra: Any, args: dict[str, Any]) -> bool:
        schema = fn("pick", {"x": {"enum": enum}}, [])
        schema["function"]["parameters"]["additionalProperties"] = extra
        spec = tool_table([schema]).get("pick")
        return spec is not None and spec.accepts(args)

    assert accepts([True], False, {"x": True}) and not accepts([1], False, {"x": True})
    assert accepts([1], False, {"x": 1.0}) and not accepts([True], False, {"x": 1})
    assert accepts([1], True, {"y": 0}) and not accepts([1], 1, {"y": 0})  # only true allows
    odd = fn("odd", {"x": {"type": "string", "description": object()}}, ["x"])  # not JSON
    spec = tool_table([odd]).get("odd")
    assert spec is not None and spec.accepts({"x": "a"}) and not spec.accepts({})


def test_a_cached_spec_does_not_change_with_the_schema_it_was_built_from() -> None:
    schema = fn("pick_one", {"x": {"enum": [{"a": 1}, [1, 2]]}}, ["x"])
    original = copy.deepcopy(schema)
    assert tool_table([schema]).get("pick_one").accepts({"x": {"a": 1}})
    schema["function"]["parameters"]["properties"]["x"]["enum"][0]["a"] = 2  # edited in place
    schema["function"]["parameters"]["properties"]["x"]["enum"][1].append(3)
    spec = tool_table([original]).get("pick_one")  # the original value: the cached spec
    assert spec.accepts({"x": {"a": 1}}) and spec.accepts({"x": [1, 2]})
    assert not spec.accepts({"x": {"a": 2}}) and not spec.accepts({"x": [1, 2, 3]})
    edited = tool_table([schema]).get("pick_one")
    assert edited.accepts({"x": {"a": 2}}) and not edited.accepts({"x": {"a": 1}})
