"""PROVE's held-out turns, executed live through the training agent path, for any model folder.

    from prove.eval.heldout import HeldoutPlan, evaluate_heldout
    turns, summary = evaluate_heldout("/path/to/hf_model", load_train_config("smollm2-135m"),
                                      env_url, HeldoutPlan(max_rows=16), label="grpo")

Each held-out row (the chain-disjoint ``rl_val`` split: no chain of it was trained on) runs as a
training rollout does: VERL's ``AgentLoopWorker`` instantiates ``prove_tool_agent`` from
``agent_loops.yaml``, the model generates greedily (Hugging Face ``generate`` in this process,
the ``hf`` rollout's generator), every ``<tool_call>`` reaches the row's own live episode through
``ProveTool`` on ``prove serve``, and VERL's reward loop scores the logged calls with PROVE's
default reward, whatever reward the model was trained on. Per turn: the reward and each component,
the calls made and expected, and ``exact`` (every ground-truth call made with matching values and
executed successfully; for a turn whose answer is no call, no call). The summary is the table the
paper's comparison reads: ``heldout_reward``, ``heldout_coverage``, ``exact_turn``,
``calls_per_turn``, ``gt_calls_per_turn``, ``abstention_accuracy``, ``clarification_accuracy``.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["HeldoutPlan", "LocalGenerator", "exact_turn", "summarise", "evaluate_heldout",
           "SUMMARY_KEYS"]

SUMMARY_KEYS: tuple[str, ...] = (
    "heldout_reward", "heldout_coverage", "exact_turn", "calls_per_turn", "gt_calls_per_turn",
    "abstention_accuracy", "clarification_accuracy", "turns",
)


@dataclass(frozen=True)
class HeldoutPlan:
    """How much of the held-out split to run and how long a model may act per turn."""

    max_rows: int | None = None
    """First N rows of the split (None: all)."""
    max_new_tokens: int = 128
    """Per generation; a turn's whole response is capped by the config's response length."""
    max_assistant_turns: int | None = None
    """None: the training config's ``multi_turn.max_assistant_turns``."""
    reward: str = "prove"


class LocalGenerator:
    """VERL's LLM-client interface (``generate(request_id, prompt_ids=, sampling_params=)``) over
    an in-process ``prove.train.hf_generate.HFGenerateServer``: greedy, one request at a time."""

    def __init__(self, verl_cfg: Any, max_new_tokens: int) -> None:
        from verl.utils.config import omega_conf_to_dataclass

        from prove.train.hf_generate import HFGenerateServer

        model_config = omega_conf_to_dataclass(verl_cfg.actor_rollout_ref.model)
        self.server = HFGenerateServer(verl_cfg.actor_rollout_ref.rollout, model_config)
        self.max_new_tokens = max_new_tokens
        self.requests = 0
        self.generated_tokens = 0

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       **kwargs: Any) -> Any:
        params = {**sampling_params, "temperature": 0.0, "max_tokens": self.max_new_tokens}
        out = await self.server.generate(prompt_ids=prompt_ids, sampling_params=params,
                                         request_id=request_id)
        self.requests += 1
        self.generated_tokens += len(out.token_ids)
        out.extra_fields.setdefault("min_global_steps", None)
        out.extra_fields.setdefault("max_global_steps", None)
        return out


def exact_turn(log: Sequence[Mapping[str, Any]], ground_truth: Mapping[str, Any], tools: Any,
               reward: str = "prove") -> bool:
    """Every ground-truth call was made with matching values and succeeded (no call if none is due)."""
    from prove.reward.config import get_config
    from prove.reward.values import values_match

    calls = list(ground_truth.get("calls") or [])
    if not calls:
        return len(log) == 0
    offered = json.loads(tools) if isinstance(tools, str) else list(tools or [])
    by_name = {t.get("function", t).get("name"): t.get("function", t).get("parameters") for t in offered}
    cfg = get_config(reward)
    for call in calls:
        params = by_name.get(call["name"])
        if not any(e.get("ok") and e.get("name") == call["name"]
                   and values_match(call.get("arguments") or {}, e.get("arguments") or {}, params, cfg)
                   for e in log):
            return False
    return True


def summarise(turns: pd.DataFrame) -> dict[str, float]:
    """The comparison table's numbers from the per-turn table (NaN where a kind is absent)."""
    def mean(frame: pd.DataFrame, column: str) -> float:
        return float(frame[column].mean()) if len(frame) else float("nan")

    abst = turns[turns["kind"] == "abstention"]
    clar = turns[turns["kind"] == "clarification"]
    return {
        "heldout_reward": mean(turns, "score"), "heldout_coverage": mean(turns, "coverage"),
        "exact_turn": mean(turns, "exact"), "calls_per_turn": mean(turns, "n_pred"),
        "gt_calls_per_turn": mean(turns, "n_gt"),
        "abstention_accuracy": float((abst["n_pred"] == 0).mean()) if len(abst) else float("nan"),
        "clarification_accuracy": float((clar["n_pred"] == 0).mean()) if len(clar) else float("nan"),
        "turns": float(len(turns)),
    }


