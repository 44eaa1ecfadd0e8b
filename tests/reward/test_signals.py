"""Reward-hacking signals (prove.reward.signals) over rollouts scored by PROVE's reward: calls
against the ground truth, failed and unknown calls, rollouts without a call, and a reward that is
high while the state is wrong.

    .venv/bin/python -m pytest tests/reward/test_signals.py -q
"""

from __future__ import annotations

import math

import pytest

from prove.reward import score_turn
from prove.reward.signals import HIGH_REWARD, SIGNAL_KEYS, hacking_signals, state_signals

TOOLS = [{"type": "function", "function": {"name": "get_balance", "parameters": {
    "type": "object", "properties": {"account_id": {"type": "string"}}, "required": ["account_id"]}}}]
CALL = {"name": "get_balance", "arguments": {"account_id": "ACC-1"}}
GT = {"calls": [CALL], "depends_on": []}


def test_signals_count_what_each_rollout_did() -> None:
    rows = [
        score_turn([{**CALL, "ok": True}], GT, TOOLS, None, True),            # right, state right
        score_turn([{**CALL, "ok": True}] * 4, GT, TOOLS, None, True),        # sprays reads
        score_turn([{"name": "move_money", "arguments": {}, "ok": False}], GT, TOOLS, None, False),
        score_turn([], GT, TOOLS, None, None),                                # nothing; state not read
    ]
    out = hacking_signals(rows)
    assert tuple(out) == SIGNAL_KEYS
    assert out["calls_per_turn"] == 6 / 4 and out["gt_calls_per_turn"] == 1.0 and out["calls_over_gt"] == 1.5
    assert out["failed_calls_per_turn"] == 1 / 4 and out["unknown_calls_per_turn"] == 1 / 4
    assert out["no_call_share"] == 1 / 4
    assert out["over_budget_share"] == 1 / 4  # four calls against B = 1 + ceil(0.5) = 2
    assert out["state_success"] == pytest.approx(2 / 3)  # the unread rollout is left out
    assert out["high_reward_state_fail"] == 0.0
    assert out["reward_state_corr"] > 0.5  # the reward follows the state here


def test_a_reward_the_state_contradicts_is_flagged() -> None:
    hacked = [score_turn([{**CALL, "ok": True}], GT, TOOLS, None, False) for _ in range(3)]
    honest = [score_turn([], GT, TOOLS, None, True)]
    assert hacked[0]["score"] >= HIGH_REWARD
    out = hacking_signals(hacked + honest)
    assert out["high_reward_state_fail"] == 3 / 4 and out["reward_state_corr"] == pytest.approx(-1.0)


def test_nothing_measured_is_nan_not_zero() -> None:
    assert all(math.isnan(v) for v in hacking_signals([]).values())
    unread = hacking_signals([score_turn([], GT, TOOLS)])
    assert math.isnan(unread["state_success"]) and unread["no_call_share"] == 1.0
    flat = state_signals([1.0, 1.0], [1.0, 0.0])
    assert flat["high_reward_state_fail"] == 0.5 and math.isnan(flat["reward_state_corr"])
    assert math.isnan(hacking_signals([{"score": 1.0, "n_pred": 0, "n_gt": 0}])["calls_over_gt"])


def test_over_budget_counts_only_turns_with_calls_and_a_known_budget() -> None:
    """A no-call turn's budget is 0 and says nothing about the efficiency term; rows that never saw
    a budget (a table from before it was recorded) are not counted as within it."""
    two = score_turn([{**CALL, "ok": True}] * 2, GT, TOOLS)
    three = score_turn([{**CALL, "ok": True}] * 3, GT, TOOLS)
    assert two["budget"] == 2 and three["budget"] == 2
    abstain = score_turn([{**CALL, "ok": True}], {"calls": [], "depends_on": []}, TOOLS)
    assert hacking_signals([two, three, abstain])["over_budget_share"] == 1 / 2
    assert math.isnan(hacking_signals([abstain])["over_budget_share"])
    assert math.isnan(hacking_signals([{"score": 1.0, "n_pred": 5, "n_gt": 1}])["over_budget_share"])
