"""Run PROVE rollouts through VERL's own agent-loop and reward-loop workers on CPU, with a scripted policy.

    from prove.train.rollout import ScriptedLLM, make_worker, oracle_script, rollout_batch
    worker = make_worker(verl_cfg, ScriptedLLM(tokenizer, rows, scripts))   # AgentLoopWorker
    out = await worker.generate_sequences(rollout_batch(verl_cfg, parquet))  # DataProto, scored

Everything but generation is real: VERL's ``AgentLoopWorker`` built from the composed config (it
loads the ``ProveTool`` objects from the tool YAML, registers ``prove_tool_agent`` from
``configs/train/agent_loops.yaml``, reads the model's ``config.json`` for the continuous-token
builder — ``policy_dir`` writes a Qwen3-style one, so Qwen3's builder runs — and instantiates a
``ProveAgentLoop`` per sample), VERL's hermes parser, calls to ``prove serve`` over HTTP, and the
reward computed by VERL's ``AgentLoopWorker._compute_score`` → ``RewardLoopWorker`` →
``NaiveRewardManager`` → the configured ``reward.custom_reward_function``. The reward worker runs
in this process (``LocalActor`` answers ``handle.compute_score.remote(...)`` as its Ray handle
would). ``ScriptedLLM`` replaces the LLM server client: it returns the token ids of prepared
assistant turns, picked by the row whose user messages the prompt holds (``oracle_script`` writes a
row's ground-truth calls in hermes format).

``run_rollouts`` / ``score_with_verl`` keep the older per-trajectory interface (unpadded
``AgentLoopOutput``s, used by ``prove.train.smoke``) on the same VERL classes.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from verl import DataProto
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput, AgentLoopWorker
from verl.workers.rollout.replica import TokenOutput

from prove.rows import decode_messages

__all__ = [
    "ScriptedLLM", "LocalActor", "oracle_script", "padding_calls", "policy_dir", "with_policy", "make_worker",
    "rollout_batch", "run_trajectories", "make_agent_loop", "run_rollouts", "score_with_verl",
]


def _user_texts(row: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(m.get("content") or "") for m in decode_messages(row["prompt"]) if m["role"] == "user")


class ScriptedLLM:
    """Stands in for VERL's LLM server client. A trajectory's first ``generate`` picks the row whose
    user messages its prompt holds (the most of them); each call returns that row's next turn."""

    def __init__(self, tokenizer: Any, rows: Sequence[Mapping[str, Any]], scripts: Sequence[Sequence[str]],
                 fail_at: Sequence[int | None] | None = None) -> None:
        self.tokenizer = tokenizer
        self.keys: dict[tuple[str, ...], tuple[list[str], int | None]] = {}
        fail_at = list(fail_at) if fail_at is not None else [None] * len(rows)
        for row, script, fail in zip(rows, scripts, fail_at, strict=True):
            key, value = _user_texts(row), (list(script), fail)
            if self.keys.setdefault(key, value) != value:
                raise ValueError(f"two rows with the same user messages {key[-1][:60]!r} have different "
                                 "scripts; run them in separate batches")
        self.turn: dict[str, int] = {}
        self.script: dict[str, tuple[list[str], int | None]] = {}
        self.calls = 0

    def _pick(self, prompt_ids: list[int]) -> tuple[list[str], int | None]:
        text = self.tokenizer.decode(prompt_ids)
        hits = [(len(k), k) for k in self.keys if all(part in text for part in k)]
        if not hits:
            raise LookupError("the prompt holds no scripted row's user messages")
        return self.keys[max(hits)[1]]

    async def generate(self, *, request_id: str, prompt_ids: list[int], sampling_params: dict,
                       **kwargs: Any) -> TokenOutput:
        if request_id not in self.script:
            self.script[request_id] = self._pick(prompt_ids)
        turns, fail_at = self.script[request_id]
        index = self.turn[request_id] = self.turn.get(request_id, -1) + 1
        self.calls += 1
        if fail_at is not None and index == fail_at:
            raise RuntimeError("scripted generation failure")
        text = turns[index] if index < len(turns) else "Done."
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        await asyncio.sleep(0)  # yield like a real server would
        return TokenOutput(token_ids=ids, log_probs=[0.0] * len(ids), stop_reason="completed")


class LocalActor:
    """A VERL worker called through the shape of its Ray handle (``handle.method.remote(...)``)."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.worker, name)

        class _Remote:
            remote = staticmethod(method)

        return _Remote


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


UNKNOWN_TOOL = {"name": "open_pod_bay_doors", "arguments": {}}


def padding_calls(row: Mapping[str, Any], registry: Any = None) -> list[dict[str, Any]]:
    """Calls that pad a turn beyond its ground truth: a lookup that succeeds (the first tool the
    row offers that reads, belongs to one of its servers and needs no argument, asked for one
    item when it pages) and a call to a tool that does not exist. Only the unknown call when the
    row offers no such lookup."""
    from prove.env.registry import load_registry

    reg = registry if registry is not None else load_registry()
    servers = set(row["extra_info"]["servers"])
    for name in row["extra_info"]["tool_selection"]:
        spec = reg.tools.get(name)
        if spec is not None and not spec.write and not spec.required and spec.server in servers:
            arguments = {"limit": 1} if "limit" in spec.params else {}
            return [{"name": name, "arguments": arguments}, dict(UNKNOWN_TOOL)]
    return [dict(UNKNOWN_TOOL)]


def policy_dir(out: str | Path, tokenizer: Any, model_type: str = "qwen3") -> Path:
    """A model folder VERL's ``HFModelConfig`` loads without weights: ``tokenizer`` (its chat
    template included) and a tiny ``config.json`` of ``model_type`` (what selects VERL's
    continuous-token builder; ``qwen3`` → ``QwenContinuousTokenBuilder``)."""
    from transformers import AutoConfig

    out = Path(out)
    if not (out / "config.json").is_file():
        config = AutoConfig.for_model(
            model_type, vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128,
            num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=32,
            architectures=[{"qwen3": "Qwen3ForCausalLM", "qwen2": "Qwen2ForCausalLM"}.get(
                model_type, "LlamaForCausalLM")])
        tokenizer.save_pretrained(out)
        config.save_pretrained(out)
    return out


def with_policy(verl_cfg: Any, path: str | Path) -> Any:
    """A copy of ``verl_cfg`` whose actor/rollout model (and so tokenizer) is the folder ``path``."""
    from omegaconf import OmegaConf, open_dict

    cfg = OmegaConf.create(OmegaConf.to_container(verl_cfg, resolve=False))
    with open_dict(cfg):
        cfg.actor_rollout_ref.model.path = str(path)
        cfg.actor_rollout_ref.model.tokenizer_path = None
    return cfg


def make_worker(verl_cfg: Any, llm: Any, *, reward: bool = True) -> AgentLoopWorker:
    """VERL's ``AgentLoopWorker`` for ``verl_cfg`` (its model path a local folder, see ``policy_dir``)
    with ``llm`` as its LLM client and, with ``reward``, a real ``RewardLoopWorker`` in-process.
    Build it inside the event loop that will run it: VERL's workers bind the loop they start on."""
    handles = None
    if reward:
        from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

        handles = [LocalActor(RewardLoopWorker(verl_cfg))]
    return AgentLoopWorker(verl_cfg, llm, reward_loop_worker_handles=handles)


def rollout_batch(verl_cfg: Any, parquet: str | Path, tokenizer: Any, *, n: int = 1,
                  indices: Sequence[int] | None = None) -> DataProto:
    """The batch the trainer hands the rollout: ``ProveRLDataset`` rows (``data.custom_cls``) through
    VERL's ``collate_fn``, repeated ``n`` times per prompt (GRPO), each with a uid."""
    import uuid

    import numpy as np
    from verl.utils.dataset.rl_dataset import collate_fn, get_dataset_class

    dataset = get_dataset_class(verl_cfg.data)(str(parquet), tokenizer, verl_cfg.data)
    items = [dataset[i] for i in (indices if indices is not None else range(len(dataset)))]
    batch = DataProto.from_single_dict(collate_fn(items))
    batch.non_tensor_batch["uid"] = np.array([uuid.uuid4().hex for _ in items], dtype=object)
    batch = batch.repeat(repeat_times=n, interleave=True)
    batch.meta_info["global_steps"] = 1
    return batch


async def run_trajectories(worker: AgentLoopWorker, batch: DataProto) -> list[Any]:
    """``worker.generate_sequences`` one sample at a time through VERL's ``_run_agent_loop`` (so
    also its reward), returning each trajectory's padded output or its exception."""
    from verl.experimental.agent_loop.agent_loop import get_trajectory_info

    index = batch.non_tensor_batch["index"]
    info = await get_trajectory_info(1, list(index), False)
    params = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": False}
    tasks = [worker._run_agent_loop(dict(params), info[i], trace=False,
                                    **{k: v[i] for k, v in batch.non_tensor_batch.items()})
             for i in range(len(batch))]
    return await asyncio.gather(*tasks, return_exceptions=True)


