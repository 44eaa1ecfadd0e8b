"""Per-step reward-hacking signals of a VERL run: computed from the rollouts VERL dumps each step
(its file format: one JSON line per rollout with the reward's keys) and appended to the run's
metrics once. The real dump of a real GRPO step is checked in test_train_chain.

    .venv/bin/python -m pytest tests/train/test_train_signals.py -q
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prove.reward import score_turn
from prove.reward.signals import hacking_signals
from prove.train.signals import add_step_signals, step_signals

TOOLS = [{"type": "function", "function": {"name": "get_balance", "parameters": {
    "type": "object", "properties": {"account_id": {"type": "string"}}, "required": ["account_id"]}}}]
CALL = {"name": "get_balance", "arguments": {"account_id": "ACC-1"}}
GT = {"calls": [CALL], "depends_on": []}


def _dump(rollouts: Path, step: int, scored: list[dict]) -> None:
    """What VERL's ``_write_generations`` writes: input, output, gts, score, step, then every key of
    the reward's extra info."""
    rollouts.mkdir(parents=True, exist_ok=True)
    with (rollouts / f"{step}.jsonl").open("w") as fh:
        for s in scored:
            fh.write(json.dumps({"input": "q", "output": "a", "gts": json.dumps(GT), "step": step, **s}) + "\n")


def test_each_dumped_step_becomes_one_metrics_line_once(tmp_path: Path) -> None:
    good = score_turn([{**CALL, "ok": True}], GT, TOOLS, None, True)
    hacked = score_turn([{**CALL, "ok": True}], GT, TOOLS, None, False)
    silent = score_turn([], GT, TOOLS, None, True)
    _dump(tmp_path / "rollouts", 1, [good, silent])
    _dump(tmp_path / "rollouts", 2, [hacked, hacked, good, silent])
    (tmp_path / "metrics.jsonl").write_text(json.dumps({"step": 1, "data": {"critic/score/mean": 0.6}}) + "\n")

    table = step_signals(tmp_path / "rollouts")
    assert list(table["step"]) == [1, 2]
    assert table.loc[1, "high_reward_state_fail"] == 0.5 and table.loc[0, "high_reward_state_fail"] == 0.0
    assert add_step_signals(tmp_path) == 2
    assert add_step_signals(tmp_path) == 0  # a rerun adds nothing twice
    lines = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert lines[0] == {"step": 1, "data": {"critic/score/mean": 0.6}}
    second = {f"prove/{k}": v for k, v in hacking_signals([hacked, hacked, good, silent]).items()}
    assert lines[2] == {"step": 2, "data": pytest.approx(second)}


def test_a_run_without_dumps_adds_nothing(tmp_path: Path) -> None:
    assert add_step_signals(tmp_path) == 0 and not (tmp_path / "metrics.jsonl").exists()
    assert step_signals(tmp_path / "rollouts").empty
