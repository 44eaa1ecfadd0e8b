"""The paper's chain, described and found: a profile's ``train:`` plan, run labels, the trained models.

    from prove.train.chain import trained_models
    plan = load_profile("smoke").train          # a ChainPlan (prove.profiles); run by prove.train.matrix
    models = trained_models("smollm2-135m")     # {"base": ..., "sft": ..., "grpo_default": ...}

Each run of a chain is exactly what a user types (``prove train smollm2-135m --variant sft``, then
``prove train smollm2-135m``); ``prove.train.matrix`` runs a plan's jobs in order and skips a
finished run (its ``model.json`` present), so an interrupted chain continues where it stopped.
Evaluation finds the models through :func:`trained_models`; nothing is filled in by hand.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from prove.profiles import ChainPlan
from prove.train.config import LR_KEYS, TrainConfig, load_train_config
from prove.train.launch import RunPaths

__all__ = ["ChainPlan", "trained_models", "run_label"]


def _config(config: str | TrainConfig) -> TrainConfig:
    return config if isinstance(config, TrainConfig) else load_train_config(config)


def run_label(variant: str) -> str:
    """``sft`` for the SFT run, ``grpo_<variant>`` for a GRPO run (``grpo_default`` is PROVE's)."""
    return "sft" if variant == "sft" else f"grpo_{variant}"


def trained_models(config: str | TrainConfig, results_dir: str | Path = "results",
                   checkpoints_dir: str | Path = "checkpoints",
                   variants: Sequence[str] | None = None) -> dict[str, str]:
    """``base`` and every finished run of the config (from its ``model.json``), by label.

    Each model is listed once: after a learning-rate sweep, ``grpo_default`` is the picked sweep
    run itself (``prove.train.matrix.alias_default``), so the sweep point's own label is left out
    and evaluation serves and scores that model once, as the paper's ``grpo_default``. The sweep's
    other points are left out too: the sweep is decided on validation, and the paper evaluates the
    picked rate only (name them in ``variants`` to evaluate them anyway)."""
    cfg = _config(config).with_results(results_dir)
    found = {"base": cfg.model_path()}
    names = list(variants or cfg.variants())
    if "default" in names:  # the default first: a run that repeats it gives way to it
        names.remove("default")
        names.insert(0, "default")
    seen: set[str] = set()
    swept = False
    for name in names:
        paths = RunPaths.for_run(cfg, cfg.variant(name), results_dir, checkpoints_dir)
        if not paths.model.is_file():
            continue
        record = json.loads(paths.model.read_text())
        swept = swept or (name == "default" and "sweep_validation" in record)
        if swept and variants is None and name in LR_KEYS:
            continue
        folder = record["hf_model"]
        key = str(Path(folder).resolve())
        if Path(folder, "config.json").is_file() and key not in seen:
            seen.add(key)
            found[run_label(name)] = folder
    return found
