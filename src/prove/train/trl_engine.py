"""GRPO with TRL's ``GRPOTrainer`` over PROVE's live environments: ``prove train CONFIG --engine trl``.

    prove train smollm2-135m --variant sft                 # SFT (VERL's SFT trainer)
    prove train smollm2-135m --engine trl                  # GRPO with TRL, from that SFT model
    python -m prove.train.trl_engine smollm2-135m --variant recall_only --model DIR \\
        --run-dir results/train/smollm2-135m-recall_only --checkpoints DIR --env-url URL   # what it runs

The same environments, reward and rows as the VERL path, on TRL's trainer (one process, one
device: what a laptop or a single-GPU user runs). TRL's own generation renders one fixed tool set
for every prompt, so PROVE supplies the rollout (TRL's ``rollout_func``) and TRL does everything
else — group advantages, the clipped policy-gradient loss, KL, the optimiser, logging:

* each rollout of a row opens its own live episode on ``prove serve`` from the row's seed and
  prefix (``prove.train.session``, as ``ProveTool`` does); the prompt is rendered with the row's
  offered tools (``extra_info["tools"]``) by the model's chat template;
* generation (sampling as configured) is a vLLM engine in the trainer's process that takes the
  trained weights every step (``rollout.name: vllm``, TRL's colocate mode:
  :mod:`prove.train.trl_vllm`), or the policy's own ``generate`` (``rollout.name: hf``), up to
  ``multi_turn.max_assistant_turns`` assistant turns and ``data.max_response_length`` tokens; every
  ``<tool_call>`` block is parsed as the VERL agent loop parses it (``prove.train.agent_loop
  .hermes_blocks``), run in the episode in the order written, and logged — malformed blocks,
  unknown tools and calls past a limit as failed calls — for the reward;
* tool results are appended as the chat template renders them (VERL's way: the tool turn alone,
  system prompt removed) and masked out of the loss (TRL's ``env_mask``), as VERL masks them;
* when a rollout ends, its episode's effect on the records is read (``effect_hash``, compared
  with the row's ``expected_effect``: the state-verified ``outcome``);
* the loss scores a group's rollouts with their shared prompt computed once
  (:mod:`prove.train.shared_prompt`: the same log-probabilities and gradient as TRL's pass, which
  runs the prompt once per rollout);
* the reward is ``prove.reward.trl.make_trl_reward(variant.reward)`` on that log; zero-weight
  reward columns log calls per rollout, coverage and the outcome each step, and the last one the
  step's reward-hacking signals (``prove/<signal>``, ``prove.reward.signals``).

Every step's metrics go to ``metrics.jsonl`` in VERL's file-logger shape (``{"step", "data"}``), the
final model to ``CHECKPOINTS/global_step_N/huggingface`` (an HF folder ``model.json`` names), and
wandb (offline unless ``WANDB_API_KEY`` is set). TRL's and VERL's settings are mapped from the one
config (:func:`grpo_args`); nothing here is a training loop of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove.train.data import ToolTextCut, cut_tool_text

__all__ = ["TrlSettings", "trl_settings", "ROLLOUT_ENGINES", "rollout_engine", "GPU_MICRO_BATCH", "batch_settings", "grpo_config_kwargs", "grpo_args", "trl_dataset", "ProveRollout", "stop_tokens",
           "make_trainer", "train", "TRL_VLLM_RANGE", "hide_unsupported_vllm", "signals_column", "main"]


@dataclass(frozen=True)
class TrlSettings:
    """What the TRL run takes from the config's VERL keys (one source for both engines)."""

    prompts_per_step: int
    num_generations: int
    max_completion_length: int
    max_assistant_turns: int
    max_parallel_calls: int
    tool_text_cut: ToolTextCut  # how VERL's agent loop shows a tool's result (the config's multi_turn keys)
    temperature: float
    top_p: float
    engine: str
    beta: float
    epsilon: float
    warmup_steps: int
    seed: int


