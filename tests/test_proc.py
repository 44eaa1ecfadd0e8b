"""The one child-process launcher (prove.proc): readiness, failing fast with the log, stopping a whole group."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from prove.proc import ChildFailed, ChildServer, free_port, spawn, stop_group


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


# A server that first starts a worker which ignores SIGTERM (as an engine core busy in a kernel can).
SERVER_WITH_STUBBORN_WORKER = """
import http.server, pathlib, signal, subprocess, sys
worker = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
pathlib.Path(sys.argv[2]).write_text(str(worker.pid))
print("serving", flush=True)
http.server.test(HandlerClass=http.server.SimpleHTTPRequestHandler, port=int(sys.argv[1]), bind="127.0.0.1")
"""


def test_child_server_is_up_when_its_url_answers_and_stop_ends_its_whole_group(tmp_path: Path) -> None:
    port, pid_file = free_port(), tmp_path / "worker.pid"
    cmd = [sys.executable, "-c", SERVER_WITH_STUBBORN_WORKER, str(port), str(pid_file)]
    child = ChildServer(cmd, [f"http://127.0.0.1:{port}/"], name="toy", cwd=tmp_path, startup_timeout=30,
                        stop_timeout=2)
    with child:
        worker = int(pid_file.read_text())
        assert child.proc is not None and child.proc.poll() is None and _alive(worker)
    assert child.proc is None
    assert not _alive(worker), "a worker that ignored SIGTERM outlived the stop"
    assert child.stop() == ""  # stopping twice is harmless


def test_stop_returns_what_the_child_logged(tmp_path: Path) -> None:
    port = free_port()
    cmd = [sys.executable, "-c", SERVER_WITH_STUBBORN_WORKER, str(port), str(tmp_path / "pid")]
    child = ChildServer(cmd, [f"http://127.0.0.1:{port}/"], startup_timeout=30, stop_timeout=2).start()
    assert "serving" in child.stop()


def test_a_child_that_exits_fails_fast_naming_the_exit_code_with_its_log() -> None:
    cmd = [sys.executable, "-c", "import sys; print('boom: no weights'); sys.exit(3)"]
    started = time.monotonic()
    with pytest.raises(ChildFailed, match=r"(?s)toy did not start \(server process exited with code 3.*boom") as err:
        ChildServer(cmd, [f"http://127.0.0.1:{free_port()}/"], name="toy", startup_timeout=60).start()
    assert time.monotonic() - started < 30
    assert "boom: no weights" in err.value.log and isinstance(err.value.cause, RuntimeError)


def test_a_child_that_never_answers_times_out_and_is_stopped() -> None:
    child = ChildServer([sys.executable, "-c", "import time; time.sleep(600)"],
                        [f"http://127.0.0.1:{free_port()}/"], startup_timeout=1, stop_timeout=2)
    with pytest.raises(ChildFailed, match="did not answer within 1s"):
        child.start()
    assert child.proc is None


def test_a_failed_start_raises_what_the_launcher_says() -> None:
    class Named(ChildServer):
        def failed(self, exc: Exception, log: str) -> Exception:
            return ValueError(f"fix the config: {log.strip()}")

    with pytest.raises(ValueError, match="fix the config: nope"):
        Named([sys.executable, "-c", "print('nope')"], [f"http://127.0.0.1:{free_port()}/"]).start()


def test_stop_group_stops_a_child_in_our_own_group_and_a_spawned_one() -> None:
    shared = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    own = spawn([sys.executable, "-c", "import time; time.sleep(600)"])
    for proc in (shared, own):
        stop_group(proc, timeout=5)
        assert proc.poll() is not None
    stop_group(None)


def test_stop_group_reaches_workers_that_outlive_their_leader(tmp_path: Path) -> None:
    """A server that crashed (its leader exited and was reaped) can leave its workers running."""
    pid_file = tmp_path / "worker.pid"
    leader = spawn([sys.executable, "-c", SERVER_WITH_STUBBORN_WORKER.split("print(")[0] + "sys.exit(1)",
                    "0", str(pid_file)])
    assert leader.wait(timeout=30) == 1
    worker = int(pid_file.read_text())
    assert _alive(worker)
    stop_group(leader, timeout=2)
    assert not _alive(worker)
