"""Local LLM serving for CPU machines: the shipped SmolLM2 weights behind a real OpenAI-compatible server."""

from prove.llm.server import LocalLLMServer
from prove.llm.weights import ensure_converted, llm_extra_available, smollm2_gguf_path

__all__ = ["LocalLLMServer", "ensure_converted", "llm_extra_available", "smollm2_gguf_path"]
