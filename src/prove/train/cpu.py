"""The CPU stand-in for VERL's GPU parts (platform, NCCL, vLLM), pinned to verl 0.9.1.

    VERL_PLATFORM=cpu VERL_USE_EXTERNAL_MODULES=prove.train.cpu python -m verl.trainer.main_ppo ...

``prove train`` sets those variables (``prove.train.launch.CPU_ENV``) for a config whose ``device`` is
``cpu``; VERL then imports this module in every process it starts (``verl/__init__.py`` reads
``VERL_USE_EXTERNAL_MODULES``). It is the only place in PROVE that stands in for hardware this
machine lacks, and nothing on the GPU path imports it. What it adds to VERL, each a registry entry
VERL already has for the purpose:

* :class:`PlatformCPU`, the ``cpu`` platform (device ``cpu``, collective backend gloo, Ray books a
  nominal "GPU" per trainer rank because VERL's resource pools count GPUs);
* the ``hf`` rollout: :class:`HFReplica` (VERL's ``RolloutReplica``) launches one
  :class:`HFGenerateServer` Ray actor that generates with Hugging Face ``generate`` behind the
  token-in/token-out ``generate(prompt_ids, sampling_params, request_id)`` VERL's agent loop calls
  on vLLM; :class:`HFServerAdapter` (VERL's ``BaseRollout``, living in the actor process) receives
  the actor's weights through VERL's naive checkpoint engine each step and pushes them into the
  server, so every step's rollouts come from the current policy;
* two narrow patches for what VERL hard-codes for accelerators: the process-group backend string
  ``cpu:gloo,cpu:gloo`` (torch rejects a repeated device) becomes ``cpu:gloo``, and the reference
  model's ``CPUOffloadPolicy(pin_memory=True)`` (pinning needs CUDA) gets ``pin_memory=False``.

Facts behind each piece: ``shared/notes/verl-cpu.md``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import torch

__all__ = [
    "VERL_VERSION", "CPU_ENV", "PlatformCPU", "HFGenerateServer", "HFReplica", "HFServerAdapter",
    "check_verl_version", "install", "server_name",
]

logger = logging.getLogger(__name__)

VERL_VERSION = "0.9.1"
"""The verl release this stand-in was written against (its platform, replica and rollout APIs)."""

from prove.train import vllm_cpu  # noqa: E402
from prove.train.hf_generate import HFGenerateServer  # noqa: E402
from prove.train.launch import CPU_ENV  # noqa: E402  (one definition; launch imports no VERL)


def check_verl_version(installed: str | None = None) -> None:
    """Raise with what to do when the installed verl is not the one this stand-in targets."""
    if installed is None:
        from verl import __version__ as installed
    if installed != VERL_VERSION:
        raise RuntimeError(
            f"prove.train.cpu is written against verl {VERL_VERSION} (its platform, rollout-replica "
            f"and checkpoint-engine interfaces) but verl {installed} is installed; "
            f"pip install verl=={VERL_VERSION}, or run on a GPU machine (the paper path does not use "
            "this module)"
        )


check_verl_version()

from verl.plugin.platform.platform_base import PlatformBase  # noqa: E402
from verl.plugin.platform.platform_manager import PlatformRegistry  # noqa: E402


class _CPUDevice:
    """What VERL asks of ``torch.<device>`` on a CPU: no-ops and zero memory in use."""

    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def device_count() -> int:
        return 1

    @staticmethod
    def current_device() -> str:
        return "cpu"

    @staticmethod
    def set_device(*_: Any) -> None:
        return None

    @staticmethod
    def synchronize(*_: Any) -> None:
        return None

    @staticmethod
    def empty_cache() -> None:
        return None

    @staticmethod
    def manual_seed(seed: int) -> None:
        torch.manual_seed(seed)

    manual_seed_all = manual_seed

    @staticmethod
    def memory_allocated(*_: Any) -> int:
        return 0

    memory_reserved = max_memory_allocated = max_memory_reserved = memory_allocated

    @staticmethod
    def mem_get_info(*_: Any) -> tuple[int, int]:
        import psutil

        vm = psutil.virtual_memory()
        return vm.available, vm.total

    @staticmethod
    def reset_peak_memory_stats(*_: Any) -> None:
        return None

    @staticmethod
    def get_device_name(*_: Any) -> str:
        return "CPU"  # VERL's flops counter looks the name up in its table

    def __getattr__(self, name: str) -> Any:  # anything else VERL touches: a harmless no-op
        return lambda *args, **kwargs: None


_CPU_DEVICE = _CPUDevice()


@PlatformRegistry.register(platform="cpu")
class PlatformCPU(PlatformBase):
    """VERL's platform interface for a machine without an accelerator (select: VERL_PLATFORM=cpu)."""

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> ModuleType:
        return _CPU_DEVICE  # type: ignore[return-value]

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        return os.environ.get("VERL_PLATFORM", "").strip().lower() == "cpu"

    def current_device(self) -> str:  # type: ignore[override]
        return "cpu"  # torch and FSDP take the string; the index 0 would mean cuda:0

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"

    @contextmanager
    def nvtx_range(self, msg: str) -> Generator[None, None, None]:
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "GPU"  # a nominal booking: VERL's resource pools count GPUs; nothing touches one

    def ray_resource_options(self, num_gpus: float) -> dict[str, Any]:
        return {"num_gpus": num_gpus}

    def ray_noset_envvars(self) -> list[str]:
        return ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"]

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None


