"""The teacher LLM for 02 and 03: an endpoint you give, or the profile's model served for the run.

    from prove.llm.teacher import teacher_endpoint
    with teacher_endpoint(load_profile("paper").teacher) as llm:    # vllm serve Qwen/Qwen3-32B ...
        cfg.base_url, cfg.model = llm.base_url, llm.model           # ... stopped when the block ends

On the paper profile (``teacher.serve: vllm``) the model is started with the project's vLLM
launcher (`prove.eval.served.serve_vllm`); on a CPU profile (``serve: local``) SmolLM2-135M-Instruct
runs behind ``transformers serve`` through the same code path. Given an endpoint and model, nothing
is started. Nothing falls back silently: a missing model, a missing vLLM or a launch that fails
raises `TeacherUnavailable` saying what to do.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from prove.eval.base import Endpoint
from prove.profiles import TeacherSettings

__all__ = ["teacher_endpoint", "TeacherUnavailable"]


class TeacherUnavailable(RuntimeError):
    """The teacher could not be reached or started; the message says what to do."""


_REMEDY = ("Give a running OpenAI-compatible endpoint instead (the notebook's `endpoint` and `model` "
           "parameters, or $PROVE_TEACHER_URL and $PROVE_TEACHER_MODEL), or run the notebook on a "
           "profile whose teacher is served locally (smoke, laptop).")


@contextmanager
def teacher_endpoint(settings: TeacherSettings, endpoint: str | None = None,
                     model: str | None = None) -> Iterator[Endpoint]:
    """Yield the teacher's endpoint: `endpoint`/`model` when given, else the profile's model
    started now (and stopped when the block ends, whatever happens inside it)."""
    if endpoint:
        if not model:
            raise TeacherUnavailable(f"endpoint {endpoint} was given without a model: pass the model id "
                                     "the server knows (the notebook's `model`, or $PROVE_TEACHER_MODEL)")
        yield Endpoint(endpoint, model)
        return
    from prove.eval.served import ServedModel, VLLMConfig, serve_local, serve_vllm

    served: ServedModel
    if settings.serve == "local":
        served = serve_local()
    else:
        if not settings.model:
            raise TeacherUnavailable("the profile's teacher.model is empty: set it to the model vLLM "
                                     "should serve (e.g. Qwen/Qwen3-32B or google/gemma-4-31b-it). " + _REMEDY)
        try:
            served = serve_vllm(VLLMConfig(
                model=settings.model, tool_call_parser=settings.tool_call_parser,
                tensor_parallel_size=settings.tensor_parallel_size,
                max_model_len=settings.max_model_len, startup_timeout=settings.startup_timeout))
        except FileNotFoundError as exc:
            raise TeacherUnavailable(f"cannot serve teacher {settings.model}: {exc}. {_REMEDY}") from None
    try:
        served.start()
    except Exception as exc:  # the launcher's message carries the server's log tail
        raise TeacherUnavailable(f"the teacher server did not start: {exc}\n{_REMEDY}") from None
    try:
        yield served.endpoint
    finally:
        served.stop()