def _verl_config(model_dir: str | Path, train_cfg: Any, env_urls: Sequence[str], work: Path,
                 plan: HeldoutPlan) -> Any:
    from omegaconf import open_dict

    from prove.train.compose import check_grpo
    from prove.train.launch import RunPaths, grpo_overrides
    from prove.train.tool_config import write_tool_config

    variant = train_cfg.variant("default")
    paths = RunPaths(work, work / "checkpoints")
    write_tool_config(paths.tool_config, list(env_urls), timeout=train_cfg.env.timeout,
                      servers=train_cfg.env.servers)
    cfg = check_grpo(grpo_overrides(train_cfg, variant, paths, model=str(model_dir)))
    with open_dict(cfg):
        cfg.reward.custom_reward_function.reward_kwargs = {"config": plan.reward}
        if plan.max_assistant_turns is not None:
            cfg.actor_rollout_ref.rollout.multi_turn.max_assistant_turns = plan.max_assistant_turns
    return cfg


async def _run(verl_cfg: Any, parquet: Path, plan: HeldoutPlan) -> list[dict[str, Any]]:
    from verl.experimental.agent_loop.agent_loop import get_trajectory_info
    from verl.utils.config import omega_conf_to_dataclass

    from prove.train.rollout import make_worker, rollout_batch
    from prove.train.session import close_clients

    tokenizer = omega_conf_to_dataclass(verl_cfg.actor_rollout_ref.model).tokenizer
    llm = LocalGenerator(verl_cfg, plan.max_new_tokens)
    worker = make_worker(verl_cfg, llm)
    batch = rollout_batch(verl_cfg, parquet, tokenizer)
    n = len(batch) if plan.max_rows is None else min(plan.max_rows, len(batch))
    info = await get_trajectory_info(1, list(batch.non_tensor_batch["index"]), True)
    params = {"temperature": 0.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": False}
    rows = []
    try:
        for i in range(n):  # one at a time: the CPU generator serves one request anyway
            kwargs = {k: v[i] for k, v in batch.non_tensor_batch.items()}
            out = await worker._run_agent_loop(dict(params), info[i], trace=False, **kwargs)
            extra = out.extra_fields
            rows.append({"extra_info": kwargs["extra_info"], "reward_model": kwargs["reward_model"],
                         "log": list(extra.get("tool_calls") or []),
                         "scores": dict(extra.get("reward_extra_info") or {}),
                         "response_tokens": int(out.response_mask.sum()) if hasattr(out, "response_mask")
                         else None,
                         # VERL's own per-trajectory timers (AgentLoopMetrics), seconds
                         "generate_s": float(out.metrics.generate_sequences),
                         "tool_calls_s": float(out.metrics.tool_calls)})
    finally:
        await close_clients()
    return rows


def _run_to_completion(coro: Any) -> Any:
    """``asyncio.run``, on a thread of its own when this thread already runs a loop (a notebook):
    VERL's workers bind the loop they are built on, so the evaluation gets a fresh one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def evaluate_heldout(model_dir: str | Path, train_cfg: Any, env_urls: str | Sequence[str],
                     plan: HeldoutPlan | None = None, label: str = "") -> tuple[pd.DataFrame, dict[str, Any]]:
    """Run the held-out rows against the model folder; returns (per-turn table, summary)."""
    plan = plan or HeldoutPlan()
    urls = [env_urls] if isinstance(env_urls, str) else list(env_urls)
    model_dir = Path(model_dir)
    if not (model_dir / "config.json").is_file():
        raise FileNotFoundError(f"{model_dir} is not an HF model folder (no config.json)")
    if not any(model_dir.glob("*.safetensors")) and not any(model_dir.glob("*.bin")):
        raise FileNotFoundError(
            f"{model_dir} holds no weights (config and tokenizer only); evaluate a step saved with "
            f"hf_model, or merge the step first: python -m verl.model_merger merge --backend fsdp "
            f"--local_dir {model_dir.parent} --target_dir {model_dir}")
    parquet = train_cfg.data.resolve("rl_val")
    if not parquet.is_file():
        raise FileNotFoundError(f"held-out rows {parquet} are missing; prepare them with "
                                f"python -m prove.train.data {train_cfg.name}")
    with tempfile.TemporaryDirectory(prefix="prove-heldout-") as tmp:
        verl_cfg = _verl_config(model_dir, train_cfg, urls, Path(tmp), plan)
        raw = _run_to_completion(_run(verl_cfg, parquet, plan))
    records = []
    for r in raw:
        extra, gt = r["extra_info"], json.loads(r["reward_model"]["ground_truth"])
        s = r["scores"]
        records.append({
            "label": label, "example_id": extra["example_id"], "turn": int(extra["turn"]),
            "kind": extra["kind"], "score": float(s.get("score", float("nan"))),
            "coverage": float(s.get("coverage", float("nan"))),
            "efficiency": float(s.get("efficiency", float("nan"))),
            "validity": float(s.get("validity", float("nan"))),
            "n_pred": len(r["log"]), "n_gt": len(gt.get("calls") or []),
            "n_errors": sum(not e.get("ok") for e in r["log"]),
            "exact": exact_turn(r["log"], gt, extra.get("tools"), plan.reward),
            "calls": " ".join(str(e.get("name")) for e in r["log"]) or "(none)",
            "gt_calls": " ".join(c["name"] for c in gt.get("calls") or []) or "(none)",
            "response_tokens": r["response_tokens"],
            "generate_s": r["generate_s"], "tool_calls_s": r["tool_calls_s"],
        })
    turns = pd.DataFrame.from_records(records)
    summary = {"label": label, "model": str(model_dir), **summarise(turns)}
    return turns, summary
