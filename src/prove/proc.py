"""The one launcher of PROVE's child processes: start in an own process group, wait until up, stop the group.

The environment server (``prove.env.launch.EnvServer``), model servers (``prove.llm.vllm.ServedModel``)
and the trainer (``prove.train.launch``) all start, wait for and stop their children here:

    from prove.proc import ChildServer, free_port
    port = free_port()
    with ChildServer(cmd, [f"http://127.0.0.1:{port}/health"], name="toy server") as child:
        ...                                  # up: every URL answered 200; stopped after the block
    child = ChildServer(cmd, urls).start()   # or by hand:
    log = child.stop()                       # stops the group, returns what it wrote

    proc = spawn(cmd, stdout=subprocess.PIPE)   # a job that is not a server (the trainer)
    stop_group(proc)                            # SIGTERM the group, SIGKILL what is left

A child runs in a session (so a process group) of its own: stopping it reaches every worker it
started (vLLM's engine core and tensor-parallel workers, Ray's, torchrun's, `prove serve
--workers`), and a Ctrl-C meant for the parent does not reach it half-way. Its output goes to a
temporary file, not a pipe, so a chatty server never blocks; a failed start raises
:class:`ChildFailed` carrying that log, which a launcher turns into its own message.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypeVar

__all__ = ["ChildServer", "ChildFailed", "free_port", "spawn", "wait_until_up", "stop_group", "stop_child"]


_Child = TypeVar("_Child", bound="ChildServer")


class ChildFailed(RuntimeError):
    """A child server exited or did not answer in time; ``log`` is everything it wrote."""

    def __init__(self, message: str, log: str, cause: BaseException) -> None:
        super().__init__(message)
        self.log, self.cause = log, cause


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at ``host`` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


_LEADERS: weakref.WeakSet[subprocess.Popen] = weakref.WeakSet()
"""Children :func:`spawn` started: each leads a process group whose id is its pid."""


def spawn(cmd: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
          stdout: Any = None, stderr: Any = None) -> subprocess.Popen:
    """Start ``cmd`` as the leader of a new session (its own process group); see :func:`stop_group`."""
    proc = subprocess.Popen(list(cmd), env=None if env is None else dict(env), cwd=cwd, stdout=stdout,
                            stderr=stderr, start_new_session=True)
    _LEADERS.add(proc)
    return proc


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


def _group_of(proc: subprocess.Popen) -> int | None:
    """The process group ``proc`` leads, or None (it shares ours, or it and its group are gone)."""
    try:
        pgid = os.getpgid(proc.pid)
    except ProcessLookupError:  # the leader is gone and reaped
        if proc not in _LEADERS:
            return None
        pgid = proc.pid  # spawn made it a leader; its group lives on while a member does
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return None
    return pgid if pgid != os.getpgid(0) else None


def stop_group(proc: subprocess.Popen | None, timeout: float = 30.0) -> None:
    """Stop ``proc`` and every process of the group it leads: SIGTERM, then SIGKILL after ``timeout``
    s to whatever is left (workers that ignored SIGTERM or outlived the leader), and wait until none
    is. A child that shares our process group (not started by :func:`spawn`) gets the same two
    signals on its own."""
    if proc is None:
        return
    pgid = _group_of(proc)
    if pgid is None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout)
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=timeout)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=timeout)
    for _ in range(int(timeout * 10)):  # until no member of the group is left
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)


def stop_child(proc: subprocess.Popen | None, log: IO[bytes] | None, timeout: float = 10.0) -> str:
    """Stop ``proc`` (:func:`stop_group`), close its log file and return what it logged."""
    stop_group(proc, timeout)
    text = ""
    if log is not None:
        log.seek(0)
        text = log.read().decode(errors="replace")
        log.close()
    return text


class ChildServer:
    """A server started from ``cmd`` in its own process group, up once every ``ready_urls`` answers.

    ``stdout``: True sends the child's stdout into the log with its stderr; False discards it (a
    server that prints a line per request). ``token`` is sent to the readiness probes as a bearer
    token. A subclass shapes a failed start's error in :meth:`failed`.
    """

    def __init__(self, cmd: Sequence[str], ready_urls: Sequence[str] = (), *, name: str = "server",
                 env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
                 startup_timeout: float = 600.0, stop_timeout: float = 30.0, token: str | None = None,
                 stdout: bool = True) -> None:
        self.cmd, self.ready_urls, self.name = list(cmd), list(ready_urls), name
        self.env = dict(os.environ if env is None else env)
        self.cwd, self.startup_timeout, self.stop_timeout = cwd, startup_timeout, stop_timeout
        self.token, self.stdout = token, stdout
        self.proc: subprocess.Popen | None = None
        self._log: IO[bytes] | None = None

    def start(self: _Child) -> _Child:
        self._log = tempfile.TemporaryFile()  # a file, not a pipe: a chatty server never blocks
        self.proc = spawn(self.cmd, env=self.env, cwd=self.cwd,
                          stdout=self._log if self.stdout else subprocess.DEVNULL,
                          stderr=subprocess.STDOUT if self.stdout else self._log)
        try:
            for url in self.ready_urls:
                wait_until_up(url, self.startup_timeout, self.proc, self.token)
        except Exception as exc:
            log = self.stop()
            raise self.failed(exc, log) from None
        return self

    def failed(self, exc: Exception, log: str) -> Exception:
        """The error a failed start raises: what went wrong and the end of the child's log."""
        return ChildFailed(f"{self.name} did not start ({exc}). Its log ends:\n{log[-3000:]}", log, exc)

    def stop(self) -> str:
        """Stop the whole process group; return what the child logged (empty once stopped)."""
        text = stop_child(self.proc, self._log, self.stop_timeout)
        self.proc, self._log = None, None
        return text

    def __enter__(self: _Child) -> _Child:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