def _patch_process_group_backend() -> None:
    """``f"cpu:gloo,{device}:{backend}"`` is ``cpu:gloo,cpu:gloo`` here; torch wants ``cpu:gloo``."""
    import torch.distributed as dist

    original = dist.init_process_group
    if getattr(original, "_prove_cpu", False):
        return

    def init_process_group(*args: Any, backend: str | None = None, **kwargs: Any) -> Any:
        if isinstance(backend, str) and "," in backend:
            parts = list(dict.fromkeys(p.strip() for p in backend.split(",")))
            backend = ",".join(parts)
        return original(*args, backend=backend, **kwargs)

    init_process_group._prove_cpu = True  # type: ignore[attr-defined]
    dist.init_process_group = init_process_group


def _patch_offload_pinning() -> None:
    """The reference model's ``CPUOffloadPolicy(pin_memory=True)``: pinning needs CUDA."""
    from verl.workers.engine.fsdp import transformer_impl

    policy = transformer_impl.CPUOffloadPolicy
    if policy is None or getattr(policy, "_prove_cpu", False):
        return

    class UnpinnedCPUOffloadPolicy(policy):  # type: ignore[misc, valid-type]
        _prove_cpu = True

        def __init__(self, pin_memory: bool = False, **kwargs: Any) -> None:
            super().__init__(pin_memory=False, **kwargs)

    transformer_impl.CPUOffloadPolicy = UnpinnedCPUOffloadPolicy


def server_name(replica_rank: int) -> str:
    """The Ray actor name of a replica's generation server (the adapter finds it by name)."""
    return f"prove_hf_rollout_server_{replica_rank}"


def _replica_class() -> type:
    import ray
    from verl.workers.rollout.replica import RolloutReplica

    class HFReplica(RolloutReplica):
        """VERL's ``RolloutReplica`` for the ``hf`` rollout: one :class:`HFGenerateServer`."""

        async def launch_servers(self) -> None:
            node_id = ray.get_runtime_context().get_node_id()
            if self.workers:
                node_id = await self.workers[0].__ray_call__.remote(
                    lambda _: ray.get_runtime_context().get_node_id())
            server = ray.remote(HFGenerateServer).options(
                name=server_name(self.replica_rank), num_cpus=0,
                scheduling_strategy=ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(
                    node_id=node_id, soft=False),
                max_concurrency=self.max_concurrency,
                runtime_env={"env_vars": {k: v for k, v in os.environ.items()
                                          if k in CPU_ENV or k.startswith("PROVE_")}},
            ).remote(config=self.config, model_config=self.model_config, replica_rank=self.replica_rank)
            await server.stats.remote()  # constructed (model loaded) before the first request
            self.servers = [server]
            self._server_handle = server
            self._server_address = f"hf-rollout-{self.replica_rank}"

    return HFReplica


def _adapter_class() -> type:
    from verl.workers.rollout.base import BaseRollout

    class HFServerAdapter(BaseRollout):
        """VERL's ``BaseRollout`` in the actor process: forwards each step's weights to the server."""

        def __init__(self, config: Any, model_config: Any, device_mesh: Any, *args: Any,
                     replica_rank: int = -1, **kwargs: Any) -> None:
            super().__init__(config, model_config, device_mesh)
            rank = int(os.environ.get("RANK", "0"))
            world = (self.config.tensor_model_parallel_size * self.config.data_parallel_size
                     * self.config.pipeline_model_parallel_size)
            self.replica_rank = rank // world if replica_rank == -1 else replica_rank
            self.is_leader_rank = rank % world == 0
            self._server: Any = None

        def _handle(self) -> Any:
            import ray

            if self._server is None:
                self._server = ray.get_actor(server_name(self.replica_rank))
            return self._server

        async def resume(self, tags: list[str]) -> None:
            return None

        async def release(self) -> None:
            return None

        async def update_weights(self, weights: Iterable[tuple[str, torch.Tensor]],
                                 wire_format: str = "named_tensors", **kwargs: Any) -> None:
            if wire_format != "named_tensors":
                raise ValueError(f"the hf rollout takes named_tensors weight updates, not {wire_format!r}")
            state: dict[str, torch.Tensor] = {}
            async_iter = hasattr(weights, "__aiter__")
            if async_iter:
                async for name, tensor in weights:  # type: ignore[union-attr]
                    state[name] = _to_cpu(tensor)
            else:
                for name, tensor in weights:
                    state[name] = _to_cpu(tensor)
            if self.is_leader_rank:
                await self._handle().update_weights.remote(state, kwargs.get("global_steps"))

    return HFServerAdapter


def _to_cpu(tensor: torch.Tensor) -> torch.Tensor:
    if hasattr(tensor, "full_tensor"):
        tensor = tensor.full_tensor()
    return tensor.detach().to("cpu", copy=True)


HFReplica: type = type("HFReplica", (), {})  # replaced by install()
HFServerAdapter: type = type("HFServerAdapter", (), {})


def install() -> None:
    """Register the platform's companions in VERL: the ``hf`` rollout and the two patches."""
    global HFReplica, HFServerAdapter
    from verl.workers.rollout import base as rollout_base
    from verl.workers.rollout.replica import RolloutReplicaRegistry

    if "hf" not in RolloutReplicaRegistry._registry:
        HFReplica = _replica_class()
        HFServerAdapter = _adapter_class()
        RolloutReplicaRegistry.register("hf", lambda: HFReplica)
        rollout_base._ROLLOUT_REGISTRY[("hf", "async")] = f"{__name__}.HFServerAdapter"
    _patch_process_group_backend()
    _patch_offload_pinning()
    vllm_cpu.install()


install()
