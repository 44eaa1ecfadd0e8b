"""The reward's incentive properties, as hypothesis property tests named for what they guarantee."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from reward_strategies import (
    TOOLS,
    executed,
    ground_truths,
    json_like,
    linear_extension,
    valid_call,
)

from prove.reward import KEYS, compute_score, score_turn
from prove.reward.compose import COMPONENT_KEYS, COUNT_KEYS

PROPERTY = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def score(pred: Any, gt: Any, config: str = "prove") -> dict[str, Any]:
    return score_turn(pred, gt, TOOLS, config)


@st.composite
def padded(draw: st.DrawFn, gt: dict[str, Any], min_extra: int = 1) -> list[dict[str, Any]]:
    """G executed, with extra valid successful calls inserted anywhere (GT order kept).
    Extras include exact duplicates of ground-truth calls."""
    base = executed(gt["calls"])
    extra_calls = draw(st.lists(valid_call() | st.sampled_from(gt["calls"]),
                                min_size=min_extra, max_size=6))
    pred = list(base)
    for call in executed(extra_calls):
        pred.insert(draw(st.integers(0, len(pred))), call)
    return pred


@PROPERTY
@given(ground_truths(min_size=0))
def test_executed_ground_truth_scores_exactly_the_maximum(gt: dict[str, Any]) -> None:
    result = score(executed(gt["calls"]), gt)
    assert result["score"] == 1.0
    assert all(result[k] == 1.0 for k in ("validity", "coverage", "efficiency", "name_signal",
                                          "arg_match"))


@PROPERTY
@given(st.data(), ground_truths())
def test_padding_never_pays_any_strict_superset_scores_below_ground_truth(
    data: st.DataObject, gt: dict[str, Any]
) -> None:
    pred = data.draw(padded(gt))
    assert score(pred, gt)["score"] < score(executed(gt["calls"]), gt)["score"] == 1.0


@PROPERTY
@given(st.data(), ground_truths())
def test_each_extra_call_strictly_lowers_the_score_inside_and_beyond_the_budget(
    data: st.DataObject, gt: dict[str, Any]
) -> None:
    n_g = len(gt["calls"])
    extras = executed(data.draw(st.lists(valid_call() | st.sampled_from(gt["calls"]),
                                         min_size=2 * n_g + 3, max_size=2 * n_g + 3)))
    pred = executed(gt["calls"])
    scores = [score(pred, gt)["score"]]
    for call in extras:
        pred = pred + [call]
        scores.append(score(pred, gt)["score"])
    assert all(later < earlier for earlier, later in zip(scores, scores[1:], strict=False))
    assert score(pred, gt)["n_pred"] > score(pred, gt)["budget"] + n_g  # went past the budget


@PROPERTY
@given(st.data(), ground_truths(min_size=2, distinct_names=True, min_edges=1))
def test_order_matters_violating_a_dependency_never_beats_respecting_it(
    data: st.DataObject, gt: dict[str, Any]
) -> None:
    n = len(gt["calls"])
    edges = gt["depends_on"]
    order = linear_extension(n, edges, data.draw(st.permutations(range(n))))
    i, j = data.draw(st.sampled_from(edges))
    violating = [v for v in order if v != j]
    violating.insert(violating.index(i), j)  # j now runs before i, which it depends on
    # identical non-ground-truth extras at identical positions in both predictions
    others = [c for c in TOOLS if c["function"]["name"] not in {x["name"] for x in gt["calls"]}]
    extra = executed([{"name": others[0]["function"]["name"], "arguments": {}}]) if others else []
    cut = data.draw(st.integers(0, n))
    respect_pred = executed([gt["calls"][v] for v in order])
    violate_pred = executed([gt["calls"][v] for v in violating])
    respect = score(respect_pred[:cut] + extra + respect_pred[cut:], gt)
    violate = score(violate_pred[:cut] + extra + violate_pred[cut:], gt)
    assert violate["score"] <= respect["score"]
    assert violate["coverage"] < respect["coverage"]


@PROPERTY
@given(st.data(), ground_truths(min_size=1, max_size=5))
def test_progress_pays_adding_a_missing_call_in_place_raises_the_score(
    data: st.DataObject, gt: dict[str, Any]
) -> None:
    n = len(gt["calls"])
    kept = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    assume(not all(kept))
    missing = data.draw(st.sampled_from([k for k in range(n) if not kept[k]]))
    before = [gt["calls"][k] for k in range(n) if kept[k]]
    after = [gt["calls"][k] for k in range(n) if kept[k] or k == missing]
    assert score(executed(after), gt)["score"] > score(executed(before), gt)["score"]


@PROPERTY
@given(json_like, json_like, json_like, json_like)
def test_any_json_like_input_gives_a_bounded_result_with_all_keys(
    pred: Any, gt: Any, tools: Any, noise: Any
) -> None:
    for p, g, t in ((pred, gt, tools), ([pred, noise], {"calls": gt}, [tools]),
                    (pred, {"calls": [gt, noise], "depends_on": tools}, TOOLS)):
        result = score_turn(p, g, t)
        assert tuple(result) == KEYS
        assert 0.0 <= result["score"] <= 1.0
        assert all(0.0 <= result[k] <= 1.0 for k in COMPONENT_KEYS)
        assert all(type(result[k]) is int and result[k] >= 0 for k in COUNT_KEYS)
    verl = compute_score("prove", str(pred), gt, {"tool_calls": pred, "tools": tools})
    assert tuple(verl) == KEYS and 0.0 <= verl["score"] <= 1.0


@PROPERTY
@given(ground_truths(), st.lists(valid_call(), max_size=4), st.integers(0, 3))
def test_recall_only_baseline_is_maximised_by_padding(
    gt: dict[str, Any], attempt: list[dict[str, Any]], seed: int
) -> None:
    """Spraying every offered tool with every argument key, once per ground-truth step, covers
    any G in order: recall-only gives it the maximum, PROVE's reward does not."""
    spray_round = [{"name": t["function"]["name"],
                    "arguments": {k: None for k in t["function"]["parameters"]["properties"]}}
                   for t in TOOLS]
    spray = executed(attempt) + executed(spray_round * len(gt["calls"]))
    assert score(spray, gt, "recall_only")["score"] == 1.0
    assert score(spray, gt, "recall_only")["score"] >= score(executed(attempt), gt,
                                                             "recall_only")["score"]
    assert score(executed(gt["calls"]), gt, "recall_only")["score"] == 1.0  # no preference
    assert score(spray, gt)["score"] < 0.7 < score(executed(gt["calls"]), gt)["score"]


@PROPERTY
@given(st.data(), ground_truths(), st.lists(valid_call(), max_size=4))
def test_recall_only_never_falls_when_calls_are_added(
    data: st.DataObject, gt: dict[str, Any], pred: list[dict[str, Any]]
) -> None:
    base = executed(pred + data.draw(st.lists(st.sampled_from(gt["calls"]), max_size=3)))
    more = list(base)
    for call in executed(data.draw(st.lists(valid_call() | st.sampled_from(gt["calls"]),
                                            min_size=1, max_size=4))):
        more.insert(data.draw(st.integers(0, len(more))), call)
    assert score(more, gt, "recall_only")["score"] >= score(base, gt, "recall_only")["score"]
