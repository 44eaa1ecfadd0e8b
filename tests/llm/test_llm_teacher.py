"""The teacher 02 and 03 ask: a given endpoint, or the profile's model served by vLLM for the run.

    .venv/bin/python -m pytest tests/llm/test_llm_teacher.py -q

The served path runs for real on vLLM's CPU build in
tests/synth/test_synth_openai.py::test_openai_teacher_end_to_end_with_a_local_model (smoke's teacher,
SmolLM2); here the paper teacher's configuration is checked without a GPU, and what a user gets
when the model cannot be had.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from prove.llm.teacher import TeacherUnavailable, teacher_config, teacher_endpoint
from prove.llm.vllm import vllm_command
from prove.profiles import load_profile

PAPER = load_profile("paper")


def test_a_given_endpoint_is_used_as_is_and_carries_the_thinking_choice() -> None:
    with teacher_endpoint(PAPER.teacher, "http://127.0.0.1:9/v1", "Qwen/Qwen3-32B") as llm:
        assert (llm.base_url, llm.model) == ("http://127.0.0.1:9/v1", "Qwen/Qwen3-32B")
        assert llm.chat_template_kwargs == {"enable_thinking": False}
    with teacher_endpoint(PAPER.teacher, "http://127.0.0.1:9/v1", "my-teacher") as llm:
        assert llm.chat_template_kwargs is None  # a family we do not know: the server's defaults
    with pytest.raises(TeacherUnavailable, match="without a model"), teacher_endpoint(PAPER.teacher, "http://x/v1"):
        pass


def test_the_paper_teacher_is_served_non_thinking_through_the_interpreter() -> None:
    cfg = teacher_config(PAPER.teacher, thinking=PAPER.thinking)
    assert (cfg.model, cfg.tensor_parallel_size, cfg.device) == ("Qwen/Qwen3-32B", 8, "cuda")
    cmd = vllm_command(cfg, 8000)
    assert cmd[0] == sys.executable and "--reasoning-parser" not in cmd
    assert cmd[cmd.index("--default-chat-template-kwargs") + 1] == '{"enable_thinking": false}'
    second = teacher_config(PAPER.teacher, model=PAPER.teacher.compare_model)
    assert second.model == "google/gemma-4-31b-it" and second.family == "gemma"


def test_a_teacher_that_cannot_be_had_stops_before_any_work_saying_what_to_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(TeacherUnavailable, match=r"(?s)Qwen/Qwen3-32B.*not in the Hugging Face cache.*"
                                                  r"huggingface-cli download.*endpoint"):
        with teacher_endpoint(PAPER.teacher):
            pass
    with pytest.raises(TeacherUnavailable, match="teacher.model is empty"), \
            teacher_endpoint(replace(PAPER.teacher, model=None)):
        pass
    with pytest.raises(TeacherUnavailable, match="no thinking mode"), \
            teacher_endpoint(load_profile("smoke").teacher, thinking=True):
        pass
