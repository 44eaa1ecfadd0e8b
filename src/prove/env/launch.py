"""Start `prove serve` in a subprocess on a free loopback port, wait until it answers, stop it.

    with EnvServer() as server:          # tests, notebooks, the training launcher
        url = server.url                 # http://127.0.0.1:<port>

`token` (default: $PROVE_ENV_TOKEN) is handed to the server in its environment, never on its
command line, and sent by the health probe; `EnvClient` reads the same variable. Starting, waiting
and stopping (the whole process group) are ``prove.proc``'s, as for every child PROVE starts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

from prove.proc import ChildServer, free_port, stop_child, stop_group, wait_until_up

__all__ = ["EnvServer", "free_port", "wait_until_up", "stop_child", "supervise_workers", "TOKEN_ENV"]

TOKEN_ENV = "PROVE_ENV_TOKEN"


class EnvServer(ChildServer):
    """`python -m prove serve` on loopback as a child process group (``prove.proc.ChildServer``)."""

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
        self.workers = workers
        self.extra_args = list(extra_args)
        super().__init__([], name="prove serve", startup_timeout=startup_timeout, stop_timeout=10.0,
                         token=token if token is not None else os.environ.get(TOKEN_ENV) or None,
                         stdout=False)  # stderr only: uvicorn's log, not a line per request

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def urls(self) -> list[str]:
        """One URL per worker (ports port .. port+workers-1)."""
        return [f"http://{self.host}:{self.port + i}" for i in range(self.workers)]

    def start(self) -> EnvServer:
        self.cmd = [sys.executable, "-m", "prove", "serve", "--host", self.host,
                    "--port", str(self.port), "--workers", str(self.workers), *self.extra_args]
        self.env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}  # never on the command line
        self.env["PYTHONUNBUFFERED"] = "1"
        if self.token:
            self.env[TOKEN_ENV] = self.token
        self.ready_urls = [url + "/control/health" for url in self.urls]
        return super().start()

    def failed(self, exc: Exception, log: str) -> Exception:
        return RuntimeError(f"prove serve failed to start ({exc}): {log[-2000:]}")

    def kill(self) -> None:
        """SIGKILL the server and its workers (fault-injection tests)."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # spawn made it a group leader
            self.proc.wait(timeout=10)


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

    def spawn(i: int) -> subprocess.Popen:  # in our process group: a stop of ours reaches them too
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
        for proc in procs:  # all at once, then each waited for (and killed if it must be)
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            stop_group(proc, timeout=10)
    return 0
