"""The evaluation loop the 06 notebook runs: serve each model (base, trained), run the benchmarks, collect rows.

    plan = EvalPlan.from_profile(load_profile("paper").eval, results_dir=Path("results"))
    rows = evaluate_model("Qwen3-8B", "base", served.endpoint, plan)
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from prove.eval.base import Endpoint
from prove.eval.bfcl import BFCL, CATEGORIES, PAPER_MODELS, SMOKE_MODELS, BFCLConfig
from prove.eval.paper import long_rows
from prove.eval.tau2 import (
    DOMAINS,
    LOCAL_USER,
    VLLM_USER,
    Tau2,
    Tau2Config,
    served_user,
    tau2_available,
)
from prove.eval.teval import TEval, TEvalConfig
from prove.profiles import EvalSettings

__all__ = ["EvalPlan", "evaluate_model", "evaluate_tau2", "run_label", "shared_user"]


@dataclass
class EvalPlan:
    """Which benchmarks and subsets to run for every served model."""

    results_dir: Path = Path("results")
    benchmarks: tuple[str, ...] = ("bfcl", "tau2", "teval")
    bfcl_categories: tuple[str, ...] = CATEGORIES
    bfcl_ids: tuple[str, ...] | None = None
    """None: every entry of the categories (800 for all four)."""
    bfcl_max_new_tokens: int | None = None
    """Per model step; None keeps bfcl's own cap. The smoke profile caps it for the CPU model."""
    bfcl_max_steps_per_turn: int | None = None
    """None keeps bfcl's 20 steps per turn."""
    bfcl_num_threads: int = 16
    """Concurrent BFCL requests against the endpoint (1 on a CPU server)."""
    tokenizer_path: str | None = None
    tau2_domains: tuple[str, ...] = DOMAINS
    tau2_trials: int = 4
    tau2_task_ids: tuple[str, ...] | None = None
    """None: every task of each domain (the paper); the smoke profile names a couple of mock tasks."""
    tau2_user_llm: str = LOCAL_USER
    """The user simulator, the same for every model compared: `local` (SmolLM2 served for the run),
    `vllm:<model>` (served with vLLM for the run) or a litellm id (see `Tau2Config.user_llm`)."""
    tau2_user_llm_args: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0})
    tau2_agent_llm_args: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0})
    placement: Any = None
    """``prove.eval.placement.Placement`` of 06's served models: the user simulator's slot when 06
    serves it (``tau2_user_llm: vllm:<model>``); None: that model's defaults."""
    thinking: bool = False
    """The profile's thinking mode, for BFCL's prompt-formatting handlers (the served models apply it
    to every chat request themselves)."""
    """litellm arguments of the policy's requests (e.g. max_tokens on CPU); api_base is the endpoint's."""
    tau2_max_steps: int = 200
    """τ²'s cap on messages per conversation (its default 200); a conversation that hits it scores 0."""
    tau2_max_concurrency: int = 8
    teval_data_dir: str | None = None
    teval_embedding_model: str = "all-mpnet-base-v2"

    @classmethod
    def from_profile(cls, settings: EvalSettings, **overrides: Any) -> EvalPlan:
        """The plan a profile's ``eval:`` section describes (``load_profile(name).eval``); ``overrides``
        (any of this class's fields) win. The section's ``teval_bag_of_words`` is 06's self-check's."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"unknown eval settings {unknown}; valid: {', '.join(sorted(known))}")
        merged = {f.name: getattr(settings, f.name) for f in fields(settings) if f.name in known}
        merged.update(overrides)
        for key in ("benchmarks", "bfcl_categories", "bfcl_ids", "tau2_domains", "tau2_task_ids"):
            if merged.get(key) is not None:
                merged[key] = tuple(merged[key])
        for key in ("tau2_user_llm_args", "tau2_agent_llm_args"):
            merged[key] = dict(merged[key])
        return cls(**merged)


def _no_think(model: str, thinking: bool) -> bool:
    """True when ``model``'s family has a thinking switch that the profile turns off."""
    from prove.llm.families import check_thinking, family_of_model

    fam = family_of_model(model)
    if fam is None:
        return False
    check_thinking(fam, thinking)
    return fam.has_thinking and not thinking