def trl_settings(verl: Mapping[str, Any]) -> TrlSettings:
    """:class:`TrlSettings` from a config's flat VERL overrides (VERL's defaults where unset)."""
    use_kl = bool(verl.get("actor_rollout_ref.actor.use_kl_loss", False))
    return TrlSettings(
        prompts_per_step=int(verl.get("data.train_batch_size", 1)),
        num_generations=int(verl.get("actor_rollout_ref.rollout.n", 1)),
        max_completion_length=int(verl.get("data.max_response_length", 512)),
        max_assistant_turns=int(verl.get("actor_rollout_ref.rollout.multi_turn.max_assistant_turns") or 5),
        max_parallel_calls=int(verl.get("actor_rollout_ref.rollout.multi_turn.max_parallel_calls", 1)),
        tool_text_cut=ToolTextCut.of(verl),
        temperature=float(verl.get("actor_rollout_ref.rollout.temperature", 1.0)),
        top_p=float(verl.get("actor_rollout_ref.rollout.top_p", 1.0)),
        engine=rollout_engine(verl),
        beta=float(verl.get("actor_rollout_ref.actor.kl_loss_coef", 0.001)) if use_kl else 0.0,
        epsilon=float(verl.get("actor_rollout_ref.actor.clip_ratio", 0.2)),
        warmup_steps=int(verl.get("actor_rollout_ref.actor.optim.lr_warmup_steps", 0) or 0),
        seed=int(verl.get("data.seed", 1)),
    )


ROLLOUT_ENGINES = ("vllm", "hf")
"""What generates the TRL engine's rollouts, by the config's ``actor_rollout_ref.rollout.name`` (the
key VERL reads): ``vllm``, a vLLM engine colocated in the trainer's process
(:class:`prove.train.trl_vllm.ColocatedVLLM`); ``hf``, the policy's own ``generate``."""


def rollout_engine(verl: Mapping[str, Any]) -> str:
    """The config's rollout engine for TRL (:data:`ROLLOUT_ENGINES`); raises naming the valid ones."""
    name = str(verl.get("actor_rollout_ref.rollout.name", "vllm"))
    if name not in ROLLOUT_ENGINES:
        raise ValueError(f"actor_rollout_ref.rollout.name={name!r}: the TRL engine generates with "
                         f"{' or '.join(ROLLOUT_ENGINES)} (sglang and trtllm are VERL's only)")
    return name


GPU_MICRO_BATCH = 4
"""Trajectories per forward/backward on a GPU when the config sets no
``actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu`` (the paper configs size by tokens,
``use_dynamic_bsz``, which TRL has no counterpart for)."""


def batch_settings(verl: Mapping[str, Any], device: str, num_processes: int = 1) -> dict[str, int]:
    """TRL's batch keys mirroring VERL's step: one generation of ``train_batch_size x n``
    trajectories per step (``generation_batch_size``), one optimiser step per VERL mini-batch
    (``ppo_mini_batch_size x n`` trajectories: ``per_device_train_batch_size x
    gradient_accumulation_steps x num_processes``), forward passes of the micro-batch. On a CPU
    the whole group is one pass (two cores gain nothing from splitting). Raises with the sizes
    when the mini-batch does not divide the batch."""
    s = trl_settings(verl)
    generation = s.prompts_per_step * s.num_generations
    mini_prompts = int(verl.get("actor_rollout_ref.actor.ppo_mini_batch_size") or s.prompts_per_step)
    mini = min(mini_prompts, s.prompts_per_step) * s.num_generations
    if generation % mini:
        raise ValueError(f"actor_rollout_ref.actor.ppo_mini_batch_size={mini_prompts} does not divide "
                         f"data.train_batch_size={s.prompts_per_step}; VERL and TRL need whole mini-batches")
    per_rank = mini // num_processes if mini % num_processes == 0 else 0
    if per_rank == 0:
        raise ValueError(f"a mini-batch of {mini} trajectories does not split over {num_processes} processes")
    if device == "cpu":
        micro = per_rank
    else:
        wanted = int(verl.get("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu") or GPU_MICRO_BATCH)
        micro = max(d for d in range(1, min(wanted, per_rank) + 1) if per_rank % d == 0)
    return {"per_device_train_batch_size": micro, "gradient_accumulation_steps": per_rank // micro,
            "generation_batch_size": generation}


