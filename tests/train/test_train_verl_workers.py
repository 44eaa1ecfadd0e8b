"""Rollouts and rewards through VERL's own workers: AgentLoopWorker (agent_loops.yaml registry, tool
YAML, Qwen3 continuous-token builder, per-sample ProveAgentLoop) and RewardLoopWorker (reward manager
and reward.custom_reward_function), on a batch made by ProveRLDataset and VERL's collate_fn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from train_helpers import ground_truth, run

from prove.reward.compose import KEYS


def _oracle_llm(tokenizer: Any, synth_rows: list[dict]) -> Any:
    from prove.train.rollout import ScriptedLLM, oracle_script

    scripts = [oracle_script(r, parallel=i % 2 == 0) for i, r in enumerate(synth_rows)]
    return ScriptedLLM(tokenizer, synth_rows, scripts)


def test_worker_registers_our_loop_from_agent_loops_yaml_and_reads_qwen3_from_the_model(
    verl_cfg: Any, tokenizer: Any, synth_rows: list[dict]
) -> None:
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry
    from verl.utils.tokenizer.continuous_token import QwenContinuousTokenBuilder

    from prove.train.rollout import make_agent_loop, make_worker

    llm = _oracle_llm(tokenizer, synth_rows)
    worker = make_worker(verl_cfg, llm, reward=False)
    assert _agent_loop_registry["prove_tool_agent"]["_target_"] == "prove.train.agent_loop.ProveAgentLoop"
    assert worker.hf_model_type == "qwen3" and len(worker.tools) > 300
    loop = make_agent_loop(worker.config, worker.tokenizer, worker.tools, llm, worker.hf_model_type)
    assert isinstance(loop.continuous_token_builder, QwenContinuousTokenBuilder)


def test_a_training_batch_through_generate_sequences_is_scored_by_verls_reward_loop(
    verl_cfg: Any, tokenizer: Any, rl_parquet: Path, synth_rows: list[dict]
) -> None:
    from prove.train.rollout import make_worker, rollout_batch

    batch = rollout_batch(verl_cfg, rl_parquet, tokenizer, n=2)

    async def generate() -> Any:  # VERL's workers bind the event loop they are built on
        worker = make_worker(verl_cfg, _oracle_llm(tokenizer, synth_rows))
        return await worker.generate_sequences(batch)

    out = run(generate())
    assert len(out) == 2 * len(synth_rows)
    scores = out.batch["rm_scores"].sum(-1).tolist()
    assert scores == pytest.approx([1.0] * len(out))  # oracle calls, executed live, VERL's reward
    assert set(out.meta_info["reward_extra_keys"]) == set(KEYS)
    logs = out.non_tensor_batch["tool_calls"]
    rows = [row for row in synth_rows for _ in range(2)]
    for log, row, n_gt in zip(logs, rows, out.non_tensor_batch["n_gt"], strict=True):
        assert len(log) == n_gt == len(ground_truth(row)) and all(e["ok"] for e in log)
        if row["extra_info"]["kind"] == "abstention":
            assert n_gt == 0
    # The response mask marks generated tokens only: tool responses are context.
    assert (out.batch["response_mask"].sum(-1) < out.batch["attention_mask"][:, -out.batch[
        "responses"].shape[1]:].sum(-1)).any()


def test_a_garbled_abstention_call_scores_zero_through_the_workers(
    verl_cfg: Any, tokenizer: Any, rl_parquet: Path, synth_rows: list[dict]
) -> None:
    from prove.train.rollout import ScriptedLLM, make_worker, rollout_batch, run_trajectories

    index = next(i for i, r in enumerate(synth_rows) if r["extra_info"]["kind"] == "abstention")
    garbled = '<tool_call>\n{"name": "transfer_funds", "arguments": {"amount": 5,}\n</tool_call>'
    batch = rollout_batch(verl_cfg, rl_parquet, tokenizer, indices=[index])

    async def trajectories() -> list:
        llm = ScriptedLLM(tokenizer, [synth_rows[index]], [[garbled, "Done."]])
        return await run_trajectories(make_worker(verl_cfg, llm), batch)

    [out] = run(trajectories())
    info = out.extra_fields["reward_extra_info"]
    assert out.reward_score == 0.0 and info["n_pred"] == 1 and info["validity"] == 0.0
    assert json.dumps(out.extra_fields["tool_calls"]).count("malformed") == 1
