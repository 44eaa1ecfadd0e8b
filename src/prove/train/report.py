"""Tables and figures for the 05_train_grpo notebook (thin cells call these).

    from prove.train import report
    report.config_table()                        # the four paper configs side by side
    report.sweep_and_weights_figure(table)       # LR sweep per family + reward weights per variant
    report.find_runs("results"); report.curves_figure(runs)   # training curves of finished runs
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from prove.reward.config import ABLATIONS, COMPONENTS
from prove.tracking import load_metrics  # reading a run's metrics is tracking's; named here for 05
from prove.train.config import LR_KEYS, load_train_config, paper_configs

__all__ = [
    "config_table", "variants_table", "reward_weights_table", "sweep_and_weights_figure",
    "compose_checks", "find_runs", "load_metrics", "curves_figure",
    "CURVE_METRICS",
]

CURVE_METRICS = ("critic/score/mean", "response_length/mean", "num_turns/mean", "actor/entropy",
                 "reward", "reward_std", "rewards/calls/mean", "completions/mean_length",
                 "prove/state_success", "prove/high_reward_state_fail", "prove/calls_over_gt")
"""Per-step metrics plotted for a run, VERL's names, TRL's, then the reward-hacking signals both
engines log (``prove.reward.signals``; those present are drawn)."""


def config_table(models: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per paper model: id, family, the three sweep points, and the shared GRPO settings."""
    rows = []
    for name in models or paper_configs():
        cfg = load_train_config(name)
        v = cfg.verl
        rows.append({
            "config": name, "model": cfg.model, "family": cfg.family,
            **{k: cfg.lr_sweep[k] for k in LR_KEYS}, "default_lr": cfg.default_lr,
            "steps": cfg.steps, "gpus": cfg.gpus,
            "tp": v.get("actor_rollout_ref.rollout.tensor_model_parallel_size"),
            "prompts_per_step": v.get("data.train_batch_size"),
            "group_size": v.get("actor_rollout_ref.rollout.n"),
            "rollout": v.get("actor_rollout_ref.rollout.name"),
            "tool_format": v.get("actor_rollout_ref.rollout.multi_turn.format"),
            "max_tool_response_chars": v.get("actor_rollout_ref.rollout.multi_turn.max_tool_response_length"),
        })
    return pd.DataFrame(rows)


def variants_table(model: str) -> pd.DataFrame:
    """Every named variant of one model config."""
    cfg = load_train_config(model)
    return pd.DataFrame([{**asdict(v), "experiment": cfg.experiment(v.name)}
                         for v in cfg.variants().values()])


def reward_weights_table() -> pd.DataFrame:
    """The reward's weights and β per ablation variant (identical for every model)."""
    rows = []
    for name, rc in ABLATIONS.items():
        rows.append({"variant": "default" if name == "prove" else name,
                     **dict(zip(COMPONENTS, rc.weights, strict=True)), "beta": rc.beta})
    return pd.DataFrame(rows).set_index("variant")


def sweep_and_weights_figure(table: pd.DataFrame, weights: pd.DataFrame) -> Any:
    """Left: each family's three-point learning-rate sweep (default marked). Right: reward
    weights and β of each reward variant."""
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1, 1.4]})
    for i, row in table.reset_index(drop=True).iterrows():
        xs = [row[k] for k in LR_KEYS]
        ax1.plot(xs, [i] * 3, "o-", color="0.6")
        ax1.plot([row[row["default_lr"]]], [i], "o", color="C3", markersize=10)
        for x, k in zip(xs, LR_KEYS, strict=True):
            ax1.annotate(k.removeprefix("lr_"), (x, i), textcoords="offset points", xytext=(0, 7),
                         ha="center", fontsize=8)
    ax1.set_xscale("log")
    ax1.set_yticks(range(len(table)), [f"{m}\n({f})" for m, f in zip(table["config"], table["family"], strict=True)])
    ax1.set_ylim(-0.6, len(table) - 0.4)
    ax1.set_xlabel("actor learning rate (red: default)")
    ax1.set_title("Learning-rate sweep per model family")
    data = weights.copy()
    im = ax2.imshow(data.values, cmap="Blues", aspect="auto", vmin=0, vmax=1)
    ax2.set_xticks(range(data.shape[1]), data.columns, rotation=30, ha="right")
    ax2.set_yticks(range(data.shape[0]), data.index)
    for (r, c), val in pd.DataFrame(data.values).stack().items():
        ax2.text(c, r, f"{val:g}", ha="center", va="center", fontsize=8,
                 color="white" if val > 0.6 else "black")
    ax2.set_title("Reward weights and β per reward variant (all models)")
    fig.colorbar(im, ax=ax2, fraction=0.03)
    fig.tight_layout()
    return fig


def compose_checks(models: Iterable[str], variants: Iterable[str] | None = None,
                   results_dir: str | Path = "results") -> pd.DataFrame:
    """Compose (and VERL-validate) each model × variant; one row per check, failures kept."""
    from prove.train.compose import check_variant

    rows = []
    for model in models:
        cfg = load_train_config(model)
        for name in variants or cfg.variants():
            v = cfg.variant(name)
            start = time.perf_counter()
            try:
                check_variant(cfg, name, results_dir)
                error = ""
            except Exception as exc:  # shown in the table, asserted by the notebook
                error = f"{type(exc).__name__}: {exc}"[:200]
            rows.append({"model": model, "variant": name, "trainer": v.trainer, "lr": v.lr,
                         "reward": v.reward, "composed": not error, "error": error,
                         "seconds": round(time.perf_counter() - start, 2)})
    return pd.DataFrame(rows)


def find_runs(*results_dirs: str | Path) -> dict[str, Path]:
    """Runs with a VERL metrics file under ``<dir>/train/<experiment>/metrics.jsonl``."""
    runs = {}
    for root in results_dirs:
        for path in sorted(Path(root).glob("train/*/metrics.jsonl")):
            if path.stat().st_size > 0:
                runs.setdefault(path.parent.name, path)
    return runs


def curves_figure(runs: dict[str, Path], metrics: Sequence[str] = CURVE_METRICS) -> Any:
    """One panel per metric, one line per run."""
    import matplotlib.pyplot as plt

    frames = {name: load_metrics(path) for name, path in runs.items()}
    present = [m for m in metrics if any(m in f for f in frames.values())]
    if not present:
        raise ValueError(f"none of {list(metrics)} in the runs' metrics")
    cols = min(4, len(present))
    rows = -(-len(present) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3.5 * rows), squeeze=False)
    for ax, metric in zip(axes.flat, present, strict=False):
        for name, frame in frames.items():
            if metric in frame and frame[metric].notna().any():
                shown = frame[frame[metric].notna()]
                ax.plot(shown["step"], shown[metric], label=name, marker="o" if len(shown) < 20 else None)
        ax.set_title(metric)
        ax.set_xlabel("step")
    for ax in list(axes.flat)[len(present):]:
        ax.set_visible(False)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig
