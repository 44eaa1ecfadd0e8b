"""Token-in/token-out generation with Hugging Face ``generate``: the rollout server of the CPU chain.

    server = HFGenerateServer(rollout_config, model_config)     # or ray.remote(HFGenerateServer)
    out = await server.generate(prompt_ids=ids, sampling_params={"temperature": 0}, request_id="r")

vLLM's server interface as VERL's agent loop calls it (``generate`` returns VERL's ``TokenOutput``),
plus ``update_weights`` for the actor's parameters. ``prove.train.cpu``'s ``hf`` replica runs it as a
Ray actor in training; ``prove.eval.heldout`` runs it in-process (on a GPU when there is one) to
evaluate a model folder through the same agent path. It patches nothing.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

import torch

__all__ = ["HFGenerateServer"]


class HFGenerateServer:
    """A Ray actor that generates with Hugging Face ``generate``: the CPU stand-in for vLLM.

    ``generate`` has vLLM server's signature and returns VERL's ``TokenOutput`` (the sampled ids,
    their log-probabilities under the raw logits, a stop reason). Requests run one at a time on a
    worker thread so the actor keeps answering control calls; ``update_weights`` swaps in the
    actor's current parameters between steps.
    """

    def __init__(self, config: Any, model_config: Any, replica_rank: int = 0) -> None:
        from transformers import AutoModelForCausalLM
        from verl.utils.config import omega_conf_to_dataclass

        self.config = omega_conf_to_dataclass(config)
        self.model_config = model_config
        path = getattr(model_config, "local_path", None) or model_config.path
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = torch.bfloat16 if self.device == "cuda" else torch.float32
        self.model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=dtype,
                                                          attn_implementation="sdpa").to(self.device)
        self.model.eval()
        tokenizer = getattr(model_config, "tokenizer", None)
        eos_ids = self.model.generation_config.eos_token_id  # the folder's generation_config.json
        if eos_ids is None and tokenizer is not None:
            eos_ids = tokenizer.eos_token_id
        self.eos_ids = [eos_ids] if isinstance(eos_ids, int) else list(eos_ids or [])
        self.pad_id = (tokenizer.pad_token_id if tokenizer is not None and tokenizer.pad_token_id
                       is not None else (self.eos_ids[0] if self.eos_ids else 0))
        self.replica_rank = replica_rank
        self.global_steps: int | None = None
        self.weight_updates = 0
        self._lock = threading.Lock()
        torch.manual_seed(int(os.environ.get("PROVE_ROLLOUT_SEED", "0")))  # sampling is seeded

    # -- generation ------------------------------------------------------------------------------
    def _max_tokens(self, prompt_len: int, sampling_params: dict[str, Any]) -> int:
        cfg = self.config
        limit = sampling_params.get("max_tokens", sampling_params.get("max_new_tokens"))
        if limit is None:
            limit = min(cfg.response_length, cfg.prompt_length + cfg.response_length - prompt_len)
        room = (cfg.max_model_len or cfg.prompt_length + cfg.response_length) - prompt_len
        if room < 1:
            raise ValueError(f"prompt of {prompt_len} tokens leaves no room to generate within "
                             f"the model's {room + prompt_len}-token context")
        return max(1, min(int(limit), room))

    def _sample(self, prompt_ids: list[int], sampling_params: dict[str, Any]) -> dict[str, Any]:
        temperature = float(sampling_params.get("temperature", 1.0) or 0.0)
        top_k = int(sampling_params.get("top_k", -1) or -1)
        options: dict[str, Any] = {"do_sample": temperature > 0.0}
        if temperature > 0.0:
            options.update(temperature=temperature, top_p=float(sampling_params.get("top_p", 1.0) or 1.0),
                           top_k=top_k if top_k > 0 else None)
        ids = torch.tensor([prompt_ids], dtype=torch.long, device=self.device)
        with self._lock, torch.no_grad():
            out = self.model.generate(
                input_ids=ids, attention_mask=torch.ones_like(ids),
                max_new_tokens=self._max_tokens(len(prompt_ids), sampling_params),
                eos_token_id=self.eos_ids or None, pad_token_id=self.pad_id,
                return_dict_in_generate=True, output_logits=True, **options)
        tokens = out.sequences[0, ids.shape[1]:].tolist()
        log_probs = [float(torch.log_softmax(step[0].float(), dim=-1)[token])
                     for step, token in zip(out.logits, tokens, strict=False)]
        stop = "completed" if tokens and tokens[-1] in self.eos_ids else "length"
        return {"token_ids": tokens, "log_probs": log_probs, "stop": stop}

    async def generate(self, prompt_ids: list[int], sampling_params: dict[str, Any], request_id: str,
                       **kwargs: Any) -> Any:
        from verl.utils import normalize_token_ids
        from verl.workers.rollout.replica import TokenOutput

        prompt = normalize_token_ids(prompt_ids)
        result = await asyncio.to_thread(self._sample, prompt, dict(sampling_params))
        return TokenOutput(
            token_ids=result["token_ids"],
            log_probs=result["log_probs"] if sampling_params.get("logprobs", True) else None,
            stop_reason="completed",
            num_preempted=0,
            extra_fields={"global_steps": self.global_steps, "finish_reason": result["stop"]},
        )

    # -- weights -----------------------------------------------------------------------------------
    def update_weights(self, state: dict[str, torch.Tensor], global_steps: int | None = None) -> int:
        """Load the actor's parameters (HF names); returns how many tensors were loaded."""
        own = self.model.state_dict()
        unknown = sorted(set(state) - set(own))
        if unknown:
            raise ValueError(f"weights for parameters the rollout model lacks: {unknown[:5]}")
        with self._lock, torch.no_grad():
            for name, tensor in state.items():
                own[name].copy_(tensor.to(own[name].device, own[name].dtype))
            if getattr(self.model.config, "tie_word_embeddings", False):
                self.model.tie_weights()
        self.global_steps = global_steps
        self.weight_updates += 1
        return len(state)

    def stats(self) -> dict[str, Any]:
        return {"weight_updates": self.weight_updates, "global_steps": self.global_steps}

    def checksum(self) -> float:
        """Sum of every parameter: a cheap fingerprint tests use to see weights change."""
        with self._lock, torch.no_grad():
            return float(sum(p.double().sum() for p in self.model.parameters()))

    # -- the control surface VERL calls on every replica (nothing to free on a CPU) ---------------
    async def wake_up(self, tags: list[str] | None = None) -> None:
        return None

    async def sleep(self) -> None:
        return None

    async def clear_kv_cache(self) -> None:
        return None

    async def release_kv_cache(self) -> None:
        return None

    async def resume_kv_cache(self) -> None:
        return None

    async def abort_all_requests(self, reject_request: bool = False, **kwargs: Any) -> dict[str, Any]:
        return {}

    async def resume_generation(self) -> None:
        return None

    async def start_profile(self, **kwargs: Any) -> None:
        return None

    async def stop_profile(self) -> None:
        return None
