"""The teacher 02 and 03 ask: a given endpoint, or the profile's model started and stopped for the run.

    .venv/bin/python -m pytest tests/llm/test_llm_teacher.py -q

vLLM cannot run on this CPU machine, so the vLLM path runs a stand-in executable named `vllm`
(`FAKE_VLLM` below, put first on PATH): it answers GET /v1/models like `vllm serve` and exits on
SIGTERM. The local path (SmolLM2 behind `transformers serve`) runs for real in
tests/synth/test_synth_openai.py::test_openai_teacher_end_to_end_with_a_local_model.
"""

from __future__ import annotations

import stat
import sys
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from prove.llm.teacher import TeacherUnavailable, teacher_endpoint
from prove.profiles import load_profile

PAPER = load_profile("paper").teacher

FAKE_VLLM = f"""#!{sys.executable}
import http.server, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.end_headers()
        self.wfile.write(b'{{"data": [{{"id": "x"}}]}}')
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def _on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str | None) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if body is not None:
        exe = bin_dir / "vllm"
        exe.write_text(body)
        exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(bin_dir))


def test_a_given_endpoint_is_used_as_is_and_needs_its_model() -> None:
    with teacher_endpoint(PAPER, "http://127.0.0.1:9/v1", "my-teacher") as llm:
        assert (llm.base_url, llm.model) == ("http://127.0.0.1:9/v1", "my-teacher")
    with pytest.raises(TeacherUnavailable, match="without a model"), teacher_endpoint(PAPER, "http://x/v1"):
        pass


def test_paper_without_vllm_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _on_path(tmp_path, monkeypatch, None)
    with pytest.raises(TeacherUnavailable, match=r"Qwen/Qwen3-32B.*not on PATH.*endpoint"), teacher_endpoint(PAPER):
        pass
    with pytest.raises(TeacherUnavailable, match="teacher.model is empty"), \
            teacher_endpoint(replace(PAPER, model=None)):
        pass


def test_a_failing_launch_stops_with_its_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _on_path(tmp_path, monkeypatch, f"#!{sys.executable}\nimport sys\nprint('CUDA out of memory')\nsys.exit(1)\n")
    with pytest.raises(TeacherUnavailable, match=r"(?s)did not start.*CUDA out of memory.*endpoint"), \
            teacher_endpoint(replace(PAPER, startup_timeout=60)):
        pass


def test_the_paper_teacher_is_served_for_the_block_and_stopped_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _on_path(tmp_path, monkeypatch, FAKE_VLLM)
    with teacher_endpoint(replace(PAPER, startup_timeout=60)) as llm:
        assert llm.model == "Qwen/Qwen3-32B"
        with urllib.request.urlopen(llm.base_url + "/models", timeout=10) as resp:
            assert resp.status == 200
    with pytest.raises(OSError):
        urllib.request.urlopen(llm.base_url + "/models", timeout=5)
