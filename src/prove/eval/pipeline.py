"""The evaluation loop the 06 notebook runs: serve each model (base, trained), run the benchmarks, collect rows.

    rows = evaluate_model("Qwen3-8B", "base", served.endpoint, EvalPlan(...))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prove.eval.base import Endpoint
from prove.eval.bfcl import BFCL, CATEGORIES, PAPER_MODELS, BFCLConfig
from prove.eval.paper import long_rows
from prove.eval.tau2 import DOMAINS, Tau2, Tau2Config, tau2_available
from prove.eval.teval import TEval, TEvalConfig

__all__ = ["EvalPlan", "evaluate_model", "run_label"]


@dataclass
class EvalPlan:
    """Which benchmarks and subsets to run for every served model."""

    results_dir: Path = Path("results")
    benchmarks: tuple[str, ...] = ("bfcl", "tau2", "teval")
    bfcl_categories: tuple[str, ...] = CATEGORIES
    bfcl_ids: tuple[str, ...] | None = None
    tokenizer_path: str | None = None
    tau2_domains: tuple[str, ...] = DOMAINS
    tau2_trials: int = 4
    tau2_user_llm: str = "gpt-4.1-2025-04-14"
    tau2_user_llm_args: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0})
    teval_data_dir: str | None = None
    teval_embedding_model: str = "all-mpnet-base-v2"


def run_label(model: str, variant: str) -> str:
    return f"{model}-{variant}".replace("_", "-").replace("/", "-").replace(".", "")


def evaluate_model(model: str, variant: str, endpoint: Endpoint, plan: EvalPlan) -> dict[str, Any]:
    """Run `plan` against `endpoint`; returns {"rows": long rows, "bfcl", "tau2", "teval", "skipped"}."""
    label, out = run_label(model, variant), Path(plan.results_dir)
    spec = PAPER_MODELS.get(model)
    result: dict[str, Any] = {"bfcl": None, "tau2": [], "teval": None, "skipped": {}}
    if "bfcl" in plan.benchmarks:
        cfg = BFCLConfig(label=label, handler=spec.handler if spec else "QwenFCHandler",
                         categories=plan.bfcl_categories, ids=plan.bfcl_ids, tokenizer_path=plan.tokenizer_path,
                         project_dir=out / "bfcl")
        adapter = BFCL(cfg)
        adapter.run(endpoint)
        result["bfcl"] = adapter.score()
    if "tau2" in plan.benchmarks:
        ok, why = tau2_available()
        if ok:
            cfg2 = Tau2Config(label=label, domains=plan.tau2_domains, num_trials=plan.tau2_trials,
                              user_llm=plan.tau2_user_llm, user_llm_args=plan.tau2_user_llm_args,
                              results_dir=out / "tau2" / label)
            tau = Tau2(cfg2)
            result["tau2"] = tau.score(tau.run(endpoint))
        else:
            result["skipped"]["tau2"] = why
    if "teval" in plan.benchmarks:
        if plan.teval_data_dir:
            cfg3 = TEvalConfig(label=label, data_dir=Path(plan.teval_data_dir),
                               embedding_model=plan.teval_embedding_model, results_dir=out / "teval")
            te = TEval(cfg3)
            result["teval"] = te.score(te.run(endpoint))
        else:
            result["skipped"]["teval"] = "teval_data_dir is not set (T-Eval v2 data is not on PyPI)"
    result["rows"] = long_rows(model, variant, result["bfcl"], result["tau2"], result["teval"])
    return result
