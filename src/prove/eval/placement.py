"""Which GPUs each model 06 serves gets: the policy under evaluation and τ²'s user simulator, planned
and checked before anything starts, and printed.

    from prove.eval.placement import plan_placement
    plan = plan_placement(load_profile("paper").eval.serve, policy="Qwen/Qwen3-8B",
                          user="Qwen/Qwen3-32B")
    print(plan.describe())              # role, model, GPUs, TP, memory share, max_model_len, weights/GPU
    cfg = plan.vllm_config("policy", model=checkpoint_dir, served_model_name="Qwen3-8B-grpo")

Each role gets its own contiguous GPUs (two servers never share one, so neither's memory share can
starve the other), a tensor-parallel size, a ``--max-model-len`` and a memory share. The plan fails
with :class:`PlacementError` naming the role, the numbers and the fix when the tensor-parallel sizes
need more GPUs than there are, or when a model's bf16 weights per GPU and a minimal KV cache do not
fit its memory share. On a CPU profile every role runs on vLLM's CPU build (no GPUs to plan).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove.llm.families import family_of_model
from prove.llm.vllm import LOCAL_MODEL, VLLMConfig
from prove.profiles import ServeSettings

__all__ = ["PARAMS_B", "PlacementError", "Slot", "Placement", "plan_placement", "weights_gib"]

PARAMS_B: dict[str, float] = {
    "Qwen/Qwen3-4B": 4.02, "Qwen/Qwen3-8B": 8.19, "Qwen/Qwen3-32B": 32.8,
    "Qwen/Qwen2.5-7B-Instruct": 7.62, "ibm-granite/granite-4.1-8b": 8.2,
    "google/gemma-4-31b-it": 31.3, LOCAL_MODEL: 0.135,
}
"""Parameters (billions) of the models the profiles name; a local folder is measured on disk."""

KV_MIN_GIB = 2.0
"""The least KV cache a server needs beside its weights to serve one long conversation."""


class PlacementError(ValueError):
    """A placement that does not fit the GPUs; the message names the role, the numbers and the fix."""


def weights_gib(model: str, params_b: float | None = None) -> float:
    """bf16 weight bytes (GiB) of ``model``: from ``params_b``, the table, or a folder's safetensors."""
    if params_b is not None:
        return params_b * 1e9 * 2 / 2**30
    if model in PARAMS_B:
        return PARAMS_B[model] * 1e9 * 2 / 2**30
    folder = Path(model)
    if folder.is_dir():
        files = list(folder.glob("*.safetensors")) or list(folder.glob("*.bin"))
        if files:
            size = sum(f.stat().st_size for f in files)
            cfg = folder / "config.json"
            fp32 = cfg.is_file() and '"float32"' in cfg.read_text()
            return size / 2**30 / (2 if fp32 else 1)  # served in bf16 on a GPU
    raise PlacementError(f"the size of {model!r} is unknown: add it to prove.eval.placement.PARAMS_B "
                         "(billions of parameters) or give a local folder with its weights")


@dataclass(frozen=True)
class Slot:
    """One served model's share of the machine."""

    role: str
    model: str
    gpus: tuple[int, ...]
    tensor_parallel_size: int
    gpu_memory_utilization: float
    max_model_len: int
    weights_gib_per_gpu: float


