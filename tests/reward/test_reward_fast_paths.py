"""The reward's caches and fast paths agree with the plain definitions they stand in for."""

from __future__ import annotations

import copy
import gc
import json
import weakref
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from reward_strategies import TOOLS, executed, ground_truths, json_like, valid_call

from prove.calls import call_fields, calls_fields
from prove.reward import PROVE, normalise_calls, normalise_ground_truth, score_turn
from prove.reward import components as C
from prove.reward.schema import compile_value, object_check, tool_table
from prove.reward.values import values_match

FAST = settings(max_examples=200, deadline=None)
GT = {"calls": [{"name": "get_balance", "arguments": {"account_id": "A"}},
                {"name": "tag_note", "arguments": {"note_id": "N", "tags": ["x", "y"]}}],
      "depends_on": [[0, 1]]}


class CallList(list):
    """A bare list of ground-truth calls that can be weakly referenced."""


def test_a_ground_truth_object_is_normalised_once_and_its_copies_alike() -> None:
    gt = copy.deepcopy(GT)
    first = normalise_ground_truth(gt)
    assert normalise_ground_truth(gt) is first  # the rollouts of a prompt share the work
    assert normalise_ground_truth(copy.deepcopy(gt)) == first
    assert normalise_ground_truth(json.dumps(gt)) == first
    assert normalise_ground_truth(first) is first


def test_the_ground_truth_cache_holds_its_objects_so_an_id_is_never_reused() -> None:
    gt = CallList(copy.deepcopy(GT["calls"]))
    alive = weakref.ref(gt)
    expected = normalise_ground_truth(list(gt))
    assert normalise_ground_truth(gt) == expected
    del gt
    gc.collect()
    assert alive() is not None


def test_scores_are_the_same_from_a_cold_cache_a_warm_one_and_after_eviction() -> None:
    gt, pred = copy.deepcopy(GT), executed(GT["calls"])
    pred[1]["arguments"] = {"note_id": "N", "tags": ["y", "X"]}
    cold = score_turn(pred, gt, TOOLS)
    assert score_turn(pred, gt, TOOLS) == cold
    for i in range(1100):  # more ground truths than the cache keeps
        normalise_ground_truth({"calls": [{"name": "get_time", "arguments": {"i": i}}]})
    assert score_turn(pred, gt, TOOLS) == cold
    assert score_turn(pred, copy.deepcopy(gt), copy.deepcopy(TOOLS)) == cold


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