def grpo_config_kwargs(cfg: Any, variant: Any, checkpoints: Path, run_name: str, *, steps: int,
                       report_to: Sequence[str] = ("wandb",), device: str | None = None,
                       num_processes: int = 1) -> dict[str, Any]:
    """The keyword arguments of TRL's ``GRPOConfig`` for this run (``device``: ``cpu`` or ``cuda``;
    default from the config's ``device``). The config's group size, prompts per step, lengths,
    sampling, clip range and KL coefficient (VERL's ``use_kl_loss``/``kl_loss_coef``: ``beta``), the
    variant's learning rate, VERL's constant schedule after warm-up, :func:`batch_settings`,
    token-mean loss. On a GPU: bf16 and, when the config asks VERL for it, gradient checkpointing.
    ``max_steps`` counts optimiser steps, so a VERL step of k mini-batches is k TRL steps."""
    device = device or ("cpu" if cfg.device == "cpu" else "cuda")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be cpu or cuda, got {device!r}")
    s = trl_settings(cfg.verl)
    batches = batch_settings(cfg.verl, device, num_processes)
    updates = batches["generation_batch_size"] // (
        batches["per_device_train_batch_size"] * batches["gradient_accumulation_steps"] * num_processes)
    gpu = device == "cuda"
    return dict(
        output_dir=str(checkpoints), run_name=run_name, report_to=list(report_to),
        max_steps=int(steps) * updates, learning_rate=float(variant.lr),
        lr_scheduler_type="constant_with_warmup", warmup_steps=s.warmup_steps * updates,
        weight_decay=0.01, max_grad_norm=1.0, **batches, num_generations=s.num_generations,
        max_completion_length=s.max_completion_length, temperature=s.temperature, top_p=s.top_p,
        beta=s.beta, epsilon=s.epsilon, loss_type="dapo", scale_rewards="group",
        seed=s.seed, data_seed=s.seed, use_cpu=not gpu, bf16=gpu, fp16=False,
        gradient_checkpointing=gpu and bool(
            cfg.verl.get("actor_rollout_ref.model.enable_gradient_checkpointing", False)),
        logging_steps=1, save_strategy="no", remove_unused_columns=False, dataloader_num_workers=0,
        log_completions=False, reward_weights=[1.0, 0.0, 0.0, 0.0], disable_dropout=True,
    )


def grpo_args(cfg: Any, variant: Any, checkpoints: Path, run_name: str, *, steps: int,
              report_to: Sequence[str] = ("wandb",), device: str | None = None) -> Any:
    """TRL's ``GRPOConfig`` for this run (:func:`grpo_config_kwargs`)."""
    from trl import GRPOConfig

    return GRPOConfig(**grpo_config_kwargs(cfg, variant, checkpoints, run_name, steps=steps,
                                           report_to=report_to, device=device))


def trl_dataset(parquet: str | Path) -> Any:
    """The config's RL rows (``prove.rows``) as TRL's dataset: ``prompt`` (role and content
    only, what TRL logs), and per row the full messages, offered tools, ground truth and episode
    (seed, prefix, servers) as columns the rollout and the reward read."""
    import datasets
    import pandas as pd

    from prove.rows import decode_messages

    table = pd.read_parquet(parquet)
    records = []
    for prompt, gt, extra in zip(table["prompt"], table["reward_model"], table["extra_info"], strict=True):
        messages = decode_messages(list(prompt))
        create = extra["tools_kwargs"]["prove"]["create_kwargs"]
        records.append({
            "prompt": [{"role": m["role"], "content": m.get("content") or ""} for m in messages],
            "messages": json.dumps(messages, ensure_ascii=False),
            "tools": extra["tools"], "ground_truth": gt["ground_truth"],
            "seed": int(create["seed"]), "prefix": create["prefix"] or "[]",
            "servers": [str(s) for s in create["servers"]], "kind": extra["kind"],
            "example_id": extra["example_id"], "turn": int(extra["turn"]), "index": int(extra["index"]),
            "expected_effect": extra.get("expected_effect") or "",
        })
    if not records:
        raise ValueError(f"{parquet} holds no rows")
    return datasets.Dataset.from_list(records)


