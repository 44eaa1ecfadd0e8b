"""The trainer runs as a child process group (prove.proc): its output is teed into trainer.log, and an
interrupt stops it and every worker it started."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from prove.train import launch as launch_mod
from prove.train.launch import RunPaths

TRAINER = """
import subprocess, sys, time
worker = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
open(sys.argv[1], "w").write(str(worker.pid))
print("step:1 - critic/score/mean:0.5", flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def test_the_trainers_output_is_teed_and_its_exit_code_returned(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    paths = RunPaths(tmp_path, tmp_path / "ck")
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # a notebook kernel: no byte stream
    out = io.StringIO()
    cmd = [sys.executable, "-c", "print('noise'); print('step:3 - loss:1.0'); raise SystemExit(4)"]
    assert launch_mod._run(cmd, {}, paths, out) == 4
    assert paths.log.read_text() == "noise\nstep:3 - loss:1.0\n"
    assert out.getvalue() == "step:3 - loss:1.0\n"  # only step lines reach the notebook


def test_an_interrupt_stops_the_trainer_and_its_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Interrupted(io.StringIO):
        def write(self, text: str) -> int:
            raise KeyboardInterrupt  # a notebook cell's interrupt while a step line is echoed

    paths, pid_file = RunPaths(tmp_path, tmp_path / "ck"), tmp_path / "worker.pid"
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    with pytest.raises(KeyboardInterrupt):
        launch_mod._run([sys.executable, "-c", TRAINER, str(pid_file)], {}, paths, Interrupted())
    assert not _alive(int(pid_file.read_text())), "a worker that ignored SIGTERM outlived the interrupt"
