"""Start `prove serve` in a subprocess on a free loopback port, wait until it answers, stop it.

    with EnvServer() as server:          # tests, notebooks, the training launcher
        url = server.url                 # http://127.0.0.1:<port>

`token` (default: $PROVE_ENV_TOKEN) is handed to the server in its environment, never on its
command line, and sent by the health probe; `EnvClient` reads the same variable.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

__all__ = ["EnvServer", "free_port", "wait_until_up", "stop_child", "supervise_workers", "TOKEN_ENV"]

TOKEN_ENV = "PROVE_ENV_TOKEN"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def wait_until_up(
    url: str, timeout: float = 60.0, proc: subprocess.Popen | None = None, token: str | None = None
) -> None:
    """Poll `url` until it answers 200 (sending `token` as a bearer token); fail early if `proc` exits."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server process exited with code {proc.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError as exc:
            last = exc
        time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f}s (last error: {last!r})")


def stop_child(proc: subprocess.Popen | None, log: Any, timeout: float = 10.0) -> str:
    """Terminate `proc` (kill after `timeout` s), close its log file and return what it logged."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)
    text = ""
    if log is not None:
        log.seek(0)
        text = log.read().decode(errors="replace")
        log.close()
    return text


class EnvServer:
    """`python -m prove serve` on loopback as a child process."""

    def __init__(
        self,
        port: int | None = None,
        host: str = "127.0.0.1",
        extra_args: Sequence[str] = (),
        startup_timeout: float = 60.0,
        workers: int = 1,
        token: str | None = None,
    ) -> None:
        self.host, self.port = host, port or free_port(host)
        self.token = token if token is not None else os.environ.get(TOKEN_ENV) or None
        self.workers = workers
        self.extra_args = list(extra_args)
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self._log = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def urls(self) -> list[str]:
        """One URL per worker (ports port .. port+workers-1)."""
        return [f"http://{self.host}:{self.port + i}" for i in range(self.workers)]

    def start(self) -> EnvServer:
        cmd = [sys.executable, "-m", "prove", "serve", "--host", self.host,
               "--port", str(self.port), "--workers", str(self.workers), *self.extra_args]
        self._log = tempfile.TemporaryFile()  # a file, not a pipe: a chatty server never blocks
        env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
        env["PYTHONUNBUFFERED"] = "1"
        if self.token:
            env[TOKEN_ENV] = self.token
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=self._log)
        try:
            for url in self.urls:
                wait_until_up(url + "/control/health", self.startup_timeout, self.proc, self.token)
        except Exception:
            err = self.stop()
            raise RuntimeError(f"prove serve failed to start: {err[-2000:]}") from None
        return self

    def kill(self) -> None:
        """SIGKILL the server (fault-injection tests)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> str:
        """Terminate the server; return what it wrote to stderr."""
        err = stop_child(self.proc, self._log)
        self.proc, self._log = None, None
        return err

    def __enter__(self) -> EnvServer:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def supervise_workers(
    workers: int,
    host: str,
    port: int,
    worker_args: Sequence[str] = (),
    poll_seconds: float = 0.5,
    worker_env: Mapping[str, str] | None = None,
) -> int:
    """Run `workers` independent `prove serve` processes on ports port..port+workers-1.

    A worker that dies is restarted (its episodes are rebuilt by clients from their call logs).
    SIGINT/SIGTERM stop every worker. Clients route an episode to `port + hash(id) % workers`.
    """
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def spawn(i: int) -> subprocess.Popen:
        cmd = [sys.executable, "-m", "prove", "serve", "--host", host, "--port", str(port + i),
               *worker_args]
        return subprocess.Popen(cmd, env=None if worker_env is None else dict(worker_env))

    procs = [spawn(i) for i in range(workers)]
    print(f"PROVE: {workers} workers at http://{host}:{port}..{port + workers - 1}", file=sys.stderr,
          flush=True)
    try:
        while not stopping:
            time.sleep(poll_seconds)
            for i, proc in enumerate(procs):
                if proc.poll() is not None and not stopping:
                    print(f"PROVE: worker {i} exited with {proc.returncode}; restarting",
                          file=sys.stderr, flush=True)
                    procs[i] = spawn(i)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0
