"""The paper's chain, described and found: a profile's ``train:`` plan, run labels, the trained models.

    from prove.train.chain import ChainPlan, trained_models
    plan = ChainPlan.from_profile(load_profile("smoke")["train"])   # run by prove.train.matrix
    models = trained_models("smollm2-135m")     # {"base": ..., "sft": ..., "grpo_default": ...}

Each run of a chain is exactly what a user types (``prove train smollm2-135m --variant sft``, then
``prove train smollm2-135m``); ``prove.train.matrix`` runs a plan's jobs in order and skips a
finished run (its ``model.json`` present), so an interrupted chain continues where it stopped.
Evaluation finds the models through :func:`trained_models`; nothing is filled in by hand.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from prove.train.config import TrainConfig, load_train_config
from prove.train.launch import RunPaths

__all__ = ["ChainPlan", "trained_models", "run_label"]


@dataclass(frozen=True)
class ChainPlan:
    """A profile's ``train:`` section (configs/profiles/*.yaml), typed: which chains 05 runs and how
    06 evaluates them. Unknown keys are rejected with the valid ones."""

    launch: bool = False
    """Run the chain (False: only the configuration checks)."""
    configs: tuple[str, ...] = ()
    variants: tuple[str, ...] = ("default",)
    sft_steps: int | None = None
    """None: each config's own (its SFT trainer's epochs/steps)."""
    grpo_steps: int | None = None
    heldout_rows: int | None = None
    heldout_max_new_tokens: int = 128
    chain_bfcl_categories: tuple[str, ...] | None = None
    """BFCL categories for every model of the chain; None: the profile's ``eval:`` ones."""
    chain_bfcl_ids: tuple[str, ...] | None = None
    chain_benchmarks: tuple[str, ...] | None = None
    """External benchmarks for every model of the chain; None: the evaluation plan's, (): none."""
    engine: str = "verl"
    """GRPO trainer (``prove train --engine``): verl or trl."""
    lr_sweep: bool = False
    """True: GRPO first at the three learning-rate points, then the other variants at the one with
    the best validation reward (``prove.train.matrix``); False: every variant at the config's rate."""
    report_dir: str | None = None
    """Where 07 writes the experiment's record (summary.csv, curves, versions); None: no record."""

    @classmethod
    def from_profile(cls, section: Mapping[str, Any] | None) -> ChainPlan:
        section = dict(section or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(section) - known)
        if unknown:
            raise ValueError(f"unknown train settings {unknown}; valid: {', '.join(sorted(known))}")
        for key in ("configs", "variants", "chain_bfcl_categories", "chain_bfcl_ids", "chain_benchmarks"):
            if section.get(key) is not None:
                section[key] = tuple(section[key])
        plan = cls(**section)
        from prove.train.launch import check_engine

        check_engine(plan.engine)
        return plan


def _config(config: str | TrainConfig) -> TrainConfig:
    return config if isinstance(config, TrainConfig) else load_train_config(config)


def run_label(variant: str) -> str:
    """``sft`` for the SFT run, ``grpo_<variant>`` for a GRPO run (``grpo_default`` is PROVE's)."""
    return "sft" if variant == "sft" else f"grpo_{variant}"


def trained_models(config: str | TrainConfig, results_dir: str | Path = "results",
                   checkpoints_dir: str | Path = "checkpoints",
                   variants: Sequence[str] | None = None) -> dict[str, str]:
    """``base`` and every finished run of the config (from its ``model.json``), by label."""
    cfg = _config(config).with_results(results_dir)
    found = {"base": cfg.model_path()}
    for name in variants or cfg.variants():
        paths = RunPaths.for_run(cfg, cfg.variant(name), results_dir, checkpoints_dir)
        if paths.model.is_file():
            folder = json.loads(paths.model.read_text())["hf_model"]
            if Path(folder, "config.json").is_file():
                found[run_label(name)] = folder
    return found
