"""Figures for the evaluation notebook: BFCL per-category accuracy, τ² pass^k, T-Eval abilities, base vs trained.

    from prove.eval.plots import plot_bfcl_categories; plot_bfcl_categories(rows, "figures/bfcl.png")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

__all__ = ["plot_bfcl_categories", "plot_tau2_pass_k", "plot_teval_abilities", "plot_comparison",
           "plot_heldout"]

_SHORT = {"multi_turn_base": "base", "multi_turn_miss_func": "miss func", "multi_turn_miss_param": "miss param",
          "multi_turn_long_context": "long context"}


def _grouped_bars(ax: Any, table: pd.DataFrame, ylabel: str) -> None:
    """Bars of `table` (index: groups on x; columns: series)."""
    n = max(len(table.columns), 1)
    width = 0.8 / n
    x = np.arange(len(table.index))
    for i, col in enumerate(table.columns):
        values = table[col].to_numpy(dtype=float)
        bars = ax.bar(x + (i - (n - 1) / 2) * width, np.nan_to_num(values), width, label=str(col))
        for bar, v in zip(bars, values, strict=True):
            if not np.isnan(v):
                ax.annotate(f"{v:.1f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                            ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, [str(i) for i in table.index])
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def _save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_bfcl_categories(rows: Iterable[Mapping[str, Any]], path: str | Path, reachable: bool = False,
                         title: str = "BFCL Multi-Turn accuracy by category") -> Path:
    """Accuracy (%) per category and overall, one bar per label. `rows`: bfcl.write_results' rows."""
    df = pd.DataFrame(list(rows))
    col = "accuracy_reachable" if reachable else "accuracy"
    df["category"] = df["category"].map(lambda c: _SHORT.get(c, c))
    table = df.pivot_table(index="category", columns="label", values=col, aggfunc="first") * 100
    order = [c for c in [*_SHORT.values(), "overall"] if c in table.index]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    _grouped_bars(ax, table.loc[order], "accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title + (" (reachable items only)" if reachable else ""))
    return _save(fig, path)


def plot_tau2_pass_k(rows: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """pass^k against k per domain, one line per label."""
    df = pd.DataFrame(list(rows))
    domains = list(dict.fromkeys(df["domain"]))
    fig, axes = plt.subplots(1, len(domains), figsize=(3.2 * len(domains), 3.2), squeeze=False)
    ks = [c for c in df.columns if c.startswith("pass^")]
    for ax, domain in zip(axes[0], domains, strict=True):
        for label, sub in df[df["domain"] == domain].groupby("label"):
            ax.plot(range(1, len(ks) + 1), 100 * sub[ks].iloc[0].to_numpy(dtype=float), marker="o", label=label)
        ax.set_title(f"τ² {domain}")
        ax.set_xlabel("k")
        ax.set_xticks(range(1, len(ks) + 1))
        ax.set_ylabel("pass^k (%)")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return _save(fig, path)


def plot_teval_abilities(scores: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """T-Eval ability scores (0..100), one bar per label. `scores`: TEval.score outputs."""
    table = pd.DataFrame({s["label"]: s["abilities"] for s in scores})
    fig, ax = plt.subplots(figsize=(7, 3.6))
    _grouped_bars(ax, table, "score")
    ax.set_ylim(0, 105)
    ax.set_title("T-Eval by ability")
    return _save(fig, path)


def plot_comparison(table: pd.DataFrame, path: str | Path) -> Path:
    """Base vs trained per model and benchmark (the `paper.comparison_table` frame)."""
    t = table.copy()
    t.index = [f"{m}\n{b}" for m, b in zip(t["model"], t["benchmark"], strict=True)]
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(t)), 3.6))
    _grouped_bars(ax, t[["base", "trained"]], "score")
    ax.set_title("Base vs PROVE-trained")
    return _save(fig, path)


HELDOUT_METRICS = ("heldout_reward", "heldout_coverage", "exact_turn", "state_success", "high_reward_state_fail",
                   "abstention_accuracy", "clarification_accuracy")


def plot_heldout(summary: pd.DataFrame, path: str | Path) -> Path:
    """PROVE's held-out metrics (share, 0..1) and calls per turn, one bar per run (base, sft, grpo_*)."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [3, 1]})
    order = {"base": 0, "sft": 1}  # base, SFT, then the GRPO runs in their order
    summary = summary.iloc[sorted(range(len(summary)), key=lambda i: (order.get(summary["run"].iloc[i], 2), i))]
    table = summary.set_index("run")[list(HELDOUT_METRICS)].T
    table.index = [name.replace("_", "\n", 1) for name in table.index]
    _grouped_bars(ax, table, "share of held-out turns / mean reward")
    ax.set_ylim(0, 1.1)
    ax.set_title("PROVE held-out turns, executed live")
    calls = summary.set_index("run")[["calls_per_turn", "gt_calls_per_turn"]]
    _grouped_bars(bx, calls.T, "calls per turn")
    bx.set_title("calls made vs ground truth")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return path
