"""06's GPU placement plan and the thinking choice in every served benchmark path.

    .venv/bin/python -m pytest tests/eval/test_eval_placement.py -q
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from prove.eval.pipeline import EvalPlan, evaluate_tau2
from prove.eval.placement import PlacementError, plan_placement, weights_gib
from prove.llm.vllm import LOCAL_MODEL, resolve_model, vllm_command, vllm_env
from prove.profiles import load_profile

PAPER = load_profile("paper")


def test_the_paper_plan_gives_policy_and_simulator_gpus_of_their_own() -> None:
    plan = plan_placement(PAPER.eval.serve, policy="Qwen/Qwen3-8B", user=PAPER.eval.tau2_user_llm[5:],
                          thinking=PAPER.thinking)
    policy, user = plan.slot("policy"), plan.slot("user_simulator")
    assert not set(policy.gpus) & set(user.gpus)  # the audit's defect: both on GPU 0 at 0.9 each
    assert len(user.gpus) == user.tensor_parallel_size >= 2  # 32B does not fit one GPU's remainder
    cfg = plan.vllm_config("user_simulator")
    assert vllm_env(cfg, {})["CUDA_VISIBLE_DEVICES"] == ",".join(map(str, user.gpus))
    cmd = vllm_command(cfg, 1)
    assert cmd[cmd.index("--max-model-len") + 1] == str(PAPER.eval.serve.user_max_model_len)
    text = plan.describe()
    assert "user_simulator" in text and "Qwen/Qwen3-32B" in text and "1,2" in text


@pytest.mark.parametrize(("change", "match"), [
    ({"user_tensor_parallel_size": 1, "user_gpu_memory_utilization": 0.5}, r"user_simulator \(Qwen/Qwen3-32B\) needs 61\.1 GiB.*raise its tensor_parallel_size"),
    ({"gpus": 2, "user_tensor_parallel_size": 2}, r"needs 2 GPU\(s\).*only 1 of 2 are left \(policy on 1\)"),
    ({"policy_gpu_memory_utilization": 0.1}, r"policy \(Qwen/Qwen3-8B\).*share is 0\.1 x 80 GiB"),
])
def test_a_plan_that_does_not_fit_stops_naming_the_role_and_the_fix(change: dict, match: str) -> None:
    with pytest.raises(PlacementError, match=match):
        plan_placement(replace(PAPER.eval.serve, **change), policy="Qwen/Qwen3-8B", user="Qwen/Qwen3-32B")


def test_model_sizes_come_from_the_table_or_the_folder() -> None:
    assert 15 < weights_gib("Qwen/Qwen3-8B") < 16
    folder = resolve_model(LOCAL_MODEL)  # fp32 on disk, bf16 when served on a GPU
    assert 0.2 < weights_gib(str(folder)) < 0.3
    with pytest.raises(PlacementError, match="PARAMS_B"):
        weights_gib("org/unknown-model")


def test_the_cpu_profiles_plan_the_cpu_build() -> None:
    for name in ("smoke", "laptop"):
        prof = load_profile(name)
        plan = plan_placement(prof.eval.serve, policy=LOCAL_MODEL, user=LOCAL_MODEL)
        cfg = plan.vllm_config("policy", served_model_name="x")
        assert (cfg.device, cfg.gpus) == ("cpu", None) and cfg.max_model_len == 8192


def test_the_tau2_simulator_is_served_on_its_planned_gpus() -> None:
    plan = plan_placement(PAPER.eval.serve, policy="Qwen/Qwen3-8B", user="Qwen/Qwen3-32B")
    eval_plan = EvalPlan.from_profile(PAPER.eval, placement=plan, tau2_domains=("retail",))
    seen = {}

    class Stop(Exception):
        pass

    import prove.eval.pipeline as pipeline

    def fake_tau2(cfg):  # noqa: ANN001, ANN202  (stops before τ² runs: only the config is checked)
        seen["cfg"] = cfg
        raise Stop

    orig = pipeline.Tau2
    pipeline.Tau2 = fake_tau2  # type: ignore[assignment]
    try:
        with pytest.raises(Stop):
            evaluate_tau2("Qwen3-8B", "base", None, eval_plan)  # type: ignore[arg-type]
    finally:
        pipeline.Tau2 = orig
    serve = seen["cfg"].user_serve
    assert serve.model == "Qwen/Qwen3-32B" and serve.gpus == (1, 2) and serve.thinking is False


def test_bfcl_prompts_of_a_thinking_family_get_the_empty_think_block_when_thinking_is_off() -> None:
    pytest.importorskip("bfcl_eval")
    from prove.eval.bfcl import NO_THINK_SUFFIX, _handler_class
    from prove.eval.pipeline import _no_think

    assert _no_think("Qwen/Qwen3-8B", False) and not _no_think("Qwen/Qwen3-8B", True)
    assert not _no_think("Qwen/Qwen2.5-7B-Instruct", False)
    messages = [{"role": "user", "content": "Turn on the lights."}]
    tools = [{"name": "lights_on", "description": "Turn lights on.",
              "parameters": {"type": "dict", "properties": {}}}]
    plain = _handler_class("QwenFCHandler", None)
    no_think = _handler_class("QwenFCHandler", None, no_think=True)
    off = no_think.__new__(no_think)._format_prompt(messages, tools)
    on = plain.__new__(plain)._format_prompt(messages, tools)
    assert off == on + NO_THINK_SUFFIX and on.endswith("<|im_start|>assistant\n")
