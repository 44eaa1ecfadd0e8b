"""Tool results in training rows are shown as the rollouts show them: SFT conversations and RL prompts
carry earlier results cut the way VERL's tool agent loop cuts a tool's answer to the policy.

    .venv/bin/python -m pytest tests/train/test_train_tool_text.py -q
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from train_helpers import need_verl

from prove.train.config import DataPaths, load_train_config
from prove.train.data import ToolTextCut, _rows, cut_tool_text

LONG = json.dumps({"items": [{"id": f"ACC-{i:04d}", "balance": i * 10.5} for i in range(60)], "total": 60})


def _verl_shows(text: str, limit: int, side: str) -> str:
    """What VERL's own ``ToolAgentLoop._call_tool`` hands the policy for a tool that answers ``text``."""
    from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop
    from verl.experimental.agent_loop.tool_parser import FunctionCall
    from verl.tools.base_tool import BaseTool
    from verl.tools.schemas import ToolResponse

    class Answer(BaseTool):
        def __init__(self) -> None:  # no schema needed: only the call path is exercised
            pass

        async def create(self, instance_id: Any = None, **kwargs: Any) -> tuple[str, ToolResponse]:
            return "one", ToolResponse()

        async def execute(self, instance_id: str, parameters: dict, **kwargs: Any) -> tuple:
            return ToolResponse(text=text), 0.0, {}

        async def release(self, instance_id: str, **kwargs: Any) -> None:
            return None

    loop = object.__new__(ToolAgentLoop)
    loop.tools = {"list_accounts": Answer()}
    loop.max_tool_response_length, loop.tool_response_truncate_side = limit, side
    response, _, _ = asyncio.run(loop._call_tool(
        FunctionCall(name="list_accounts", arguments="{}"), {}, object()))
    return response.text


@pytest.mark.parametrize("side", ["left", "right", "middle"])
@pytest.mark.parametrize("limit", [1024, 257, len(LONG)])
def test_a_tool_result_is_cut_exactly_as_verls_agent_loop_cuts_it(side: str, limit: int) -> None:
    need_verl()
    assert cut_tool_text(LONG, ToolTextCut(limit, side)) == _verl_shows(LONG, limit, side)


def test_a_bad_cut_is_refused_with_what_is_valid() -> None:
    with pytest.raises(ValueError, match="valid sides are left, right, middle"):
        ToolTextCut(1024, "top")
    with pytest.raises(ValueError, match="must be a positive number of characters"):
        ToolTextCut(0)
    cfg = load_train_config("smollm2-135m")  # the rehearsal's: grpo.yaml's side, its own length
    assert ToolTextCut.of(cfg.verl) == ToolTextCut(1024, "middle")
    assert ToolTextCut.of({}) == ToolTextCut(256, "middle")  # VERL's defaults


def test_sft_rows_and_rl_prompts_carry_results_as_rollouts_show_them(synth_examples: list, tokenizer) -> None:
    """A result longer than the rollouts' cut reaches an SFT conversation and a later turn's RL prompt
    cut the same way; shorter ones, the calls and everything else are unchanged; the report counts them."""
    cut = ToolTextCut(300, "middle")
    data = DataPaths(max_tools=3)
    longest = max((e for e in synth_examples if len(e["turns"]) > 1), key=lambda e: max(
        (len(m.get("content") or "") for m in e["messages"] if m["role"] == "tool"), default=0))
    tool_texts = [m["content"] for m in longest["messages"] if m["role"] == "tool"]
    assert max(map(len, tool_texts)) > cut.limit, "the smoke export has no result longer than the cut"
    rl, sft, counts = _rows([longest], "train", data, tokenizer, None, None, cut)
    plain_rl, plain_sft, plain = _rows([longest], "train", data, tokenizer, None, None, None)
    assert counts["tool_results"] == len(tool_texts) == plain["tool_results"]
    assert counts["tool_results_cut"] == sum(len(t) > cut.limit for t in tool_texts) > 0 == plain["tool_results_cut"]
    shown = [m["content"] for m in sft[0]["messages"] if m["role"] == "tool"]
    assert shown == [cut_tool_text(t, cut) for t in tool_texts]
    assert all(len(t) <= cut.limit + len("...(truncated)...") for t in shown)
    assert [m["content"] for m in plain_sft[0]["messages"] if m["role"] == "tool"] == tool_texts
    others = [(m["role"], m["content"], m["tool_calls"]) for m in sft[0]["messages"] if m["role"] != "tool"]
    assert others == [(m["role"], m["content"], m["tool_calls"]) for m in plain_sft[0]["messages"] if m["role"] != "tool"]
    last = rl[-1]["prompt"]
    assert any(m["role"] == "tool" for m in last), "a later turn's prompt holds earlier results"
    assert [m["content"] for m in last if m["role"] == "tool"] == shown[:sum(m["role"] == "tool" for m in last)]
    assert [r["reward_model"] for r in rl] == [r["reward_model"] for r in plain_rl]  # ground truth untouched
    assert [r["extra_info"]["prefix"] for r in rl] == [r["extra_info"]["prefix"] for r in plain_rl]