def run_label(model: str, variant: str) -> str:
    return f"{model}-{variant}".replace("_", "-").replace("/", "-").replace(".", "")


def _user_serve(plan: EvalPlan) -> Any:
    """The user simulator's vLLM config from 06's placement plan (None: that model's defaults)."""
    if plan.placement is not None and plan.tau2_user_llm.startswith(VLLM_USER):
        return plan.placement.vllm_config("user_simulator")
    return None


@contextlib.contextmanager
def shared_user(plan: EvalPlan) -> Iterator[EvalPlan]:
    """`plan` with τ²'s user simulator served once for every model evaluated under it.

    When the plan serves its simulator (``local`` or ``vllm:<model>``: started for a run) and runs
    τ², the simulator is started here and the yielded plan names the running server (its litellm id
    and ``api_base``), so a chain of checkpoints is judged by one simulator process started once,
    not one per checkpoint (on paper, Qwen3-32B loaded once per config instead of once per model).
    Otherwise `plan` itself is yielded and nothing starts."""
    serves = plan.tau2_user_llm == LOCAL_USER or plan.tau2_user_llm.startswith(VLLM_USER)
    if "tau2" not in plan.benchmarks or not serves or not tau2_available()[0]:
        yield plan
        return
    cfg = Tau2Config(label="user", domains=plan.tau2_domains, user_llm=plan.tau2_user_llm,
                     user_serve=_user_serve(plan), user_llm_args=dict(plan.tau2_user_llm_args))
    with served_user(cfg) as (user_llm, user_args):
        yield dataclasses.replace(plan, tau2_user_llm=user_llm, tau2_user_llm_args=user_args)


def evaluate_tau2(model: str, variant: str, endpoint: Endpoint, plan: EvalPlan) -> list[dict[str, Any]]:
    """τ²-bench on `plan`'s slice against `endpoint`: one row per domain (pass^1..4), raw runs under
    results_dir/tau2/<label>/. `long_rows(model, variant, tau2=...)` turns them into the comparison rows."""
    cfg = Tau2Config(label=run_label(model, variant), domains=plan.tau2_domains, num_trials=plan.tau2_trials,
                     task_ids=plan.tau2_task_ids, user_llm=plan.tau2_user_llm, user_serve=_user_serve(plan),
                     user_llm_args=dict(plan.tau2_user_llm_args), agent_llm_args=dict(plan.tau2_agent_llm_args),
                     max_steps=plan.tau2_max_steps, max_concurrency=plan.tau2_max_concurrency,
                     results_dir=Path(plan.results_dir) / "tau2" / run_label(model, variant))
    tau = Tau2(cfg)
    return tau.score(tau.run(endpoint))


def evaluate_model(model: str, variant: str, endpoint: Endpoint, plan: EvalPlan) -> dict[str, Any]:
    """Run `plan` against `endpoint`; returns {"rows": long rows, "bfcl", "tau2", "teval", "skipped"}."""
    label, out = run_label(model, variant), Path(plan.results_dir)
    spec = PAPER_MODELS.get(model) or SMOKE_MODELS.get(model)
    result: dict[str, Any] = {"bfcl": None, "tau2": [], "teval": None, "skipped": {}}
    if "bfcl" in plan.benchmarks:
        cfg = BFCLConfig(label=label, handler=spec.handler if spec else "QwenFCHandler",
                         is_fc_model=spec.is_fc_model if spec else True,
                         categories=plan.bfcl_categories, ids=plan.bfcl_ids, tokenizer_path=plan.tokenizer_path,
                         # one bfcl project per model: bfcl's evaluate tabulates every model in
                         # its project, and a child knows only the model it registered
                         project_dir=out / "bfcl" / label, num_threads=plan.bfcl_num_threads,
                         max_new_tokens=plan.bfcl_max_new_tokens,
                         max_steps_per_turn=plan.bfcl_max_steps_per_turn,
                         no_think=_no_think(spec.hf_id if spec else model, plan.thinking))
        adapter = BFCL(cfg)
        adapter.run(endpoint)
        result["bfcl"] = adapter.score()
    if "tau2" in plan.benchmarks:
        ok, why = tau2_available()
        if ok:
            result["tau2"] = evaluate_tau2(model, variant, endpoint, plan)
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
