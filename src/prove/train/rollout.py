"""Run PROVE rollouts through VERL's own agent loop on CPU, with a scripted policy instead of vLLM.

    from prove.train.rollout import oracle_script, run_rollouts, score_with_verl
    outputs = await run_rollouts(verl_cfg, tokenizer, tools, rows, scripts)   # live servers
    scores = await score_with_verl(verl_cfg, tokenizer, rows, outputs)         # VERL's reward manager

Everything but generation is real: ``ProveAgentLoop`` (VERL's ``ToolAgentLoop``) built from the
composed paper config, VERL's continuous-token prompt building and hermes tool parser, ``ProveTool``
objects loaded by VERL's tool registry, calls to ``prove serve`` over HTTP, and the reward computed
by VERL's ``NaiveRewardManager`` through the configured ``reward.custom_reward_function``.
``ScriptedLLM`` replaces VERL's server manager: it returns the token ids of prepared assistant
turns (``oracle_script`` writes a row's ground-truth calls in hermes format), so on a machine
without a GPU the whole trajectory path runs as it does in training.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict
from verl import DataProto
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput, DictConfigWrap, ToolListWrap
from verl.workers.rollout.replica import TokenOutput

from prove.train.agent_loop import ProveAgentLoop
from prove.train.dataset import ProveRLDataset
from prove.train.rows import decode_messages

__all__ = ["ScriptedLLM", "oracle_script", "make_agent_loop", "run_rollouts", "score_with_verl"]


class ScriptedLLM:
    """Stands in for VERL's LLM server manager: each ``generate`` returns the next scripted turn."""

    def __init__(self, tokenizer: Any, turns: Sequence[str], fail_at: int | None = None) -> None:
        self.tokenizer, self.turns, self.fail_at = tokenizer, list(turns), fail_at
        self.calls = 0

    async def generate(self, *, request_id: str, prompt_ids: list[int], sampling_params: dict,
                       **kwargs: Any) -> TokenOutput:
        index = self.calls
        self.calls += 1
        if self.fail_at is not None and index == self.fail_at:
            raise RuntimeError("scripted generation failure")
        text = self.turns[index] if index < len(self.turns) else "Done."
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        await asyncio.sleep(0)  # yield like a real server would
        return TokenOutput(token_ids=ids, log_probs=[0.0] * len(ids), stop_reason="completed")


def _call_text(call: Mapping[str, Any]) -> str:
    body = json.dumps({"name": call["name"], "arguments": call.get("arguments", {})}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


def oracle_script(row: Mapping[str, Any], *, parallel: bool = False,
                  extra: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """Assistant turns that make a row's ground-truth calls (then ``extra`` ones), then stop:
    one call per turn, or all of them in one turn when ``parallel``."""
    gt = json.loads(row["reward_model"]["ground_truth"])
    calls = [*gt["calls"], *extra]
    if not calls:
        return ["I can't help with that using the tools I have."]
    if parallel:
        return ["\n".join(_call_text(c) for c in calls), "Done."]
    return [_call_text(c) for c in calls] + ["Done."]


def make_agent_loop(verl_cfg: Any, tokenizer: Any, tools: Sequence[Any], llm: Any) -> ProveAgentLoop:
    """A ``ProveAgentLoop`` built the way VERL's ``AgentLoopWorker`` builds one per sample."""
    return ProveAgentLoop(
        trainer_config=DictConfigWrap(config=verl_cfg), server_manager=llm, tokenizer=tokenizer,
        processor=None, dataset_cls=ProveRLDataset, data_config=DictConfigWrap(verl_cfg.data),
        hf_model_type=None, tools=ToolListWrap(list(tools)),
    )


def _row_kwargs(row: Mapping[str, Any]) -> dict[str, Any]:
    """What VERL's dataset hands the loop for a row (``RLHFDataset.__getitem__``'s lifted keys)."""
    extra = dict(row["extra_info"])
    return {"raw_prompt": decode_messages(row["prompt"]), "extra_info": extra,
            "tools_kwargs": extra.get("tools_kwargs") or {}, "index": extra.get("index", 0),
            "data_source": row["data_source"], "agent_name": row["agent_name"]}


async def run_rollouts(verl_cfg: Any, tokenizer: Any, tools: Sequence[Any],
                       rows: Sequence[Mapping[str, Any]], scripts: Sequence[Sequence[str]],
                       fail_at: Sequence[int | None] | None = None) -> list[AgentLoopOutput | BaseException]:
    """One trajectory per (row, script), all concurrent, as a rollout worker runs a batch.
    A trajectory that raises is returned as its exception."""
    fail_at = list(fail_at) if fail_at is not None else [None] * len(rows)
    loops = [make_agent_loop(verl_cfg, tokenizer, tools, ScriptedLLM(tokenizer, script, f))
             for script, f in zip(scripts, fail_at, strict=True)]
    return await asyncio.gather(
        *(loop.run({"temperature": 1.0}, **_row_kwargs(row)) for loop, row in zip(loops, rows, strict=True)),
        return_exceptions=True,
    )


async def score_with_verl(verl_cfg: Any, tokenizer: Any, rows: Sequence[Mapping[str, Any]],
                          outputs: Sequence[AgentLoopOutput]) -> list[dict[str, Any]]:
    """Score trajectories with VERL's ``NaiveRewardManager`` and the configured reward function,
    on the batch VERL's agent-loop worker builds for its reward workers."""
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager
    from verl.trainer.ppo.reward import get_custom_reward_fn

    manager = NaiveRewardManager(verl_cfg, tokenizer, get_custom_reward_fn(verl_cfg))
    results = []
    for row, output in zip(rows, outputs, strict=True):
        prompts = torch.tensor(output.prompt_ids, dtype=torch.int64)
        responses = torch.tensor(output.response_ids, dtype=torch.int64)
        input_ids = torch.cat([prompts, responses])
        batch = TensorDict({
            "prompts": prompts[None], "responses": responses[None], "input_ids": input_ids[None],
            "attention_mask": torch.ones_like(input_ids)[None],
            "position_ids": torch.arange(len(input_ids))[None],
        }, batch_size=1)
        kwargs = _row_kwargs(row)
        kwargs["reward_model"] = dict(row["reward_model"])
        non_tensor = {k: np.array([v], dtype=object) for k, v in kwargs.items()}
        non_tensor["__num_turns__"] = np.array([output.num_turns])
        non_tensor["tool_extra_fields"] = np.array([output.extra_fields], dtype=object)
        result = await manager.run_single(DataProto(batch=batch, non_tensor_batch=non_tensor))
        results.append({"reward_score": result["reward_score"], **result["reward_extra_info"]})
    return results
