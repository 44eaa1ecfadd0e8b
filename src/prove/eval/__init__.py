"""Evaluation on BFCL Multi-Turn, τ²-bench and T-Eval against a served model: one adapter module per benchmark.

    from prove.eval import Endpoint, serve_vllm, VLLMConfig
    from prove.eval.bfcl import BFCL, BFCLConfig      # bfcl-eval (pip, --no-deps)
    from prove.eval.tau2 import Tau2, Tau2Config      # τ²-bench (git tag, optional)
    from prove.eval.teval import TEval, TEvalConfig   # T-Eval v2 data from a user path

Each adapter has the `Benchmark` shape: load_tasks(), run(endpoint) -> run dir, score(run dir).
Benchmark packages are imported lazily, so importing this package needs none of them.
"""

from prove.eval.base import Benchmark, Endpoint, read_table, write_json, write_table
from prove.eval.served import ServedModel, VLLMConfig, serve_local, serve_vllm, vllm_command

__all__ = [
    "Benchmark",
    "Endpoint",
    "ServedModel",
    "VLLMConfig",
    "read_table",
    "serve_local",
    "serve_vllm",
    "vllm_command",
    "write_json",
    "write_table",
]