@dataclass(frozen=True)
class Placement:
    """Every served role's slot on one machine (``device`` cpu: no GPUs)."""

    device: str
    gpus: int
    gpu_memory_gib: float
    slots: tuple[Slot, ...]
    thinking: bool = False

    def slot(self, role: str) -> Slot:
        for s in self.slots:
            if s.role == role:
                return s
        raise KeyError(f"no role {role!r} in the placement; planned: {', '.join(s.role for s in self.slots)}")

    def vllm_config(self, role: str, **overrides: Any) -> VLLMConfig:
        """The ``VLLMConfig`` for ``role`` (``model``, ``served_model_name``... as ``overrides``)."""
        s = self.slot(role)
        model = overrides.pop("model", s.model)
        fam = family_of_model(s.model)
        kwargs: dict[str, Any] = {
            "model": model, "family": fam.name if fam else None, "thinking": self.thinking,
            "device": self.device, "max_model_len": s.max_model_len,
            "tensor_parallel_size": s.tensor_parallel_size}
        if self.device == "cuda":
            kwargs.update(gpus=s.gpus, gpu_memory_utilization=s.gpu_memory_utilization)
        kwargs.update(overrides)
        return VLLMConfig(**kwargs)

    def describe(self) -> str:
        where = (f"{self.gpus} GPU(s) of {self.gpu_memory_gib:g} GiB" if self.device == "cuda"
                 else "the CPU (vLLM's CPU build)")
        lines = [f"placement on {where}; thinking {'on' if self.thinking else 'off'}",
                 f"{'role':<16} {'model':<32} {'gpus':<10} {'tp':>3} {'mem':>5} {'max_len':>8} {'weights/gpu':>12}"]
        for s in self.slots:
            gpus = ",".join(map(str, s.gpus)) if s.gpus else "cpu"
            lines.append(f"{s.role:<16} {s.model[-32:]:<32} {gpus:<10} {s.tensor_parallel_size:>3} "
                         f"{s.gpu_memory_utilization:>5.2f} {s.max_model_len:>8} {s.weights_gib_per_gpu:>9.1f} GiB")
        return "\n".join(lines)


def plan_placement(serve: ServeSettings, *, policy: str, user: str | None = None,
                   thinking: bool = False, policy_params_b: float | None = None) -> Placement:
    """Plan the policy (and the user simulator, when ``user`` is served) on ``serve``'s machine;
    raise :class:`PlacementError` before anything starts when it does not fit."""
    roles = [("policy", policy, serve.policy_tensor_parallel_size, serve.policy_gpu_memory_utilization,
              serve.policy_max_model_len, policy_params_b)]
    if user:
        roles.append(("user_simulator", user, serve.user_tensor_parallel_size,
                      serve.user_gpu_memory_utilization, serve.user_max_model_len, None))
    slots, nxt = [], 0
    for role, model, tp, share, max_len, params in roles:
        if tp < 1 or not 0 < share <= 1 or max_len < 1:
            raise PlacementError(f"{role}: tensor_parallel_size must be >= 1, the memory share in (0, 1] "
                                 f"and max_model_len >= 1 (got {tp}, {share}, {max_len})")
        per_gpu = weights_gib(model, params) / tp
        gpus: tuple[int, ...] = ()
        if serve.device == "cuda":
            if nxt + tp > serve.gpus:
                planned = ", ".join(f"{s.role} on {len(s.gpus)}" for s in slots) or "nothing else"
                raise PlacementError(
                    f"{role} ({model}) needs {tp} GPU(s) for tensor parallel size {tp}, but only "
                    f"{serve.gpus - nxt} of {serve.gpus} are left ({planned}). Fix: lower its "
                    f"tensor_parallel_size, serve it elsewhere (an endpoint), or use a machine with more GPUs")
            gpus = tuple(range(nxt, nxt + tp))
            nxt += tp
            room = share * serve.gpu_memory_gib
            if per_gpu + KV_MIN_GIB > room:
                need = int(-(-weights_gib(model, params) // (room - KV_MIN_GIB))) if room > KV_MIN_GIB else 0
                raise PlacementError(
                    f"{role} ({model}) needs {per_gpu:.1f} GiB of bf16 weights per GPU at tensor parallel "
                    f"size {tp}, plus at least {KV_MIN_GIB:g} GiB of KV cache, but its share is "
                    f"{share:g} x {serve.gpu_memory_gib:g} GiB = {room:.1f} GiB. Fix: raise its "
                    f"tensor_parallel_size (to {max(need, tp + 1)} or more) or its memory share")
        slots.append(Slot(role, model, gpus, tp, share, max_len, per_gpu))
    return Placement(serve.device, serve.gpus, serve.gpu_memory_gib, tuple(slots), thinking)
