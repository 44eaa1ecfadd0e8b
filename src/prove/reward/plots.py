"""Figures for notebooks/04_reward.ipynb, drawn on ``matplotlib.figure.Figure`` (no pyplot state,
any backend). Use: ``fig = verbosity_figure(analysis.verbosity_curve()); fig.savefig(path)``."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

_STYLE = {  # config -> (label, colour, line style, width)
    "prove": ("PROVE (all components)", "#1b4f8a", "-", 3.0),
    "no_validity": ("no validity", "#8fb8de", "-", 1.4),
    "no_coverage": ("no coverage", "#c2a5cf", "-", 1.4),
    "no_efficiency": ("no efficiency (weight 0)", "#e08214", "-", 1.8),
    "beta0": ("β = 0 (tight budget)", "#5aae61", "--", 1.8),
    "no_name": ("no name signal", "#d6604d", "-", 1.8),
    "no_args": ("no argument signal", "#969696", "-", 1.4),
    "recall_only": ("recall only (coverage)", "#000000", ":", 2.4),
}


def verbosity_figure(curve: pd.DataFrame, budget_extra: int, partial: float) -> Figure:
    """Score against the number of extra calls beyond the ground truth, one line per config.
    ``budget_extra`` = B - n_g for PROVE's β; ``partial`` = PROVE's score for a precise rollout
    that stops one step short (the spray-versus-precision reference)."""
    fig = Figure(figsize=(8.5, 5))
    ax = fig.subplots()
    for config, rows in curve.groupby("config", sort=False):
        label, colour, style, width = _STYLE.get(config, (config, None, "-", 1.4))
        ax.plot(rows["extra_calls"], rows["score"], style, color=colour, lw=width, label=label,
                marker="o", ms=3)
    ax.axvline(budget_extra, color="#999999", lw=1)
    ax.text(budget_extra + 0.12, 0.3, "PROVE's budget B", color="#666666", fontsize=8,
            rotation=90, va="bottom")
    ax.axhline(partial, color="#1b4f8a", lw=1, ls="--", alpha=0.5)
    ax.text(curve["extra_calls"].max(), partial + 0.01, "PROVE: 2 of 3 steps, no padding",
            color="#1b4f8a", fontsize=8, ha="right", va="bottom")
    ax.set(xlabel="extra valid, successful calls after the exact ground truth (n_g = 3)",
           ylabel="score", ylim=(0, 1.04), title="Padding never pays under PROVE's reward")
    ax.legend(fontsize=8, loc="lower left", ncol=2)
    ax.grid(alpha=0.3)
    return fig


def coverage_heatmap(grid: pd.DataFrame) -> Figure:
    """Score over (coverage, calls per ground-truth step), one panel per config."""
    configs = list(dict.fromkeys(grid["config"]))
    fig = Figure(figsize=(6.5 * len(configs), 4.2))
    axes = fig.subplots(1, len(configs), squeeze=False)[0]
    for ax, config in zip(axes, configs, strict=True):
        table = grid[grid["config"] == config].pivot(index="coverage", columns="calls_per_step",
                                                     values="score").sort_index(ascending=False)
        table.columns = [f"{c:.2f}".rstrip("0").rstrip(".") for c in table.columns]
        table.index = [f"{c:.2f}" for c in table.index]
        sns.heatmap(table, ax=ax, vmin=0, vmax=1, cmap="viridis", annot=True, fmt=".2f",
                    annot_kws={"fontsize": 7}, cbar_kws={"label": "score"})
        ax.set(xlabel="n_p / n_g (calls per ground-truth step)", ylabel="coverage",
               title=_STYLE.get(config, (config,))[0])
    fig.suptitle("Score over coverage and verbosity (n_g = 4; blank: n_p below covered steps)")
    fig.tight_layout()
    return fig


def beta_figure(curves: pd.DataFrame, budgets: pd.DataFrame) -> Figure:
    """Left: the efficiency component against n_p for each β (n_g = 4). Right: the budget B
    against n_g for each β."""
    fig = Figure(figsize=(11, 4.2))
    left, right = fig.subplots(1, 2)
    for beta, rows in curves.groupby("beta"):
        left.plot(rows["n_pred"], rows["efficiency"], marker="o", ms=3, label=f"β = {beta:g}")
    left.set(xlabel="calls made n_p (n_g = 4)", ylabel="efficiency component",
             title="No penalty up to B, then −1/n_g per extra call")
    left.legend(fontsize=8)
    left.grid(alpha=0.3)
    n_gts = [int(c.split("=")[1]) for c in budgets.columns]
    for beta, row in budgets.iterrows():
        right.plot(n_gts, row.to_numpy(), marker="o", ms=3, label=f"β = {beta:g}")
    right.plot(n_gts, n_gts, color="#999999", lw=1, ls=":", label="B = n_g")
    right.set(xlabel="ground-truth calls n_g", ylabel="budget B = n_g + ceil(n_g·β)",
              title="Budget against turn length")
    right.legend(fontsize=8)
    right.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def cases_figure(cases: pd.DataFrame) -> Figure:
    """Components and per-config scores of the hand-built cases, as an annotated heatmap."""
    values = cases.set_index("case").drop(columns=["policy", "n_pred"])
    fig = Figure(figsize=(13, 0.42 * len(values) + 1.8))
    ax = fig.subplots()
    sns.heatmap(values, ax=ax, vmin=0, vmax=1, cmap="viridis", annot=True, fmt=".2f",
                annot_kws={"fontsize": 7}, cbar_kws={"label": "value"})
    ax.axvline(5, color="white", lw=3)
    ax.set(xlabel="PROVE's components | score under each config", ylabel="")
    ax.set_title("Hand-built cases: what each component sees")
    ax.tick_params(axis="x", labelrotation=35, labelsize=8)
    fig.tight_layout()
    return fig


def behaviours_figure(means: pd.DataFrame, wins: pd.DataFrame, n_turns: int) -> Figure:
    """Left: mean score per (behaviour, config); right: share of turns where the exact answer wins.

    ``means`` / ``wins``: ``behaviours.mean_table`` / ``behaviours.discrimination``."""
    fig = Figure(figsize=(15, 4.8))
    left, right = fig.subplots(1, 2)
    labels = [_STYLE.get(c, (c,))[0] for c in means.columns]
    sns.heatmap(means, ax=left, vmin=0, vmax=1, cmap="viridis", annot=True, fmt=".2f",
                annot_kws={"fontsize": 7}, cbar_kws={"label": "mean score"}, xticklabels=labels)
    left.set(xlabel="", ylabel="behaviour", title="Mean score of each behaviour")
    sns.heatmap(wins, ax=right, vmin=0, vmax=1, cmap="RdYlGn", annot=True, fmt=".2f",
                annot_kws={"fontsize": 7}, cbar_kws={"label": "share of turns"},
                xticklabels=[_STYLE.get(c, (c,))[0] for c in wins.columns])
    right.set(xlabel="", ylabel="", title="Exact answer scores strictly higher (GRPO has a signal)")
    for ax in (left, right):
        ax.tick_params(axis="x", labelrotation=35, labelsize=8)
        for tick in ax.get_xticklabels():
            tick.set_horizontalalignment("right")
    fig.suptitle(f"Reward ablations on {n_turns} synthesized turns, every rollout executed live")
    fig.tight_layout()
    return fig
