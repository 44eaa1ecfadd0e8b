"""The adapters' core, ``prove.integrations.turn``, against the live `prove serve` (no framework).

    .venv/bin/python -m pytest tests/integrations/test_turn.py -q
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from prove.env.launch import EnvServer
from prove.integrations.turn import Turn, TurnRow, run_sync
from prove.reward import score_turn
from prove.rows import read_rows, write_rows


def _rows_with_calls(rows: list[dict[str, Any]]) -> list[TurnRow]:
    turns = [TurnRow.from_row(r) for r in rows]
    return [t for t in turns if t.ground_truth["calls"] and t.expected_effect]


def _args(call: dict[str, Any]) -> dict[str, Any]:
    args = call["arguments"]
    return json.loads(args) if isinstance(args, str) else args


def test_a_row_read_back_from_parquet_is_the_row_built(synth_rows: list[dict], tmp_path: Any) -> None:
    back = read_rows(write_rows(synth_rows[:3], tmp_path / "rows.parquet"))
    assert [TurnRow.from_row(r) for r in back] == [TurnRow.from_row(r) for r in synth_rows[:3]]
    row = TurnRow.from_row(synth_rows[0])
    assert row.id == f"{row.example_id}:{row.turn}" and row.tool_names
    for m in row.chat():
        for tc in m.get("tool_calls", []):
            assert isinstance(tc["function"]["arguments"], str)  # what an OpenAI server accepts
    with pytest.raises(ValueError, match="not a PROVE training row"):
        TurnRow.from_row({"prompt": [], "reward_model": {"ground_truth": "{}"}})
    with pytest.raises(FileNotFoundError, match="train.parquet"):
        read_rows(tmp_path / "missing.parquet")


def test_the_ground_truth_scores_one_and_two_episodes_of_a_row_never_share_state(
        writing_row: dict, env_server: EnvServer) -> None:
    row = TurnRow.from_row(writing_row)  # a row whose ground truth changes the records

    async def go() -> tuple[dict, dict, str, str, list[dict]]:
        right = Turn(row, env_server.url, episode_id="test-turn-a")
        idle = Turn(row, [env_server.url], episode_id="test-turn-b")
        for call in row.ground_truth["calls"]:
            await right.call(call["name"], json.dumps(_args(call)))
        scored = await right.score("outcome")
        effects = await right.effect(), await idle.effect()
        unscored = await idle.score("outcome")
        assert await right.close() and await idle.close()
        return scored, unscored, *effects, right.log

    scored, unscored, effect_a, effect_b, log = asyncio.run(go())
    assert [e["name"] for e in log] == [c["name"] for c in row.ground_truth["calls"]] and all(e["ok"] for e in log)
    assert scored["score"] == pytest.approx(1.0) and scored["outcome"] == 1.0
    assert scored == score_turn(log, row.ground_truth, list(row.tools), "outcome", outcome=True)
    assert effect_a == row.expected_effect and effect_b != effect_a  # b's state never saw a's calls
    assert unscored["score"] < 1.0 and unscored["outcome"] == 0.0


def test_calls_that_cannot_run_are_refused_as_training_refuses_them(synth_rows: list[dict],
                                                                    env_server: EnvServer) -> None:
    row = _rows_with_calls(synth_rows)[0]
    offered = row.tool_names[0]
    turn = Turn(row, env_server.url, episode_id="test-turn-refused")
    texts = [run_sync(turn.call("not_offered_tool", {})), run_sync(turn.call(offered, "[1, 2]")),
             run_sync(turn.call(offered, "{not json"))]
    assert texts[0].startswith("Error: Unknown function 'not_offered_tool'")
    assert "must be a JSON object" in texts[1] and "must be a JSON object" in texts[2]
    assert [e["ok"] for e in turn.log] == [False] * 3 and turn.replay == []  # nothing reached a server
    scored = run_sync(turn.score())
    assert scored["coverage"] == 0.0 and scored["validity"] < 0.5
    run_sync(turn.close())