def stop_tokens(model: Any, tokenizer: Any) -> list[int]:
    """What ends an assistant turn: the model folder's generation config's EOS ids (the policy
    folder's: ``<|im_end|>`` and ``<|im_start|>``) and the tokenizer's EOS, as the ``hf`` rollout."""
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = [eos] if isinstance(eos, int) else list(eos or [])
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.insert(0, tokenizer.eos_token_id)
    return ids


class ProveRollout:
    """TRL's ``rollout_func``: multi-turn generation against each rollout's live episode (module doc).

    ``trainer.prove_batch`` (set by :class:`ProveGRPOTrainer`) holds the dataset rows aligned with
    ``prompts``. Returns TRL's ``prompt_ids``/``completion_ids``/``logprobs`` (None: TRL computes
    them with the model being trained), ``env_mask`` (0 on tool-result tokens) and ``tool_calls``
    (each rollout's call log, which TRL hands to the reward functions)."""

    def __init__(self, tokenizer: Any, env_urls: Sequence[str], settings: TrlSettings, *,
                 timeout: float = 30.0, tag: str = "trl",
                 template_kwargs: Mapping[str, Any] | None = None, generator: Any = None) -> None:
        self.tokenizer = tokenizer
        self.generator = generator  # a ColocatedVLLM (rollout.name: vllm), or None: the policy's generate
        self.logprobs: list[list[float]] = []  # the engine's, of the last batch's generated tokens
        self.template_kwargs = dict(template_kwargs or {})  # the run's thinking mode (Qwen3's switch)
        self.urls = list(env_urls)
        self.s = settings
        self.timeout = timeout
        self.tag = tag
        self.loop = asyncio.new_event_loop()
        self.batches = 0
        self.tool_seconds = 0.0
        self.generate_seconds = 0.0

    # -- tokens ---------------------------------------------------------------------------------
    def prompt_ids(self, row: Mapping[str, Any]) -> list[int]:
        from prove.train.schema import row_schemas

        ids = self.tokenizer.apply_chat_template(json.loads(row["messages"]),
                                                 tools=row_schemas(row["tools"]) or None,
                                                 add_generation_prompt=True, tokenize=True,
                                                 **self.template_kwargs)
        return list(ids["input_ids"] if isinstance(ids, Mapping) else ids)

    def tool_ids(self, messages: list[dict[str, Any]]) -> list[int]:
        """Tokens that follow an assistant turn ending in EOS to show ``messages`` (tool results)
        and open the next assistant turn, as the chat template renders them (TRL's rule: the
        template's text after the EOS of an assistant turn)."""
        def render(conversation: list[dict[str, Any]], generation_prompt: bool) -> list[int]:
            ids = self.tokenizer.apply_chat_template(conversation, add_generation_prompt=generation_prompt,
                                                     tokenize=True, **self.template_kwargs)
            return list(ids["input_ids"] if isinstance(ids, Mapping) else ids)

        dummy = [{"role": "user", "content": "dummy"},
                 {"role": "assistant", "content": "", "tool_calls": [
                     {"type": "function", "function": {"name": messages[0]["name"], "arguments": {}}}]}]
        prefix, full = render(dummy, False), render(dummy + messages, True)
        eos = [k for k, t in enumerate(prefix) if t == self.tokenizer.eos_token_id]
        if eos:
            prefix = prefix[: eos[-1] + 1]
        if full[: len(prefix)] != prefix:
            raise ValueError("the chat template does not render tool results append-only")
        return full[len(prefix):]

    def _generate(self, model: Any, contexts: list[list[int]], budgets: list[int], eos: list[int]) -> list[list[int]]:
        import time

        import torch

        start = time.perf_counter()
        if self.generator is not None:
            gens, logps = self.generator.generate(contexts, budgets, eos, temperature=self.s.temperature,
                                                  top_p=self.s.top_p)
            self.logprobs = logps
            self.generate_seconds += time.perf_counter() - start
            return gens
        pad = self.tokenizer.pad_token_id
        width = max(len(c) for c in contexts)
        device = getattr(model, "device", "cpu")  # the trainer's device (a GPU run: cuda)
        ids = torch.tensor([[pad] * (width - len(c)) + c for c in contexts], device=device)
        mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts], device=device)
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max(budgets),
                                 do_sample=self.s.temperature > 0, temperature=self.s.temperature,
                                 top_p=self.s.top_p, top_k=0, eos_token_id=eos, pad_token_id=pad,
                                 use_cache=True)
        gens = []
        for row, budget in zip(out[:, width:].tolist(), budgets, strict=True):
            cut = next((k + 1 for k, t in enumerate(row) if t in eos), len(row))
            gens.append(row[: min(cut, budget)])
        self.generate_seconds += time.perf_counter() - start
        return gens

    # -- calls ----------------------------------------------------------------------------------
    def _run_calls(self, episode: str, row: Mapping[str, Any], blocks: list[Any], log: list[dict],
                   replay: list[dict], limit: str | None) -> list[dict[str, Any]]:
        """Run (or refuse) a turn's blocks in order; log each; return the tool messages to show."""
        import time

        from prove.train.session import (
            call_in_episode,
            refuse_arguments,
            refuse_unoffered,
        )

        offered = {t.get("function", t).get("name") for t in json.loads(row["tools"] or "[]")}
        spec = _spec(row)
        shown: list[dict[str, Any]] = []
        ran = 0
        for block in blocks:
            if block.call is None:
                log.append(block.failed())
                continue
            if limit is not None:
                log.append(block.failed(f"not run: {limit}"))
                continue
            if ran >= self.s.max_parallel_calls:
                log.append(block.failed(f"not run: more than {self.s.max_parallel_calls} calls in one "
                                        f"assistant turn (multi_turn.max_parallel_calls)"))
                continue
            ran += 1
            name = block.call.name
            arguments = json.loads(block.call.arguments)
            refused = (refuse_unoffered(name, arguments) if name not in offered else refuse_arguments(name, block.call.arguments))
            if refused is not None:
                entry, text = refused, f"Error: {refused['error']}"
            else:
                start = time.perf_counter()
                text, entry = self.loop.run_until_complete(call_in_episode(
                    self.urls, name, arguments, episode_id=episode, spec=spec, replay=replay,
                    timeout=self.timeout))
                self.tool_seconds += time.perf_counter() - start
            log.append(entry)
            shown.append({"role": "tool", "name": name, "content": text})
        return shown

    def _tool_message_ids(self, shown: list[dict[str, Any]]) -> list[int]:
        return self.tool_ids([{**m, "content": cut_tool_text(m["content"], self.s.tool_text_cut)} for m in shown])

    # -- rollout --------------------------------------------------------------------------------
    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        rows = getattr(trainer, "prove_batch", None)
        if rows is None or len(rows) != len(prompts):
            raise RuntimeError("ProveRollout needs the batch's rows (ProveGRPOTrainer sets them)")
        model = trainer.accelerator.unwrap_model(trainer.model)
        if self.generator is not None:  # the weights being trained, into the engine, once a step
            self.generator.sync(model, int(trainer.state.global_step))
        return self.rollouts(model, rows, int(trainer.state.global_step))

    def rollouts(self, model: Any, rows: Sequence[Mapping[str, Any]], step: int = 0) -> dict[str, Any]:
        """One rollout per row (a row repeated k times: k rollouts of its prompt), each in its own
        episode; the keys TRL's ``rollout_func`` returns (see the class doc)."""
        from prove.train.agent_loop import hermes_blocks
        from prove.train.session import close_episode, episode_effect

        eos = stop_tokens(model, self.tokenizer)
        n = len(rows)
        prompt_ids = [self.prompt_ids(r) for r in rows]
        completion: list[list[int]] = [[] for _ in range(n)]
        mask: list[list[int]] = [[] for _ in range(n)]
        logs: list[list[dict]] = [[] for _ in range(n)]
        replays: list[list[dict]] = [[] for _ in range(n)]
        episodes = [f"{self.tag}-b{self.batches}-s{step}-r{i}" for i in range(n)]
        self.batches += 1
        L = self.s.max_completion_length
        active = list(range(n))
        effects = [""] * n
        was_training = model.training
        model.eval()
        try:
            for turn in range(1, self.s.max_assistant_turns + 1):
                if not active:
                    break
                gens = self._generate(model, [prompt_ids[i] + completion[i] for i in active],
                                      [L - len(completion[i]) for i in active], eos)
                still = []
                for i, gen in zip(active, gens, strict=True):
                    completion[i] += gen
                    mask[i] += [1] * len(gen)
                    blocks = hermes_blocks(self.tokenizer.decode(gen, skip_special_tokens=False))
                    if not blocks:
                        continue
                    ended = bool(gen) and gen[-1] in eos
                    limit = (None if ended and turn < self.s.max_assistant_turns else
                             f"the rollout reached response_length={L} tokens" if not ended else
                             f"the rollout reached multi_turn.max_assistant_turns={self.s.max_assistant_turns}")
                    shown = self._run_calls(episodes[i], rows[i], blocks, logs[i], replays[i], limit)
                    if limit is not None or not shown:
                        continue
                    suffix = self._tool_message_ids(shown)
                    if len(completion[i]) + len(suffix) >= L:
                        continue  # no room left to answer: the rollout ends after its calls
                    completion[i] += suffix
                    mask[i] += [0] * len(suffix)
                    still.append(i)
                active = still
            # what each episode did to the records (one without a call is opened at its prefix)
            effects = [self.loop.run_until_complete(episode_effect(
                self.urls, episodes[i], spec=_spec(rows[i]), replay=replays[i], timeout=self.timeout))
                for i in range(n)]
        finally:
            if was_training:
                model.train()
            for episode, log, effect in zip(episodes, logs, effects, strict=True):
                if log or effect:  # opened by a call, or to be read; else it was never opened
                    self.loop.run_until_complete(close_episode(self.urls, episode, self.timeout))
        return {"prompt_ids": prompt_ids, "completion_ids": completion, "logprobs": None,
                "env_mask": mask, "tool_calls": logs, "effect_hash": effects}

    def close(self) -> None:
        from prove.train.session import close_clients

        self.loop.run_until_complete(close_clients())
        self.loop.close()
        if self.generator is not None:
            self.generator.close()


