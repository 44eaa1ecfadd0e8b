"""Evaluate every model a training chain produced: base, SFT and each GRPO run, on the same slices.

    from prove.eval.chain import evaluate_chain
    out = evaluate_chain("smollm2-135m", env_url, plan, HeldoutPlan(max_rows=4))   # 06 on smoke

Models are found from the run directories (``prove.train.chain.trained_models``: each finished
run's ``model.json``), never typed in; the base model's hub id is resolved by ``prove.llm.vllm``.
Each model is served once by vLLM (its CPU build on a cpu config, on the policy's GPUs of
``EvalPlan.placement`` where 06 planned one) and that one server answers PROVE's held-out turns
(``prove.eval.heldout``, live, the training agent path, rows batched) and the external benchmarks
(``prove.eval.pipeline.evaluate_model``); it is stopped before the next model starts, so nothing of
a model stays loaded in this process. τ²'s user simulator, when the plan serves one, is started once
for the whole chain (``prove.eval.pipeline.shared_user``): every model is judged by the same process.
The returned long rows feed ``prove.eval.paper.comparison_table``; their ``variant`` is ``base``,
``sft`` or ``trained`` (GRPO with PROVE's reward; other GRPO runs keep their label).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pandas as pd

from prove.eval.heldout import HeldoutPlan, evaluate_heldout
from prove.eval.paper import long_rows
from prove.eval.pipeline import EvalPlan, evaluate_model, shared_user

__all__ = ["evaluate_chain", "eval_model_name", "table_variant", "serve_for_eval", "log_chain_eval"]


def eval_model_name(train_cfg: Any) -> str:
    """The model's name in the evaluation tables (``Qwen3-4B``, ..., ``SmolLM2-135M``)."""
    from prove.eval.bfcl import PAPER_MODELS, SMOKE_MODELS
    from prove.train.config import LOCAL_SMOLLM2

    if train_cfg.model == LOCAL_SMOLLM2:
        return "SmolLM2-135M"
    for name, spec in {**PAPER_MODELS, **SMOKE_MODELS}.items():
        if spec.hf_id == train_cfg.model:
            return name
    return train_cfg.name


def table_variant(label: str) -> str:
    """A run label as the comparison table names it (``grpo_default`` is the paper's trained model)."""
    return {"grpo_default": "trained"}.get(label, label)


def serve_for_eval(model: str, train_cfg: Any, plan: EvalPlan | None = None) -> Any:
    """A ``prove.llm.vllm.ServedModel`` (not yet started: use it as a context manager) for one model
    of the chain: the policy slot of ``plan.placement`` when 06 planned one, else vLLM's CPU build on
    a cpu config and vLLM on a GPU otherwise, with the config's family and thinking mode."""
    from prove.llm.vllm import VLLMConfig, serve_local, serve_vllm

    if plan is not None and plan.placement is not None:
        return serve_vllm(plan.placement.vllm_config("policy", model=str(model)))
    if train_cfg.device == "cpu":
        return serve_local(model_dir=model, threads=os.cpu_count(), thinking=train_cfg.thinking)
    return serve_vllm(VLLMConfig(model=str(model), family=train_cfg.family, thinking=train_cfg.thinking))


def log_chain_eval(cfg: Any, label: str, heldout: Mapping[str, Any] | None = None,
                   benchmark: Mapping[str, Any] | None = None, results_dir: str | Path = "results",
                   checkpoints_dir: str | Path = "checkpoints") -> dict[str, Any] | None:
    """One model's held-out summary and benchmark results into its training run (label ``sft`` or
    ``grpo_<variant>``; ``prove.tracking.log_run_eval``). ``base`` has no training run and is
    skipped (its numbers are in the evaluation tables)."""
    if label == "base":
        return None
    from prove.tracking import log_run_eval
    from prove.train.launch import RunPaths

    variant = cfg.variant("sft" if label == "sft" else label.removeprefix("grpo_"))
    run_dir = RunPaths.for_run(cfg, variant, results_dir, checkpoints_dir).run_dir
    return log_run_eval(run_dir, cfg, variant, heldout, benchmark)


def evaluate_chain(config: str | Any, env_urls: str | Sequence[str], plan: EvalPlan | None,
                   heldout: HeldoutPlan | None = None, *, results_dir: str | Path = "results",
                   checkpoints_dir: str | Path = "checkpoints",
                   labels: Sequence[str] | None = None) -> dict[str, Any]:
    """Held-out turns (and ``plan``'s benchmarks, unless None) for every model of the chain.

    Returns {"rows": long rows, "heldout": per-model summary table, "turns": per-turn table,
    "benchmarks": {label: evaluate_model's result}}.
    """
    from prove.train.chain import trained_models
    from prove.train.config import load_train_config

    cfg = (config if not isinstance(config, str) else load_train_config(config)).with_results(results_dir)
    models = trained_models(cfg, results_dir, checkpoints_dir)
    if labels is not None:
        models = {k: v for k, v in models.items() if k in labels}
    name = eval_model_name(cfg)
    rows: list[dict[str, Any]] = []
    summaries, turns, benchmarks = [], [], {}
    # τ²'s user simulator, when the plan serves one: started once for every model of the chain
    with shared_user(plan) if plan is not None else nullcontext(plan) as plan:
        for label, folder in models.items():
            variant = table_variant(label)
            with serve_for_eval(folder, cfg, plan) as served:  # one server: held-out, BFCL, τ²
                per_turn, summary = evaluate_heldout(served, cfg, env_urls, heldout, label=label)
                summary["model"] = str(folder)
                if plan is not None and plan.benchmarks:
                    run_plan = dataclasses.replace(plan, tokenizer_path=str(served.model_dir))
                    benchmarks[label] = evaluate_model(name, variant, served.endpoint, run_plan)
            summaries.append({"model": name, "config": cfg.name, "run": label, **summary})
            turns.append(per_turn)
            rows += long_rows(name, variant, heldout=summary)
            if label in benchmarks:
                rows += benchmarks[label]["rows"]
            # into the run's wandb run and its summary.json (base has no run: nothing)
            log_chain_eval(cfg, label, summary, benchmarks.get(label), results_dir, checkpoints_dir)
    return {"rows": rows, "heldout": pd.DataFrame(summaries),
            "turns": pd.concat(turns, ignore_index=True) if turns else pd.DataFrame(),
            "benchmarks": benchmarks}
