"""PROVE's reward-hacking signals in VERL's training metrics, every step (verl 0.9.1's v1 trainer).

    VERL_USE_EXTERNAL_MODULES=prove.train.verl_metrics python -m verl.trainer.main_ppo ...   # prove train sets it

VERL logs the reward's score per step but none of the reward's other keys in training (only its
validation does), has no hook for a metric of one's own, and its training rollout dump keeps the
score alone. Every rollout's reward keys are in VERL's TransferQueue, though (its ``extra_fields``
hold ``reward_extra_info``, which VERL's own DAPO filter and speculative-decoding metrics read the
same way). This module adds one step to ``PPOTrainer._compute_metrics``: read those keys for the
step's rollouts and log ``prove/<signal>`` (``prove.reward.signals``: calls per turn against the
ground truth, failed and unknown calls, rollouts without a call, state success, high reward with
the state wrong, the reward/state correlation) beside VERL's metrics, so they reach wandb and
``metrics.jsonl`` live. VERL imports this module in every process it starts; the patch is applied
only where the trainer module is imported (the driver), through an import hook, so workers pay
nothing. The TRL engine logs the same keys (``prove.train.trl_engine.signals_column``).

The same hook mends one VERL teardown bug (``_patch_tracking``): a trainer that crashed with W&B
logging hung at exit instead of exiting with its error.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from prove.reward.signals import hacking_signals

__all__ = ["PREFIX", "TRAINER_MODULE", "step_metrics", "install"]

PREFIX = "prove/"
TRAINER_MODULE = "verl.trainer.ppo.v1.trainer_base"
TRACKING_MODULE = "verl.utils.tracking"


def step_metrics(extra_fields: Iterable[Any]) -> dict[str, float]:
    """``prove/<signal>`` over one step's rollouts from their ``extra_fields`` (each a dict with
    ``reward_extra_info``, PROVE's reward keys); signals nothing measured are left out."""
    rows = []
    for fields in extra_fields:
        fields = getattr(fields, "data", fields)  # a TransferQueue NonTensorData wraps the dict
        info = fields.get("reward_extra_info") if isinstance(fields, Mapping) else None
        if isinstance(info, Mapping) and "n_pred" in info:
            rows.append(info)
    if not rows:
        return {}
    return {PREFIX + k: v for k, v in hacking_signals(rows).items() if v == v}


def _patch(trainer_base: ModuleType) -> None:
    cls = trainer_base.PPOTrainer
    original = cls._compute_metrics
    if getattr(original, "_prove", False):
        return

    def _compute_metrics(self: Any, batch: Any, metrics: dict, *args: Any, **kwargs: Any) -> Any:
        out = original(self, batch, metrics, *args, **kwargs)
        import transfer_queue as tq

        keep = [i for i, tag in enumerate(batch.tags) if not tag.get("is_padding", False)]
        data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=["extra_fields"])
        fields = data.pop("extra_fields").tolist()
        metrics.update(step_metrics(fields[i] for i in keep))
        return out

    _compute_metrics._prove = True  # type: ignore[attr-defined]
    cls._compute_metrics = _compute_metrics


def _patch_tracking(tracking: ModuleType) -> None:
    """VERL's ``Tracking`` finishes its loggers in ``__del__``. A trainer that raises keeps it alive
    in the traceback until the interpreter shuts down, after W&B's own exit hook has closed the run
    and its service connection; ``wandb.finish`` then waits forever on the closed connection, and
    the crashed trainer never exits (VERL's SFT trainer, CI stop 44). W&B's exit hook has already
    recorded the run's end with the process's exit code, so a ``__del__`` at shutdown does nothing."""
    cls = tracking.Tracking
    original = cls.__del__
    if getattr(original, "_prove", False):
        return

    def __del__(self: Any) -> None:
        if sys.is_finalizing():
            return
        original(self)

    __del__._prove = True  # type: ignore[attr-defined]
    cls.__del__ = __del__


PATCHES = {TRAINER_MODULE: _patch, TRACKING_MODULE: _patch_tracking}
"""What is patched in each VERL module, right after it is first imported."""


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patches each module of ``PATCHES`` right after it is first imported (nothing else is touched)."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in PATCHES:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader

        class Loader(importlib.abc.Loader):
            def create_module(self, spec: Any) -> Any:
                return loader.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                loader.exec_module(module)
                PATCHES[name](module)

        spec.loader = Loader()
        return spec


def install() -> None:
    """Patch each module of ``PATCHES`` now if it is loaded, else when it is."""
    for name, patch in PATCHES.items():
        if name in sys.modules:
            patch(sys.modules[name])
    if not all(name in sys.modules for name in PATCHES) and not any(
            isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())


install()