def _spec(row: Mapping[str, Any]) -> Any:
    """The episode a row's rollouts open (seed, prefix, servers: ``prove.rows.EpisodeSpec``)."""
    from prove.rows import episode_spec

    return episode_spec({"seed": row["seed"], "prefix": row["prefix"], "servers": row["servers"]})


def _calls_column(completions: Any = (), tool_calls: Sequence[Any] | None = None, **_: Any) -> list[float]:
    """Calls made per rollout (zero weight: logged, not rewarded)."""
    return [float(len(log or [])) for log in (tool_calls or [None] * len(completions))]


def _coverage_column(completions: Any = (), ground_truth: Sequence[Any] | None = None,
                     tools: Sequence[Any] | None = None, tool_calls: Sequence[Any] | None = None,
                     **_: Any) -> list[float]:
    """PROVE's coverage component per rollout (zero weight: logged, not rewarded)."""
    from prove.reward.trl import score_batch

    return [float(s["coverage"]) for s in score_batch(completions, ground_truth, tools, tool_calls, "prove")]


def signals_column(config: Any = None) -> Any:
    """A zero-weight reward column (logged, not rewarded) that returns each rollout's state-verified
    outcome (``rewards/outcome/mean``: the step's state success) and logs the step's reward-hacking
    signals (``prove.reward.signals``, under the reward the run trains on) as ``prove/<signal>``
    through TRL's ``log_metric``, so they reach ``metrics.jsonl`` and wandb every step."""
    def outcome(completions: Any = (), ground_truth: Sequence[Any] | None = None,
                tools: Sequence[Any] | None = None, tool_calls: Sequence[Any] | None = None,
                effect_hash: Sequence[Any] | None = None, expected_effect: Sequence[Any] | None = None,
                log_metric: Any = None, **_: Any) -> list[float]:
        from prove.reward.signals import hacking_signals
        from prove.reward.trl import score_batch

        scores = score_batch(completions, ground_truth, tools, tool_calls, config, effect_hash, expected_effect)
        if log_metric is not None:
            for key, value in hacking_signals(scores).items():
                if math.isfinite(value):
                    log_metric(f"prove/{key}", value)
        return [float(s["outcome"]) for s in scores]

    outcome.__name__ = "outcome"
    return outcome


