"""The reward hook: VERL's reward manager scores live rollouts through reward.custom_reward_function."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from train_helpers import ground_truth, run

from prove.reward.compose import KEYS
from prove.reward.verl import compute_score


@pytest.fixture(scope="module")
def rollouts(verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict]) -> dict[str, Any]:
    """Oracle rollouts (the turn's ground-truth calls) and padded ones (an extra lookup the row
    offers, and an unknown call)."""
    from prove.train.rollout import oracle_script, padding_calls, run_rollouts

    rows = list(synth_rows)
    paddings = [padding_calls(r) for r in rows]
    assert all(len(p) == 2 for p in paddings), "every row offers a lookup that needs no argument"
    oracle = [oracle_script(r) for r in rows]
    padded = [oracle_script(r, extra=p) for r, p in zip(rows, paddings, strict=True)]
    outs = run(run_rollouts(verl_cfg, tokenizer, verl_tools, rows * 2, oracle + padded))
    return {"rows": rows, "oracle": outs[: len(rows)], "padded": outs[len(rows):]}


def _score(cfg: Any, tokenizer: Any, rows: list, outputs: list) -> list[dict]:
    from prove.train.rollout import score_with_verl

    return asyncio.run(score_with_verl(cfg, tokenizer, rows, outputs))


def test_oracle_rollouts_score_one_with_fixed_keys(verl_cfg: Any, tokenizer: Any, rollouts: dict) -> None:
    scores = _score(verl_cfg, tokenizer, rollouts["rows"], rollouts["oracle"])
    assert all(s["reward_score"] == pytest.approx(1.0) for s in scores)
    assert all(set(s) == {"reward_score", *KEYS} for s in scores)  # VERL indexes keys of sample 0
    # empty ground truth: abstention turns, and a clarification's first turn (it asks instead)
    assert [s["gt_empty"] for s in scores] == [int(not ground_truth(r)) for r in rollouts["rows"]]
    kinds = {(r["extra_info"]["kind"], r["extra_info"]["turn"]) for r in rollouts["rows"] if not ground_truth(r)}
    assert ("abstention", 0) in kinds and kinds <= {("abstention", 0), ("clarification", 0)}


def test_padded_rollouts_are_charged_for_every_logged_call(
    verl_cfg: Any, tokenizer: Any, rollouts: dict
) -> None:
    scores = _score(verl_cfg, tokenizer, rollouts["rows"], rollouts["padded"])
    for row, out, s in zip(rollouts["rows"], rollouts["padded"], scores, strict=True):
        n_gt = len(json.loads(row["reward_model"]["ground_truth"])["calls"])
        assert s["n_pred"] == n_gt + 2 and s["n_unknown_name"] == 1 and s["n_errors"] == 1
        assert s["reward_score"] < 1.0
        # The manager's score is the adapter's score on the same extra_info (true call log).
        direct = compute_score("prove", "", row["reward_model"]["ground_truth"],
                               {**row["extra_info"], **out.extra_fields})
        assert direct["score"] == pytest.approx(s["reward_score"])
        if n_gt == 0:
            assert s["reward_score"] == 0.0  # abstention turn: any call is wrong


def test_reward_ablation_reaches_the_reward_through_verls_config(
    tokenizer: Any, tool_yaml: Path, rollouts: dict, tmp_path: Path
) -> None:
    from prove.train.compose import check_variant
    from prove.train.config import load_train_config

    cfg = load_train_config("qwen3-4b")
    prove = check_variant(cfg, "default", tmp_path)
    beta0 = check_variant(cfg, "beta0", tmp_path)
    # a turn of two or more calls: two extra calls are then partly inside PROVE's budget
    i = next(i for i, r in enumerate(rollouts["rows"]) if len(ground_truth(r)) >= 2)
    rows, padded = rollouts["rows"][i:i + 1], rollouts["padded"][i:i + 1]
    a = _score(prove, tokenizer, rows, padded)[0]
    b = _score(beta0, tokenizer, rows, padded)[0]
    assert b["budget"] < a["budget"] and b["efficiency"] < a["efficiency"]


def test_parse_path_charges_blocks_verls_parser_drops() -> None:
    """Without a call log (a loop other than prove_tool_agent), the text is parsed: a garbled or
    cut-off block is an unparseable call, so an abstention turn with one scores 0."""
    gt = json.dumps({"calls": [], "depends_on": []})
    garbled = 'Sure.<tool_call>\n{"name": "transfer_funds", "arguments": {"amount": 5,}\n</tool_call>'
    for text in (garbled, 'Sure.<tool_call>\n{"name": "transfer_fu'):
        s = compute_score("prove", text, gt, {"tools": "[]"})
        assert s["score"] == 0.0 and s["n_pred"] == 1 and s["n_unknown_name"] == 1
    assert compute_score("prove", "I can't do that.", gt, {"tools": "[]"})["score"] == 1.0
