"""The held-out summary's state columns: per-turn and per-conversation state success and the two
reward-hacking signals, computed from the per-turn table that ``turn_table`` builds out of scored
rollouts (PROVE's reward on logged calls, and the state verdict from the effect hashes).

    .venv/bin/python -m pytest tests/eval/test_eval_heldout_summary.py -q
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd
import pytest

from prove.eval.heldout import SUMMARY_KEYS, summarise, turn_table
from prove.reward import compute_score
from prove.reward.signals import HIGH_REWARD

TOOLS = [{"type": "function", "function": {"name": "get_balance", "parameters": {
    "type": "object", "properties": {"account_id": {"type": "string"}}, "required": ["account_id"]}}}]
CALL = {"name": "get_balance", "arguments": {"account_id": "ACC-1"}}


def _raw(example: str, turn: int, calls: list[dict], effect: str | None, expected: str = "E") -> dict[str, Any]:
    gt = json.dumps({"calls": [CALL], "depends_on": []})
    log = [{**c, "ok": True} for c in calls]
    info = {"tools": json.dumps(TOOLS), "tool_calls": log, "expected_effect": expected}
    if effect is not None:
        info["effect_hash"] = effect
    return {"extra_info": {"example_id": example, "turn": turn, "kind": "multi_turn", "tools": json.dumps(TOOLS),
                           "expected_effect": expected},
            "reward_model": {"ground_truth": gt}, "log": log,
            "scores": compute_score("prove", "", gt, info), "response_tokens": 5,
            "generate_s": 0.0, "tool_calls_s": 0.0}


def test_state_success_per_turn_and_per_conversation_and_the_hacking_share() -> None:
    raw = [
        _raw("a", 0, [CALL], "E"),        # right calls, right state
        _raw("a", 1, [CALL], "other"),    # right calls (reward 1.0), wrong state: the hacking signal
        _raw("b", 0, [], "E"),            # no call, state right (a read-only turn): reward low
        _raw("c", 0, [CALL], None),       # the effect was not read: unknown, left out
    ]
    turns = turn_table(raw, "grpo")
    assert list(turns["state_success"].iloc[:3]) == [1.0, 0.0, 1.0] and math.isnan(turns["state_success"].iloc[3])
    assert turns["score"].iloc[1] == 1.0 >= HIGH_REWARD
    summary = summarise(turns)
    assert tuple(summary) == SUMMARY_KEYS
    assert summary["state_success"] == pytest.approx(2 / 3)
    assert summary["state_success_conversation"] == pytest.approx(1 / 2)  # a fails on turn 1, b succeeds
    assert summary["high_reward_state_fail"] == pytest.approx(1 / 3)
    expected_r = pd.Series([1.0, 1.0, 0.0]).corr(pd.Series([1.0, 0.0, 1.0]))
    assert summary["reward_state_corr"] == pytest.approx(expected_r)
    assert summary["calls_per_turn"] == 0.75 and summary["calls_over_gt"] == 0.75
    assert summary["no_call_share"] == 0.25 and summary["failed_calls_per_turn"] == 0.0
