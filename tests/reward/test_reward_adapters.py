"""VERL and TRL adapters, the hermes parser, ablation configs and empty-ground-truth turns."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import fields

import pytest
from reward_strategies import TOOLS, deep, executed

from prove.reward import (
    ABLATIONS,
    KEYS,
    PROVE,
    RewardConfig,
    compute_score,
    get_config,
    make_trl_reward,
    parse_tool_calls,
    score_batch,
    score_turn,
)

GT = {
    "calls": [
        {"name": "get_balance", "arguments": {"account_id": "A"}},
        {"name": "transfer_funds",
         "arguments": {"from_account_id": "A", "to_account_id": "B", "amount": 50}},
    ],
    "depends_on": [[0, 1]],
}


def hermes(*calls: dict) -> str:
    return "".join(f"thinking...\n<tool_call>\n{json.dumps(c)}\n</tool_call>\n" for c in calls)


# hermes parsing ----------------------------------------------------------------------------


def test_parse_tool_calls_keeps_order_and_counts_unparseable_blocks() -> None:
    text = (hermes(*GT["calls"]) + "<tool_call>{not json}</tool_call>"
            + '<tool_call>{"name": "get_time", "arguments": "{}", "ok": true}</tool_call>'
            + "<tool_call>[1, 2]</tool_call><tool_call>" + '{"name": "cut off')
    calls = parse_tool_calls(text)
    assert [c.name for c in calls] == ["get_balance", "transfer_funds", "", "get_time", "", ""]
    assert calls[1].arguments["amount"] == 50
    assert calls[3].arguments == {} and calls[3].well_formed  # OpenAI-style string arguments
    assert all(c.ok is None for c in calls)  # text never carries a live outcome, whatever it says
    assert parse_tool_calls("no calls here") == []
    assert parse_tool_calls("<tool_call>" + "[" * 100_000 + "</tool_call>")[0].name == ""


# VERL --------------------------------------------------------------------------------------


def test_verl_reads_the_rollout_tool_log_from_extra_info() -> None:
    log = executed(GT["calls"])
    result = compute_score("prove/banking", "irrelevant text", GT,
                           {"tools": TOOLS, "tool_calls": log, "seed": 3, "servers": ["banking"]})
    assert result == score_turn(log, GT, TOOLS) and result["score"] == 1.0


def test_verl_falls_back_to_tool_call_blocks_without_live_outcomes() -> None:
    result = compute_score("prove", hermes(*GT["calls"]), GT, {"tools": TOOLS})
    assert (result["coverage"], result["arg_match"], result["name_signal"]) == (1.0, 1.0, 1.0)
    assert result["validity"] == pytest.approx(2 / 3)  # name + arguments; execution unknown
    assert result["score"] == pytest.approx(1 - 0.1 / 3)


def test_verl_accepts_json_strings_for_ground_truth_tools_and_log() -> None:
    log = executed(GT["calls"])[:1]
    as_dicts = compute_score("prove", "", GT, {"tools": TOOLS, "tool_calls": log})
    as_json = compute_score("prove", "", json.dumps(GT),
                            {"tools": json.dumps(TOOLS), "tool_calls": json.dumps(log)})
    assert as_json == as_dicts and 0 < as_dicts["score"] < 1


def test_verl_empty_log_means_no_call_even_if_the_text_has_blocks() -> None:
    result = compute_score("prove", hermes(*GT["calls"]), GT, {"tools": TOOLS, "tool_calls": []})
    assert result["n_pred"] == 0 and result["coverage"] == 0.0


def test_verl_keys_are_identical_for_every_sample_and_config_is_selectable() -> None:
    samples = [(hermes(*GT["calls"]), GT, None), ("", {"calls": []}, {"tool_calls": []}),
               ("<tool_call>junk", "not json", {"tools": "[broken"}), (None, None, 42)]
    for text, gt, info in samples:
        assert tuple(compute_score("x", text, gt, info)) == KEYS
    padded = {"tools": TOOLS, "tool_calls": executed(GT["calls"] + GT["calls"][:1])}
    assert compute_score("x", "", GT, padded, config="no_name")["score"] == 1.0
    assert compute_score("x", "", GT, padded)["score"] < 1.0
    with pytest.raises(ValueError, match="unknown reward config"):
        compute_score("x", "", GT, padded, config="typo")


def test_verl_adapter_does_not_import_verl() -> None:
    # In a fresh interpreter: earlier tests in this process (the train chain) import verl themselves.
    probe = "import sys, prove.reward.verl; print(sorted(m for m in sys.modules if m.split('.')[0] == 'verl'))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


# TRL ---------------------------------------------------------------------------------------


def test_trl_reward_scores_text_and_conversational_completions() -> None:
    reward = make_trl_reward()
    text = hermes(*GT["calls"])
    conversational = [
        {"role": "assistant", "content": "",
         "tool_calls": [{"type": "function", "function": {
             "name": c["name"], "arguments": json.dumps(c["arguments"])}} for c in GT["calls"]]},
        {"role": "tool", "content": '<tool_call>{"name": "get_time"}</tool_call> is ignored'},
    ]
    scores = reward(prompts=["p"] * 3, completions=[text, conversational, "I cannot help."],
                    ground_truth=[GT, json.dumps(GT), GT], tools=[TOOLS] * 3, trainer_state=None)
    assert scores[0] == scores[1] == pytest.approx(1 - 0.1 / 3)
    assert scores[2] == pytest.approx(0.2)  # no call: only efficiency (weight 0.2) is earned
    assert reward.__name__ == "prove_prove"
    assert all(isinstance(s, float) for s in scores)


def test_trl_live_log_column_takes_precedence_and_batches_are_checked() -> None:
    log = executed(GT["calls"])
    rows = score_batch(["", ""], [GT, GT], [TOOLS, TOOLS], [log, None])
    assert rows[0]["score"] == 1.0 and rows[1]["n_pred"] == 0
    assert make_trl_reward("recall_only").__name__ == "prove_recall_only"
    with pytest.raises(ValueError, match="one entry per completion"):
        score_batch(["", ""], [GT])


# ablations ---------------------------------------------------------------------------------

WEIGHT_OF = {"no_validity": "w_validity", "no_coverage": "w_coverage",
             "no_efficiency": "w_efficiency", "no_name": "w_name", "no_args": "w_args"}


def changed(config: RewardConfig) -> set[str]:
    return {f.name for f in fields(PROVE) if getattr(config, f.name) != getattr(PROVE, f.name)}


def test_every_ablation_exists_and_changes_only_what_it_says() -> None:
    assert set(ABLATIONS) == {"prove", "recall_only", "beta0", "outcome", *WEIGHT_OF}
    assert get_config(None) is PROVE is get_config("prove")
    for name, weight in WEIGHT_OF.items():
        config = ABLATIONS[name]
        assert changed(config) == {weight} and getattr(config, weight) == 0.0
    assert changed(ABLATIONS["beta0"]) == {"beta"} and ABLATIONS["beta0"].beta == 0.0
    recall = ABLATIONS["recall_only"]
    assert recall.weights == (0.0, 1.0, 0.0, 0.0, 0.0, 0.0)
    assert changed(ABLATIONS["outcome"]) == {"w_outcome"} and ABLATIONS["outcome"].w_outcome > 0
    assert PROVE.w_outcome == 0.0 and not PROVE.needs_state and ABLATIONS["outcome"].needs_state


def test_the_outcome_weighs_nothing_in_proves_reward_and_its_share_under_the_ablation() -> None:
    pred = executed(GT["calls"][:1])  # half the turn: imperfect on every call-based component
    unknown = score_turn(pred, GT, TOOLS)
    for verdict in (True, False):
        known = score_turn(pred, GT, TOOLS, None, verdict)
        assert known["score"] == unknown["score"]  # bit for bit: the paper's numbers are unchanged
        assert known["outcome"] == float(verdict) and known["outcome_known"] == 1
    assert unknown["outcome"] == 0.0 and unknown["outcome_known"] == 0
    cfg = ABLATIONS["outcome"]
    on, off = score_turn(pred, GT, TOOLS, cfg, True), score_turn(pred, GT, TOOLS, cfg, False)
    assert on["score"] - off["score"] == pytest.approx(cfg.w_outcome / sum(cfg.weights))
    with pytest.raises(ValueError, match="expected_effect"):
        score_turn(pred, GT, TOOLS, cfg)  # a config that weighs the state needs the verdict


def test_both_adapters_compare_the_rollouts_effect_with_the_rows() -> None:
    log = executed(GT["calls"])
    info = {"tools": TOOLS, "tool_calls": log, "expected_effect": "e1"}
    assert compute_score("prove", "", GT, {**info, "effect_hash": "e1"})["outcome"] == 1.0
    assert compute_score("prove", "", GT, {**info, "effect_hash": "e2"})["outcome"] == 0.0
    assert compute_score("prove", "", GT, info)["outcome_known"] == 0
    with pytest.raises(ValueError, match="w_outcome"):
        compute_score("prove", "", GT, info, config="outcome")
    rows = score_batch(["", ""], [GT, GT], [TOOLS, TOOLS], [log, log], "outcome", ["e1", "e2"], ["e1", "e1"])
    assert [r["outcome"] for r in rows] == [1.0, 0.0] and rows[0]["score"] > rows[1]["score"]
    reward = make_trl_reward("outcome")
    assert reward(completions=["", ""], ground_truth=[GT, GT], tools=[TOOLS, TOOLS], tool_calls=[log, log],
                  effect_hash=["e1", "e2"], expected_effect=["e1", "e1"]) == [r["score"] for r in rows]


@pytest.mark.parametrize("name", list(WEIGHT_OF))
def test_a_zero_weight_component_is_still_reported_but_does_not_move_the_score(name: str) -> None:
    key = {"no_validity": "validity", "no_coverage": "coverage", "no_efficiency": "efficiency",
           "no_name": "name_signal", "no_args": "arg_match"}[name]
    config = ABLATIONS[name]
    pred = executed(GT["calls"][::-1] + [GT["calls"][0]] * 4) + [{"name": "bad", "ok": False}]
    result = score_turn(pred, GT, TOOLS, config)
    assert 0.0 <= result[key] < 1.0  # the component is imperfect here...
    rest = [k for k in ("validity", "coverage", "efficiency", "name_signal", "arg_match")
            if k != key]
    weights = dict(zip(("validity", "coverage", "efficiency", "name_signal", "arg_match", "outcome"),
                       config.weights, strict=True))
    expected = sum(weights[k] * result[k] for k in rest) / sum(weights[k] for k in rest)
    assert result["score"] == pytest.approx(expected)  # ...and the score is the mean of the rest


def test_beta0_gives_a_tight_budget_and_no_efficiency_removes_the_penalty() -> None:
    pred = executed(GT["calls"] + GT["calls"][:1])  # one extra call
    assert score_turn(pred, GT, TOOLS)["efficiency"] == 1.0  # B = 2 + 1
    assert score_turn(pred, GT, TOOLS, "beta0")["efficiency"] == 0.5  # B = 2: 1 - 1/2
    many = executed(GT["calls"] + GT["calls"][:1] * 6)
    assert score_turn(many, GT, TOOLS, "no_efficiency")["efficiency"] == 0.0
    assert score_turn(many, GT, TOOLS, "no_efficiency")["score"] > score_turn(many, GT, TOOLS)[
        "score"]


def test_without_the_name_signal_padding_inside_the_budget_is_free() -> None:
    padded = executed(GT["calls"] + GT["calls"][:1])
    assert score_turn(padded, GT, TOOLS, "no_name")["score"] == 1.0
    assert score_turn(padded, GT, TOOLS)["score"] < 1.0


# empty ground truth (clarification, abstention) --------------------------------------------


@pytest.mark.parametrize("gt", [{"calls": [], "depends_on": []}, {"calls": []}, [], "[]",
                                {"calls": [{"name": 3}, "junk"]}])
def test_empty_ground_truth_full_score_for_no_call_none_for_calling(gt: object) -> None:
    for config in ABLATIONS:
        silent = score_turn([], gt, TOOLS, config)
        assert silent["score"] == 1.0 and silent["gt_empty"] == 1
        assert all(silent[k] == 1.0 for k in KEYS[1:6])
        calling = score_turn(executed(GT["calls"][:1]), gt, TOOLS, config)
        assert calling["score"] == 0.0 and calling["n_pred"] == 1
    assert compute_score("prove", "Which account do you mean?", gt, {"tools": TOOLS})[
        "score"] == 1.0
    assert compute_score("prove", hermes(GT["calls"][0]), gt, {"tools": TOOLS})["score"] == 0.0


def test_pathological_inputs_are_mapped_not_raised() -> None:
    nasty = [
        {"name": "get_balance", "arguments": {"account_id": deep(5000)}, "ok": True},
        {"name": "get_balance", "arguments": {"account_id": "x" * 1_000_000}, "ok": "yes"},
        {"name": ["get_balance"], "arguments": [1, 2], "ok": 1},
        {"function": {"name": "get_balance", "arguments": '{"account_id": "A"}'}, "ok": True},
        {"function": "get_balance"},
        {"name": "get_balance", "arguments": {1: "A", None: 2}},
        None, 3.5, float("nan"), [], {},
    ]
    gt = {"calls": GT["calls"] + [{"name": "get_balance", "arguments": {"account_id": deep(5000)}}],
          "depends_on": [[0, 1], [1, 0], [5, 9], ["0", 1], [True, 1], [0], None, [-1, 1]]}
    result = score_turn(nasty, gt, [TOOLS[0], {"function": {"name": 7}}, "junk", None, deep(3000)])
    assert tuple(result) == KEYS and 0.0 <= result["score"] <= 1.0
    assert result["n_pred"] == len(nasty) and result["n_gt"] == 3
    # steps 0 and 2 (get_balance) are covered; 1 is not: no transfer call. Only the OpenAI-form
    # call reproduces a value (step 0's account), the deep value is beyond the depth limit.
    assert (result["n_matched"], result["arg_match"]) == (2, pytest.approx(1 / 3))
