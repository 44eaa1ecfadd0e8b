"""Start `prove serve` in a subprocess on a free loopback port, wait until it answers, stop it.

    with EnvServer() as server:          # tests, notebooks, the training launcher
        url = server.url                 # http://127.0.0.1:<port>
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
from collections.abc import Sequence
from types import TracebackType

__all__ = ["EnvServer", "free_port", "wait_until_up"]


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def wait_until_up(url: str, timeout: float = 60.0, proc: subprocess.Popen | None = None) -> None:
    """Poll `url` until it answers 200; fail early if `proc` exits."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server process exited with code {proc.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError as exc:
            last = exc
        time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f}s (last error: {last!r})")


class EnvServer:
    """`python -m prove serve` on loopback as a child process."""

    def __init__(
        self,
        port: int | None = None,
        host: str = "127.0.0.1",
        extra_args: Sequence[str] = (),
        startup_timeout: float = 60.0,
    ) -> None:
        self.host, self.port = host, port or free_port(host)
        self.extra_args = list(extra_args)
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self._log = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> EnvServer:
        cmd = [sys.executable, "-m", "prove", "serve", "--host", self.host,
               "--port", str(self.port), *self.extra_args]
        self._log = tempfile.TemporaryFile()  # a file, not a pipe: a chatty server never blocks
        self.proc = subprocess.Popen(cmd, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                                     stdout=subprocess.DEVNULL, stderr=self._log)
        try:
            wait_until_up(self.url + "/control/health", self.startup_timeout, self.proc)
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
        if self.proc is None:
            return ""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        err = ""
        if self._log is not None:
            self._log.seek(0)
            err = self._log.read().decode(errors="replace")
            self._log.close()
        self.proc, self._log = None, None
        return err

    def __enter__(self) -> EnvServer:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