def make_agent_loop(verl_cfg: Any, tokenizer: Any, tools: Sequence[Any], llm: Any,
                    hf_model_type: str | None = "qwen3") -> Any:
    """A ``ProveAgentLoop`` built the way ``AgentLoopWorker._run_agent_loop`` builds one per sample:
    ``hydra.utils.instantiate`` of the ``agent_loops.yaml`` entry the config names, with the
    model's ``hf_model_type`` (the Qwen3 continuous-token builder by default)."""
    import hydra
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap

    from prove.rows import AGENT_NAME

    path = verl_cfg.actor_rollout_ref.rollout.agent.agent_loop_config_path
    entries = {e.name: e for e in OmegaConf.load(path)}
    if AGENT_NAME not in entries:
        raise ValueError(f"{path} registers no {AGENT_NAME!r} agent loop")
    from prove.train.dataset import ProveRLDataset

    return hydra.utils.instantiate(
        config=entries[AGENT_NAME], trainer_config=DictConfigWrap(config=verl_cfg), server_manager=llm,
        tokenizer=tokenizer, processor=None, hf_model_type=hf_model_type, dataset_cls=ProveRLDataset,
        data_config=DictConfigWrap(verl_cfg.data), tools=ToolListWrap(list(tools)),
    )


def _row_kwargs(row: Mapping[str, Any]) -> dict[str, Any]:
    """What VERL's dataset hands the loop for a row (``RLHFDataset.__getitem__``'s lifted keys)."""
    extra = dict(row["extra_info"])
    return {"raw_prompt": decode_messages(row["prompt"]), "extra_info": extra,
            "tools_kwargs": extra.get("tools_kwargs") or {}, "index": extra.get("index", 0),
            "data_source": row["data_source"], "agent_name": row["agent_name"],
            "reward_model": dict(row["reward_model"])}


async def run_rollouts(verl_cfg: Any, tokenizer: Any, tools: Sequence[Any],
                       rows: Sequence[Mapping[str, Any]], scripts: Sequence[Sequence[str]],
                       fail_at: Sequence[int | None] | None = None) -> list[AgentLoopOutput | BaseException]:
    """One unpadded trajectory per (row, script), all concurrent, each loop built by
    ``make_agent_loop``; a trajectory that raises is returned as its exception."""
    fail_at = list(fail_at) if fail_at is not None else [None] * len(rows)
    loops = [make_agent_loop(verl_cfg, tokenizer, tools, ScriptedLLM(tokenizer, [row], [script], [f]))
             for row, script, f in zip(rows, scripts, fail_at, strict=True)]
    return await asyncio.gather(
        *(loop.run({"temperature": 1.0}, **_row_kwargs(row)) for loop, row in zip(loops, rows, strict=True)),
        return_exceptions=True,
    )


async def score_with_verl(verl_cfg: Any, tokenizer: Any, rows: Sequence[Mapping[str, Any]],
                          outputs: Sequence[AgentLoopOutput]) -> list[dict[str, Any]]:
    """Score trajectories with VERL's own ``AgentLoopWorker._compute_score`` (→ ``RewardLoopWorker``
    → reward manager → ``reward.custom_reward_function``), the model folder being ``tokenizer``'s
    (``policy_dir``) when the config's model path is not a local folder."""
    with tempfile.TemporaryDirectory(prefix="prove-policy-") as tmp:
        model = Path(str(verl_cfg.actor_rollout_ref.model.path))
        cfg = with_policy(verl_cfg, model if model.is_dir() else policy_dir(Path(tmp) / "policy", tokenizer))
        cfg.actor_rollout_ref.rollout.multi_turn.tool_config_path = None  # scoring runs no tool
        worker = make_worker(cfg, llm=None)
        results = []
        for row, output in zip(rows, outputs, strict=True):
            scored = output.model_copy(update={"extra_fields": dict(output.extra_fields), "reward_score": None})
            await worker._compute_score([scored], _row_kwargs(row))
            results.append({"reward_score": scored.reward_score, **scored.extra_fields["reward_extra_info"]})
    return results
