"""The served-model launchers: vLLM argv, waiting for /v1/models on a real loopback process, failing fast."""

from __future__ import annotations

import json
import sys
import urllib.request

import pytest

from prove.env.launch import free_port
from prove.eval.base import Endpoint
from prove.eval.served import ServedModel, VLLMConfig, VLLMUnavailable, serve_vllm, vllm_command


def test_vllm_command_carries_model_parser_context_and_name():
    cfg = VLLMConfig(model="/ckpt/qwen3-8b-step350", served_model_name="Qwen/Qwen3-8B", max_model_len=65536,
                     rope_scaling={"rope_type": "yarn", "factor": 2.0}, tensor_parallel_size=2)
    cmd = vllm_command(cfg, 8123)
    assert cmd[:3] == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]  # not PATH
    assert cmd[cmd.index("--model") + 1] == "/ckpt/qwen3-8b-step350"
    assert cmd[cmd.index("--port") + 1] == "8123"
    assert cmd[cmd.index("--served-model-name") + 1] == "Qwen/Qwen3-8B"
    assert cmd[cmd.index("--tool-call-parser") + 1] == "hermes" and "--enable-auto-tool-choice" in cmd
    assert cmd[cmd.index("--max-model-len") + 1] == "65536"
    assert json.loads(cmd[cmd.index("--hf-overrides") + 1])["rope_scaling"]["rope_type"] == "yarn"
    bare = vllm_command(VLLMConfig(model="m", tool_call_parser=None), 1)
    assert "--tool-call-parser" not in bare and "--max-model-len" not in bare


def test_serve_vllm_without_vllm_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    with pytest.raises(VLLMUnavailable, match="vLLM is not installed.*run_all.sh"):
        serve_vllm(VLLMConfig(model="Qwen/Qwen3-8B"))


def test_served_model_waits_for_models_route_and_stops(tmp_path):
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "models").write_text('{"data": [{"id": "toy"}]}')
    port = free_port()
    cmd = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)]
    with ServedModel(cmd, Endpoint(f"http://127.0.0.1:{port}/v1", "toy"), startup_timeout=30) as served:
        with urllib.request.urlopen(served.endpoint.base_url + "/models", timeout=5) as resp:
            assert json.load(resp)["data"][0]["id"] == "toy"
        proc = served.proc
    assert proc.poll() is not None


def test_served_model_fails_fast_when_the_process_dies():
    port = free_port()
    cmd = [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"]
    with pytest.raises(RuntimeError, match="boom"):
        ServedModel(cmd, Endpoint(f"http://127.0.0.1:{port}/v1", "x"), startup_timeout=30).start()