_calls_column.__name__ = "calls"
_coverage_column.__name__ = "coverage"



TRL_VLLM_RANGE = ("0.19.0", "0.27.1")
"""The vLLM versions TRL 1.12 supports (``trl.import_utils.is_vllm_available``)."""


def hide_unsupported_vllm() -> bool:
    """Tell TRL that vLLM is absent when the installed one is outside TRL's range; True if so.

    TRL 1.12 imports vLLM's NCCL weight-transfer names at module load whenever vLLM is installed
    (``trl/generation/vllm_client.py``); vLLM's CPU build (0.30, which ``./run_all.sh`` installs on a
    CPU machine to serve models) lacks them, so ``GRPOTrainer`` itself fails to import. This engine
    never generates with TRL's vLLM client on such a machine (its rollout is ``ProveRollout``), so
    TRL is told the truth that matters: no vLLM it can use. Must run before TRL's trainer is imported."""
    from packaging.version import Version
    from trl import import_utils

    found, version = import_utils._is_package_available("vllm", return_version=True)
    if not found or Version(TRL_VLLM_RANGE[0]) <= Version(Version(version).base_version) <= Version(
            TRL_VLLM_RANGE[1]):
        return False
    import_utils.is_vllm_available = lambda min_version=None: False
    return True


def make_trainer(model_dir: str | Path, cfg: Any, variant: Any, env_urls: Sequence[str], checkpoints: Path,
                 run_name: str, *, steps: int, metrics: Path | None = None,
                 report_to: Sequence[str] = ("wandb",)) -> Any:
    """A ready ``ProveGRPOTrainer`` (TRL's ``GRPOTrainer`` that hands the batch to the rollout)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback

    hide_unsupported_vllm()
    from trl import GRPOTrainer

    from prove.reward.trl import make_trl_reward

    class ProveGRPOTrainer(GRPOTrainer):
        """GRPOTrainer that keeps the rows of the batch it generates for (``ProveRollout`` reads them)."""

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
            self.prove_batch = inputs
            try:
                return super()._generate_and_score_completions(inputs)
            finally:
                self.prove_batch = None

        def _get_per_token_logps_and_entropies(self, model: Any, input_ids: Any, attention_mask: Any,
                                               logits_to_keep: int, batch_size: int | None = None,
                                               compute_entropy: bool = False, compute_aux_loss: bool = False,
                                               **multimodal: Any) -> tuple[Any, Any, Any]:
            """TRL's pass, with each group's shared prompt computed once (``prove.train.shared_prompt``:
            same log-probabilities and gradient); TRL's own for images and MoE auxiliary losses."""
            if compute_aux_loss or any(v is not None for v in multimodal.values()):
                return super()._get_per_token_logps_and_entropies(
                    model, input_ids, attention_mask, logits_to_keep, batch_size, compute_entropy,
                    compute_aux_loss, **multimodal)
            from prove.train.shared_prompt import shared_prompt_logps

            size = batch_size or input_ids.size(0)
            parts = [shared_prompt_logps(model, input_ids[i: i + size], attention_mask[i: i + size],
                                         logits_to_keep, temperature=self.temperature,
                                         compute_entropy=compute_entropy,
                                         entropy_grad=self._entropy_bonus_enabled)
                     for i in range(0, input_ids.size(0), size)]
            logps = torch.cat([p[0] for p in parts], dim=0)
            entropies = torch.cat([p[1] for p in parts], dim=0) if compute_entropy else None
            return logps, entropies, None

    class MetricsFile(TrainerCallback):
        """Every logged step into metrics.jsonl as VERL's file logger writes it."""

        def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **kw: Any) -> None:
            if metrics is None or not logs or "train_runtime" in logs:
                return
            data = {k: float(v) for k, v in logs.items() if isinstance(v, (int, float)) and math.isfinite(v)}
            data["timing_s/rollout_tools"] = rollout.tool_seconds
            data["timing_s/rollout_generate"] = rollout.generate_seconds
            if rollout.generator is not None:
                data["timing_s/rollout_weight_sync"] = rollout.generator.sync_seconds
            with metrics.open("a") as fh:
                fh.write(json.dumps({"step": int(state.global_step), "data": data}) + "\n")

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.padding_side = "left"
    gpu = cfg.device != "cpu" and torch.cuda.is_available()
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16 if gpu else torch.float32)
    settings = trl_settings(cfg.verl)
    rollout = ProveRollout(tokenizer, env_urls, settings, timeout=cfg.env.timeout,
                           tag=f"trl-{cfg.experiment(variant.name)}",
                           template_kwargs=cfg.chat_template_kwargs())
    args = grpo_args(cfg, variant, checkpoints, run_name, steps=steps, report_to=report_to,
                     device="cuda" if gpu else "cpu")
    trainer = ProveGRPOTrainer(
        model=model, processing_class=tokenizer, args=args,
        reward_funcs=[make_trl_reward(variant.reward), _calls_column, _coverage_column,
                      signals_column(variant.reward)],
        train_dataset=trl_dataset(cfg.data.resolve("rl_train")), rollout_func=rollout,
        callbacks=[MetricsFile()],
    )
    if settings.engine == "vllm":  # after the trainer, as TRL builds its colocated engine
        from prove.train.trl_vllm import ColocatedVLLM

        rollout.generator = ColocatedVLLM(model_dir, cfg, device="cuda" if gpu else "cpu",
                                          seed=settings.seed)
    trainer.prove_rollout = rollout
    return trainer


