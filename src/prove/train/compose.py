"""Compose our overrides against VERL's own Hydra configs and run VERL's config checks (CPU).

    from prove.train.compose import check_variant
    check_variant(load_train_config("qwen3-4b"), "lr_high")   # raises on any key VERL lacks

This is what VERL's entry points do before they touch a GPU: Hydra composes
``verl/trainer/config/ppo_trainer.yaml`` (or ``sft_trainer_engine.yaml``) with our ``key=value``
list — a key VERL does not define is an error, since only ``ADDABLE_PREFIXES`` use ``+`` — then
``validate_config`` and VERL's typed dataclasses (actor, rollout) check the values, and VERL's
``get_custom_reward_fn`` loads our reward hook with its kwargs.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prove.train.config import ADDABLE_PREFIXES, TrainConfig
from prove.train.launch import RunPaths, build_command, run_env

__all__ = ["verl_config_dir", "compose", "check_grpo", "check_sft", "check_variant"]

_initialised = False  # Hydra's global state points at VERL's config dir (set by compose)


def verl_config_dir() -> Path:
    import verl.trainer

    return Path(verl.trainer.__file__).parent / "config"


def compose(overrides: Sequence[str], config_name: str = "ppo_trainer") -> Any:
    """VERL's config with ``overrides`` applied (Hydra's compose API, strict keys)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    for item in overrides:
        if item.startswith("+") and not item.startswith(ADDABLE_PREFIXES):
            raise ValueError(f"override {item!r} adds a key outside {ADDABLE_PREFIXES}")
    global _initialised
    hydra = GlobalHydra.instance()
    if not (hydra.is_initialized() and _initialised):  # initialise once, compose many times
        hydra.clear()
        initialize_config_dir(config_dir=str(verl_config_dir()), version_base=None)
        _initialised = True
    return hydra_compose(config_name=config_name, overrides=list(overrides))


def check_grpo(overrides: Sequence[str]) -> Any:
    """Compose for ``main_ppo`` and run VERL's own validation; returns the config."""
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    cfg = compose(overrides, "ppo_trainer")
    with warnings.catch_warnings():  # GRPO has no critic by design; VERL warns about it
        warnings.filterwarnings("ignore", message="Disabled critic")
        use_critic = need_critic(cfg)
    validate_config(cfg, use_reference_policy=need_reference_policy(cfg), use_critic=use_critic)
    rollout = omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
    if get_custom_reward_fn(cfg) is None:  # loads prove.reward.verl.compute_score + kwargs
        raise ValueError("reward.custom_reward_function is not set")
    if rollout.multi_turn.max_tool_response_length < 1024:
        raise ValueError("multi_turn.max_tool_response_length would cut real tool outputs")
    return cfg


def check_sft(overrides: Sequence[str]) -> Any:
    """Compose for ``sft_trainer`` and build its typed optimizer/model configs; returns the config."""
    from verl.utils.config import omega_conf_to_dataclass

    cfg = compose(overrides, "sft_trainer_engine")
    omega_conf_to_dataclass(cfg.optim)
    omega_conf_to_dataclass(cfg.checkpoint)
    return cfg


def check_variant(cfg: TrainConfig, variant_name: str, results_dir: str | Path = "results") -> Any:
    """Compose and validate the exact overrides ``prove train`` would pass for this variant."""
    variant = cfg.variant(variant_name)
    paths = RunPaths.for_run(cfg, variant, results_dir)
    cmd = build_command(cfg, variant, paths, run_env(paths, {}))
    module = "verl.trainer.sft_trainer" if variant.trainer == "sft" else "verl.trainer.main_ppo"
    overrides = cmd[cmd.index(module) + 1:]
    return check_sft(overrides) if variant.trainer == "sft" else check_grpo(overrides)
