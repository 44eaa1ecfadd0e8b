"""The state-verified outcome through VERL's own loop: the episode's effect on the records is read
when a trajectory ends and compared with the row's ``expected_effect``. A correct alternative plan
reaches it (and still pays the paper reward's coverage penalty), the right calls with a wrong value
do not, and an answer with no call leaves the state where the ground truth does. Live servers on
loopback; a scripted policy stands in for vLLM.

    .venv/bin/python -m pytest tests/train/test_train_outcome.py -q
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from train_helpers import banking_rows, need_verl, row_of, run, transfer_pair, unclosed_episodes

pytestmark = pytest.mark.usefixtures("_verl")


@pytest.fixture(scope="module")
def _verl() -> None:
    need_verl()


def _banking_turn(row: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """``row`` with a ground truth of its own — look the debited account up, then move 100 from
    it — and the expected effect replayed from it (seed, prefix, ground truth, as replay validation
    records it); plus the plans the tests script: the ground truth, an alternative that looks the
    account up with another read, and the same calls moving 101."""
    from prove.env.effects import effect_hash
    from prove.env.hub import Hub
    from prove.rows import episode_spec

    src, dst = transfer_pair(row)
    lookup = {"name": "get_bank_account", "arguments": {"account_id": src}}
    move = {"name": "transfer_funds",
            "arguments": {"from_account_id": src, "to_account_id": dst, "amount": 100.0}}
    spec = episode_spec(row["extra_info"]["tools_kwargs"]["prove"]["create_kwargs"])
    hub = Hub()
    hub.open("expected", spec.seed, list(spec.prefix))
    for call in (lookup, move):
        assert hub.call(call["name"], call["arguments"], episode_id="expected")["ok"]
    expected = effect_hash(hub.effect("expected"))
    hub.close("expected")
    turn = json.loads(json.dumps(row))
    turn["reward_model"]["ground_truth"] = json.dumps({"calls": [lookup, move], "depends_on": [[0, 1]]})
    turn["extra_info"]["expected_effect"] = expected
    plans = {
        "ground_truth": [lookup, move],
        "alternative": [{"name": "get_balance", "arguments": {"account_id": src}}, move],
        "wrong_value": [lookup, {**move, "arguments": {**move["arguments"], "amount": 101.0}}],
    }
    return turn, plans


def _script(calls: list[dict[str, Any]]) -> list[str]:
    from prove.train.rollout import _call_text

    return [_call_text(c) for c in calls] + ["Done."]


def test_an_alternative_plan_reaches_the_outcome_and_a_wrong_value_does_not(
    verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict]
) -> None:
    from prove.reward.config import get_config
    from prove.train.rollout import run_rollouts, score_with_verl

    turn, plans = _banking_turn(banking_rows(synth_rows)[0])
    names = list(plans)
    outs = run(run_rollouts(verl_cfg, tokenizer, verl_tools, [turn] * len(names),
                            [_script(plans[n]) for n in names]))
    for name, out in zip(names, outs, strict=True):
        assert not isinstance(out, BaseException), (name, out)
        assert all(e["ok"] for e in out.extra_fields["tool_calls"]), (name, out.extra_fields["tool_calls"])
    scores = dict(zip(names, run(score_with_verl(verl_cfg, tokenizer, [turn] * len(names), outs)), strict=True))
    hashes = {n: out.extra_fields["effect_hash"] for n, out in zip(names, outs, strict=True)}
    assert hashes["ground_truth"] == hashes["alternative"] == turn["extra_info"]["expected_effect"]
    assert hashes["wrong_value"] != hashes["ground_truth"]

    assert {n: s["outcome"] for n, s in scores.items()} == \
        {"ground_truth": 1.0, "alternative": 1.0, "wrong_value": 0.0}
    assert all(s["outcome_known"] == 1 for s in scores.values())
    # the paper's reward (outcome weight 0) still charges the alternative: its write depends on a
    # lookup it never made, so neither step is covered; the wrong value keeps coverage, loses args
    assert scores["ground_truth"]["coverage"] == 1.0 and scores["ground_truth"]["reward_score"] == 1.0
    assert scores["alternative"]["coverage"] == 0.0
    assert scores["wrong_value"]["coverage"] == 1.0 and scores["wrong_value"]["arg_match"] < 1.0
    prove = get_config("prove")
    assert prove.w_outcome == 0.0
    # under the outcome ablation the alternative gains exactly the outcome's share
    from prove.reward.compose import score_turn

    log = outs[1].extra_fields["tool_calls"]
    on = score_turn(log, turn["reward_model"]["ground_truth"], turn["extra_info"]["tools"], "outcome", True)
    off = score_turn(log, turn["reward_model"]["ground_truth"], turn["extra_info"]["tools"], "outcome", False)
    w = get_config("outcome").weights
    assert on["score"] - off["score"] == pytest.approx(w[-1] / sum(w))



def test_an_answer_without_calls_is_read_at_its_prefix_and_its_episode_closed(
    verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict], synth_examples: list[dict],
    live_env: Any,
) -> None:
    """No call opens the episode, so the loop opens it at seed + prefix to read it (and closes it):
    an abstention leaves the records where its ground truth (no call) does, and a later turn
    answered without a call leaves them where the earlier turns did."""
    from prove.train.rollout import run_rollouts, score_with_verl

    row = row_of(synth_rows, "abstention")
    assert row["extra_info"]["expected_effect"], "rows carry the expected effect (prove.rows)"
    before = unclosed_episodes(live_env.url)
    [out] = run(run_rollouts(verl_cfg, tokenizer, verl_tools, [row], [["I can't do that with these tools."]]))
    assert out.extra_fields["tool_calls"] == []
    assert out.extra_fields["effect_hash"] == row["extra_info"]["expected_effect"]
    [score] = run(score_with_verl(verl_cfg, tokenizer, [row], [out]))
    assert score["outcome"] == 1.0 and score["reward_score"] == 1.0

    later = row_of(synth_rows, "multi_turn", turn=1)
    effects = {e["id"]: e["replay"]["turn_effects"] for e in synth_examples}[later["extra_info"]["example_id"]]
    assert later["extra_info"]["expected_effect"] == effects[1]
    [out] = run(run_rollouts(verl_cfg, tokenizer, verl_tools, [later], [["Done."]]))
    assert out.extra_fields["effect_hash"] == effects[0]  # the prefix replayed: turn 0's effect
    [score] = run(score_with_verl(verl_cfg, tokenizer, [later], [out]))
    assert score["outcome"] == float(effects[0] == effects[1])
    assert unclosed_episodes(live_env.url) == before  # the episodes opened to be read were closed