def train(model_dir: str | Path, cfg: Any, variant: Any, env_urls: Sequence[str], run_dir: Path,
          checkpoints: Path, *, steps: int, report_to: Sequence[str] = ("wandb",)) -> Path:
    """Run GRPO; save the final model as ``checkpoints/global_step_N/huggingface``; return it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    trainer = make_trainer(model_dir, cfg, variant, env_urls, checkpoints, cfg.experiment(variant.name),
                           steps=steps, metrics=run_dir / "metrics.jsonl", report_to=report_to)
    try:
        trainer.train()
    finally:
        trainer.prove_rollout.close()
    out = checkpoints / f"global_step_{trainer.state.global_step}" / "huggingface"
    trainer.save_model(str(out))
    trainer.processing_class.save_pretrained(str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    import os

    from prove.train.config import load_train_config

    parser = argparse.ArgumentParser(prog="python -m prove.train.trl_engine", description=__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("--variant", default="default")
    parser.add_argument("--model", required=True, help="HF model folder the run starts from")
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--checkpoints", required=True)
    parser.add_argument("--env-url", action="append", required=True)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--thinking", action=argparse.BooleanOptionalAction, default=None,
                        help="the profile's thinking mode (default: the config's)")
    args = parser.parse_args(argv)
    cfg = load_train_config(args.config).with_thinking(args.thinking)
    variant = cfg.variant(args.variant)
    if variant.trainer != "grpo":
        parser.error(f"variant {variant.name!r} trains with {variant.trainer}; the TRL engine runs GRPO")
    report_to = ["wandb"] if "wandb" in (cfg.verl.get("trainer.logger") or []) else []
    if os.environ.get("WANDB_MODE") == "disabled":
        report_to = []
    out = train(args.model, cfg, variant, args.env_url, Path(args.run_dir), Path(args.checkpoints),
                steps=args.steps or cfg.steps, report_to=report_to)
    print(f"# saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
