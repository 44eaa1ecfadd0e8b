"""Model serving for every profile: vLLM (its CPU build here) behind one launcher, the model-family
table, and the shipped SmolLM2 weights."""

from prove.llm.weights import ensure_converted, llm_extra_available, smollm2_gguf_path

__all__ = ["ensure_converted", "llm_extra_available", "smollm2_gguf_path"]
