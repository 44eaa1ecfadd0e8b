"""The CPU stand-in on its own (fast): platform, Hugging Face rollout server, adapter, patches, and
the checkpoint and tokenizer fixes the chain needs. The real GRPO steps are the rehearsal's, checked
in test_train_chain.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from train_helpers import need_verl


@pytest.fixture(scope="module")
def cpu() -> Any:
    need_verl()
    import prove.train.cpu as cpu

    return cpu


@pytest.fixture(scope="module")
def policy() -> Path:
    from prove.train.chat_template import policy_model_dir

    return policy_model_dir()


def test_platform_is_selected_by_env_and_reports_cpu(cpu: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from verl.plugin.platform.platform_manager import PlatformRegistry

    platform = PlatformRegistry.get("cpu")()
    assert platform.device_name == "cpu" and platform.current_device() == "cpu"
    assert platform.communication_backend_name() == "gloo"
    assert platform.device_module.get_device_name() == "CPU"
    assert platform.device_module.memory_allocated() == 0
    monkeypatch.delenv("VERL_PLATFORM", raising=False)
    assert not platform.is_platform_available(use_smi_check=True)  # never auto-picked on a GPU box
    monkeypatch.setenv("VERL_PLATFORM", "cpu")
    assert platform.is_platform_available(use_smi_check=True)


def test_rollout_registries_know_hf(cpu: Any) -> None:
    from verl.workers.rollout.base import get_rollout_class
    from verl.workers.rollout.replica import RolloutReplicaRegistry, get_rollout_replica_class

    assert get_rollout_replica_class("hf") is cpu.HFReplica
    assert RolloutReplicaRegistry.get("hf").__name__ == "HFReplica"
    assert get_rollout_class("hf", "async") is cpu.HFServerAdapter


def test_backend_string_is_deduplicated(cpu: Any, tmp_path: Path) -> None:
    import torch.distributed as dist

    assert getattr(dist.init_process_group, "_prove_cpu", False)
    dist.init_process_group(backend="cpu:gloo,cpu:gloo", rank=0, world_size=1,
                            init_method=f"file://{tmp_path / 'pg'}")
    try:
        assert dist.get_backend() == "cpu:gloo"  # one device entry, as torch requires
    finally:
        dist.destroy_process_group()


def test_reference_offload_is_never_pinned(cpu: Any) -> None:
    from verl.workers.engine.fsdp import transformer_impl

    assert transformer_impl.CPUOffloadPolicy(pin_memory=True).pin_memory is False


def test_version_pin_names_the_fix(cpu: Any) -> None:
    with pytest.raises(RuntimeError, match=r"pip install verl==0\.9\.1"):
        cpu.check_verl_version("0.10.0")
    cpu.check_verl_version("0.9.1")


def _server(cpu: Any, policy: Path, response_length: int = 24) -> Any:
    from omegaconf import OmegaConf
    from verl.workers.config import HFModelConfig

    rollout = OmegaConf.create({"_target_": "verl.workers.config.RolloutConfig", "name": "hf",
                                "prompt_length": 256, "response_length": response_length,
                                "max_model_len": 8192})
    return cpu.HFGenerateServer(rollout, HFModelConfig(path=str(policy)))


def test_server_generates_greedy_tokens_with_their_logprobs(cpu: Any, policy: Path) -> None:
    import asyncio

    import torch
    from transformers import AutoTokenizer

    server = _server(cpu, policy)
    tok = AutoTokenizer.from_pretrained(policy)
    text = tok.apply_chat_template([{"role": "user", "content": "Say hello."}],
                                   add_generation_prompt=True, tokenize=False)
    prompt = tok.encode(text, add_special_tokens=False)
    params = {"temperature": 0.0, "logprobs": True, "max_tokens": 12}
    a = asyncio.run(server.generate(prompt_ids=prompt, sampling_params=params, request_id="a"))
    b = asyncio.run(server.generate(prompt_ids=prompt, sampling_params=params, request_id="b"))
    assert a.token_ids == b.token_ids and 0 < len(a.token_ids) <= 12
    assert len(a.log_probs) == len(a.token_ids) and all(lp <= 0 for lp in a.log_probs)
    with torch.no_grad():  # the log-probs are the model's own for the tokens it chose
        logits = server.model(torch.tensor([prompt + a.token_ids])).logits[0]
    first = torch.log_softmax(logits[len(prompt) - 1].float(), -1)[a.token_ids[0]]
    assert abs(float(first) - a.log_probs[0]) < 1e-3
    assert server.eos_ids == [tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|im_start|>")]
    if a.extra_fields["finish_reason"] == "completed":
        assert a.token_ids[-1] in server.eos_ids


def test_server_caps_at_response_length_and_rejects_a_full_context(cpu: Any, policy: Path) -> None:
    import asyncio

    server = _server(cpu, policy, response_length=5)
    out = asyncio.run(server.generate(prompt_ids=[1, 2, 3], sampling_params={"temperature": 1.0},
                                      request_id="x"))
    assert len(out.token_ids) <= 5
    with pytest.raises(ValueError, match="leaves no room"):
        server._max_tokens(8192, {})


def test_weight_update_changes_what_the_server_computes(cpu: Any, policy: Path) -> None:
    server = _server(cpu, policy)
    before = server.checksum()
    state = {name: p.detach().clone() * 1.01 for name, p in server.model.named_parameters()}
    assert server.update_weights(state, global_steps=3) == len(state)
    assert server.checksum() != pytest.approx(before, rel=1e-6)
    assert server.stats() == {"weight_updates": 1, "global_steps": 3}
    with pytest.raises(ValueError, match="lacks"):
        server.update_weights({"not.a.parameter": state[next(iter(state))]})


def test_policy_folder_carries_the_fixed_tokenizer(policy: Path) -> None:
    from transformers import AutoTokenizer

    from prove.train.chat_template import HERMES_CHATML_TEMPLATE, load_tokenizer

    tok = AutoTokenizer.from_pretrained(policy)
    assert tok.eos_token == tok.pad_token == "<|im_end|>" and tok.eos_token_id == 2
    assert tok.chat_template == HERMES_CHATML_TEMPLATE
    gen = json.loads((policy / "generation_config.json").read_text())
    assert gen["eos_token_id"] == [2, 1] and gen["pad_token_id"] == 2  # a turn ends at either
    cpu_tok = load_tokenizer()
    assert (cpu_tok.eos_token, cpu_tok.pad_token) == ("<|im_end|>", "<|im_end|>")
    ids = cpu_tok.pad({"input_ids": [[5, 6, 7], [5]]})["input_ids"]  # VERL pads every batch
    assert ids[1][-1] == 2 or ids[1][0] == 2


def test_run_env_gives_cpu_runs_the_stand_in(tmp_path: Path) -> None:
    from prove.train.config import load_train_config
    from prove.train.launch import CPU_ENV, RunPaths, run_env

    cfg = load_train_config("smollm2-135m")
    paths = RunPaths.for_run(cfg, cfg.variant("default"), tmp_path)
    env = run_env(paths, {}, device="cpu")
    modules = env.pop("VERL_USE_EXTERNAL_MODULES").split(",")
    assert {k: env[k] for k in CPU_ENV if k in env} == {k: v for k, v in CPU_ENV.items()
                                                         if k != "VERL_USE_EXTERNAL_MODULES"}
    assert modules == ["prove.train.cpu", "prove.train.verl_metrics"] and int(env["OMP_NUM_THREADS"]) >= 1
    gpu = run_env(paths, {}, device="cuda")
    assert "VERL_PLATFORM" not in gpu and gpu["VERL_USE_EXTERNAL_MODULES"] == "prove.train.verl_metrics"


def test_paper_config_without_gpu_says_what_to_run() -> None:
    from prove.train.config import load_train_config
    from prove.train.launch import check_device

    with pytest.raises(ValueError, match="prove train smollm2-135m --variant sft"):
        check_device(load_train_config("qwen3-8b"), has_gpu=False)
    check_device(load_train_config("qwen3-8b"), has_gpu=True)
    check_device(load_train_config("smollm2-135m"), has_gpu=False)


def test_grpo_from_sft_needs_the_sft_checkpoint(tmp_path: Path) -> None:
    from prove.train.config import load_train_config
    from prove.train.launch import init_model

    cfg = load_train_config("smollm2-135m")
    with pytest.raises(FileNotFoundError, match="prove train smollm2-135m --variant sft"):
        init_model(cfg, cfg.variant("default"), tmp_path, tmp_path / "ckpt")
    step = tmp_path / "ckpt" / "prove" / "smollm2-135m-sft" / "global_step_3" / "huggingface"
    step.mkdir(parents=True)
    (step / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="holds no weights"):
        init_model(cfg, cfg.variant("default"), tmp_path, tmp_path / "ckpt")
    (step / "model.safetensors").write_bytes(b"")
    assert init_model(cfg, cfg.variant("default"), tmp_path, tmp_path / "ckpt") == str(step)


def test_newest_saved_step_wins(tmp_path: Path) -> None:
    from prove.train.launch import hf_checkpoint

    for n in (2, 10):
        folder = tmp_path / f"global_step_{n}" / "actor" / "huggingface"
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_bytes(b"")
    assert hf_checkpoint(tmp_path).parts[-3] == "global_step_10"
    with pytest.raises(FileNotFoundError, match="no saved step"):
        hf_checkpoint(tmp_path / "empty")


def test_resumed_metrics_keep_every_step(tmp_path: Path) -> None:
    from prove.train.launch import _set_metrics_aside, merge_metrics

    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text("".join(json.dumps({"step": s, "data": {"r": s}}) + "\n" for s in (1, 2, 3)))
    _set_metrics_aside(metrics)  # what launch does before a (resumed) run starts
    assert not metrics.exists()
    metrics.write_text("".join(json.dumps({"step": s, "data": {"r": 10 * s}}) + "\n" for s in (3, 4))
                       + json.dumps({"step": 4, "data": {"val": 1}}) + "\n")  # VERL: val on its own line
    assert merge_metrics(metrics) == 5
    lines = [json.loads(x) for x in metrics.read_text().splitlines()]
    assert [x["step"] for x in lines] == [1, 2, 3, 4, 4] and lines[2]["data"]["r"] == 30
    assert lines[3]["data"] == {"r": 40} and lines[4]["data"] == {"val": 1}
    assert not list(tmp_path.glob("metrics.part*"))


def test_unknown_variant_lists_the_known_ones() -> None:
    from prove.train.config import load_train_config

    cfg = load_train_config("smollm2-135m")
    with pytest.raises(ValueError, match="known: default, lr_low"):
        cfg.variant("fast")
    assert {"sft", "default", "lr_high", "recall_only", "no_name", "beta0"} <= set(cfg.variants())


def test_env_vars_reach_ray_workers() -> None:
    from prove.train.config import load_train_config
    from prove.train.launch import RunPaths, grpo_overrides, run_env

    cfg = load_train_config("smollm2-135m")
    paths = RunPaths.for_run(cfg, cfg.variant("default"), "/tmp/x")
    over = grpo_overrides(cfg, cfg.variant("default"), paths, run_env(paths, {}, device="cpu"))
    assert "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_PLATFORM=cpu" in over
    assert "actor_rollout_ref.rollout.name=vllm" in over  # smollm2-135m's rollout: vLLM's CPU build
    assert "actor_rollout_ref.actor.checkpoint.save_contents=[model,optimizer,extra,hf_model]" in over


def test_sweep_points_validate_after_their_last_step() -> None:
    """The learning rate is picked on each sweep point's final validation reward, so a sweep run
    validates even where the config turns validation off (smollm2-135m: the rehearsal's sweep once
    stopped at the pick with every point's validation reward None); other runs keep the config's."""
    from prove.train.config import load_train_config
    from prove.train.launch import RunPaths, grpo_overrides

    cfg = load_train_config("smollm2-135m").with_steps(3)
    assert cfg.verl["trainer.test_freq"] == -1
    for name, freq in (("lr_low", "3"), ("lr_high", "3"), ("default", "-1"), ("no_efficiency", "-1")):
        paths = RunPaths.for_run(cfg, cfg.variant(name), "/tmp/x")
        assert f"trainer.test_freq={freq}" in grpo_overrides(cfg, cfg.variant(name), paths), name
    paper = load_train_config("qwen3-8b")  # validates every 25 steps already: left as it is
    paths = RunPaths.for_run(paper, paper.variant("lr_low"), "/tmp/x")
    assert f"trainer.test_freq={paper.verl['trainer.test_freq']}" in grpo_overrides(paper, paper.variant("lr_low"), paths)


def test_settings_verl_never_reads_are_refused(tmp_path: Path) -> None:
    import yaml

    from prove.train.config import CONFIG_DIR, UNREAD_BY_VERL, load_train_config, paper_configs

    for name in paper_configs() + ["smollm2-135m"]:
        assert not set(UNREAD_BY_VERL) & set(load_train_config(name).verl)
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"base": str(CONFIG_DIR / "grpo.yaml"), "name": "x", "model": "m",
                                   "family": "f", "lr_sweep": {"lr_low": 1e-6, "lr_mid": 2e-6, "lr_high": 3e-6},
                                   "verl": {"data.return_raw_chat": True}}))
    with pytest.raises(ValueError, match="never read by verl"):
        load_train_config(bad)


def test_one_family_one_learning_rate_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    from prove.train import config as config_mod

    sweeps = config_mod.check_families()
    assert set(sweeps) >= {"qwen3", "qwen2.5", "granite", "smollm2"}
    for name, lr in (("a", 1e-6), ("b", 5e-6)):
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump({
            "base": str(config_mod.CONFIG_DIR / "grpo.yaml"), "name": name, "model": "m", "family": "same",
            "lr_sweep": {"lr_low": lr, "lr_mid": 2 * lr, "lr_high": 3 * lr}}))
    with pytest.raises(ValueError, match="one family, one learning-rate sweep"):
        config_mod.check_families([str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")])


@pytest.mark.parametrize("variant", ["default", "sft", "recall_only"])
def test_cpu_config_composes_against_verl(variant: str, tmp_path: Path) -> None:
    need_verl()
    from prove.train.compose import check_variant
    from prove.train.config import load_train_config

    composed = check_variant(load_train_config("smollm2-135m"), variant, tmp_path)
    if variant == "sft":
        assert composed.trainer.device == "cpu" and composed.engine.strategy == "fsdp2"
        assert list(composed.checkpoint.save_contents)[-1] == "hf_model"
        return
    rollout = composed.actor_rollout_ref.rollout
    assert rollout.name == "vllm" and rollout.checkpoint_engine.backend == "naive"
    assert composed.actor_rollout_ref.model.override_config.attn_implementation == "sdpa"
    assert composed.ray_kwargs.ray_init._node_ip_address == "127.0.0.1"
    assert composed.reward.custom_reward_function.reward_kwargs.config == (
        "prove" if variant == "default" else variant)


def test_launch_stops_before_any_work_on_attention_this_machine_cannot_run(tmp_path: Path) -> None:
    import dataclasses

    from prove.train.config import load_train_config
    from prove.train.launch import launch

    cfg = load_train_config("smollm2-135m")
    key = "+actor_rollout_ref.model.override_config.attn_implementation"
    cfg = dataclasses.replace(cfg, verl={**cfg.verl, key: "flash_attention_2"})
    with pytest.raises(ValueError, match="flash"):
        launch(cfg, "default", results_dir=tmp_path, checkpoints_dir=tmp_path / "ckpt", init="base")
    run_dir = tmp_path / "train" / "smollm2-135m-default"
    assert not (run_dir / "trainer.log").exists() and not (run_dir / "metrics.jsonl").exists()


def test_heldout_refuses_a_folder_without_weights(tmp_path: Path) -> None:
    from prove.eval.heldout import evaluate_heldout
    from prove.train.config import load_train_config

    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="holds no weights"):
        evaluate_heldout(tmp_path, load_train_config("smollm2-135m"), "http://127.0.0.1:1")
    with pytest.raises(FileNotFoundError, match="not an HF model folder"):
        evaluate_heldout(tmp_path / "missing", load_train_config("smollm2-135m"), "http://127.0.0.1:1")


def test_scripted_stand_in_ends_its_turns_with_im_end(cpu: Any) -> None:
    import asyncio

    from prove.train.chat_template import load_tokenizer
    from prove.train.rollout import ScriptedLLM

    tok = load_tokenizer()
    row = {"prompt": [{"role": "user", "content": "Which accounts do I have?"}]}
    llm = ScriptedLLM(tok, [row], [["Done."]])
    prompt = tok.encode(tok.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=False),
                        add_special_tokens=False)
    out = asyncio.run(llm.generate(request_id="r", prompt_ids=prompt, sampling_params={}))
    assert tok.convert_ids_to_tokens(out.token_ids[-1]) == "<|im_end|>"  # was <|im_start|>


def test_trainer_output_reaches_a_notebook_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a kernel sys.stdout has no byte buffer: the metric lines go to ``out``, all to the log."""
    import io
    import sys as _sys

    from prove.train.launch import RunPaths, _run

    class KernelStream(io.StringIO):
        pass  # no .buffer, like ipykernel's OutStream

    monkeypatch.setattr(_sys, "stdout", KernelStream())
    paths = RunPaths(tmp_path, tmp_path / "ckpt")
    out = io.StringIO()
    code = _run([_sys.executable, "-c", "print('config dump'); print('step:1 - loss:0.5'); "
                 "import sys; sys.exit(3)"], {}, paths, out)
    assert code == 3
    assert out.getvalue().strip() == "step:1 - loss:0.5"
    assert paths.log.read_text().splitlines() == ["config dump", "step:1 - loss:0.5"]


def test_heldout_runs_inside_a_running_event_loop() -> None:
    """Notebook cells run inside an event loop; the evaluation must not call asyncio.run there."""
    import asyncio

    from prove.eval.heldout import _run_to_completion

    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def cell() -> int:
        return _run_to_completion(answer())

    assert asyncio.run(cell()) == 42 and _run_to_completion(answer()) == 42
