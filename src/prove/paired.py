"""Paired comparisons of models on the same held-out turns, with bootstrap confidence intervals.

    from prove.paired import paired_differences
    table = paired_differences(turns, pairs=[("grpo_prove", "sft"), ("sft", "base")])

``turns`` is 06's per-turn held-out table (``heldout_turns.csv``: one row per model, conversation and
turn; the model in ``label``). Every model answered the same turns with the same greedy decoding, so a
difference is measured turn by turn: for each pair (model, reference) and metric, the mean of the
per-turn differences and its percentile bootstrap interval. Turns of one conversation share a
prefix and are not independent, so the bootstrap resamples whole conversations (a cluster
bootstrap); the interval is wider than a turn-level one when a conversation's turns move together.
Rows come per subset: every turn, the turns with ground-truth calls, and the turns whose answer is
no call (abstention and clarification: where trained models lost most), so a gain on one cannot
hide a loss on the other. Seeded: the same table and seed give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["PAIRED_METRICS", "SUBSETS", "KEY", "with_without_call", "paired_differences", "mean_intervals"]

PAIRED_METRICS: dict[str, str] = {
    "score": "held-out reward",
    "coverage": "coverage",
    "exact": "exact turn",
    "n_pred": "calls per turn",
    "without_call": "answered without a call",
    "state_success": "state success",
}
"""Per-turn columns of the held-out table compared (column -> label); absent ones are skipped."""
SUBSETS: tuple[str, ...] = ("all", "calls", "no_call")
"""``all`` turns, turns with ground-truth ``calls`` (n_gt > 0), turns answered with ``no_call``."""
KEY: tuple[str, ...] = ("example_id", "turn")
"""What identifies a turn across models."""


def _subset(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    if name == "all":
        return frame
    calls = frame["n_gt"] > 0
    return frame[calls] if name == "calls" else frame[~calls]


def _paired(turns: pd.DataFrame, run: str, reference: str, metric: str) -> pd.DataFrame:
    """One row per turn both answered: example_id, turn, n_gt, the run's and the reference's value.
    Raises when the two did not answer the same turns (a paired comparison needs every turn twice)."""
    sides = {}
    for label in (run, reference):
        part = turns[turns["label"] == label]
        if part.empty:
            known = sorted(turns["label"].unique())
            raise ValueError(f"no held-out turns of {label!r}; the table has {known}")
        if part.duplicated(list(KEY)).any():
            raise ValueError(f"{label!r} has more than one row for some (example_id, turn)")
        sides[label] = part.set_index(list(KEY))
    a, b = sides[run], sides[reference]
    only_a, only_b = a.index.difference(b.index), b.index.difference(a.index)
    if len(only_a) or len(only_b):
        raise ValueError(
            f"{run!r} and {reference!r} did not answer the same turns ({len(only_a)} only in {run!r}, "
            f"{len(only_b)} only in {reference!r}, e.g. {list(only_a[:2]) + list(only_b[:2])}); evaluate "
            "every model on the same held-out rows (06 does) before comparing them")
    out = pd.DataFrame({"n_gt": b["n_gt"], "run": a[metric].astype(float),
                        "reference": b.loc[a.index, metric].astype(float)}).reset_index()
    return out.sort_values(list(KEY), kind="stable").reset_index(drop=True)


def with_without_call(turns: pd.DataFrame) -> pd.DataFrame:
    """``turns`` with the column ``without_call``: 1.0 where the model made no call (``n_pred == 0``),
    the right answer on an abstention or clarification turn; unchanged when it has one or lacks
    ``n_pred``."""
    if "without_call" in turns.columns or "n_pred" not in turns.columns:
        return turns
    return turns.assign(without_call=(turns["n_pred"] == 0).astype(float))


def _checked(turns: pd.DataFrame, level: float, n_boot: int) -> pd.DataFrame:
    """``turns`` (with ``without_call``) once the interval's settings and the table's key columns
    are valid; raises saying what is wrong and what is valid."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1 (e.g. 0.95), got {level}")
    if n_boot < 100:
        raise ValueError(f"n_boot={n_boot} is too few draws for a percentile interval; use at least 100")
    missing = [c for c in ("label", *KEY, "n_gt") if c not in turns.columns]
    if missing:
        raise ValueError(f"the held-out turn table lacks {missing} (06's heldout_turns.csv has them)")
    return with_without_call(turns)


def _metrics(turns: pd.DataFrame, metrics: Sequence[str] | None) -> list[str]:
    """The metrics asked for (default: the :data:`PAIRED_METRICS` the table has); raises naming a
    column the table lacks."""
    wanted = list(metrics) if metrics is not None else [m for m in PAIRED_METRICS if m in turns.columns]
    absent = [m for m in wanted if m not in turns.columns]
    if absent:
        raise ValueError(f"no column {absent} in the held-out turn table; it has {sorted(turns.columns)}")
    return wanted


def _interval(frame: pd.DataFrame, n_boot: int, level: float, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap of the mean per-turn difference, resampling conversations."""
    return _cluster_interval((frame["run"] - frame["reference"]).to_numpy(), frame["example_id"], n_boot,
                             level, rng)


def _cluster_interval(values: np.ndarray, clusters: pd.Series, n_boot: int, level: float,
                      rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap of the mean of ``values``, resampling whole ``clusters`` (conversations)."""
    diff = np.asarray(values, dtype=float)
    groups = pd.factorize(clusters, sort=True)[0]
    n = int(groups.max()) + 1
    sums = np.bincount(groups, weights=diff, minlength=n)
    counts = np.bincount(groups, minlength=n).astype(float)
    draws = rng.integers(0, n, size=(n_boot, n))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def paired_differences(turns: pd.DataFrame, pairs: Sequence[tuple[str, str]], *,
                       metrics: Sequence[str] | None = None, n_boot: int = 2000, level: float = 0.95,
                       seed: int = 0) -> pd.DataFrame:
    """Per (run, reference, metric, subset): turns, conversations, both means, the mean per-turn
    difference (run − reference) and its bootstrap interval (module doc). ``metrics`` default to
    the :data:`PAIRED_METRICS` the table has; a subset without turns is left out."""
    turns = _checked(turns, level, n_boot)
    wanted = _metrics(turns, metrics)
    rows = []
    for run, reference in pairs:
        for metric in wanted:
            paired = _paired(turns, run, reference, metric)
            for subset in SUBSETS:
                part = _subset(paired, subset).dropna(subset=["run", "reference"])
                if part.empty:
                    continue
                # one generator per row, from the seed and the row's identity: a row's interval
                # does not depend on which other pairs, metrics or subsets were asked for
                key = f"{run}|{reference}|{metric}|{subset}".encode()
                rng = np.random.default_rng([seed, *key])
                low, high = _interval(part, n_boot, level, rng)
                rows.append({
                    "run": run, "reference": reference, "metric": metric,
                    "label": PAIRED_METRICS.get(metric, metric), "subset": subset, "turns": len(part),
                    "conversations": part["example_id"].nunique(),
                    "run_mean": part["run"].mean(), "reference_mean": part["reference"].mean(),
                    "diff": (part["run"] - part["reference"]).mean(), "ci_low": low, "ci_high": high,
                    "level": level,
                })
    return pd.DataFrame(rows, columns=["run", "reference", "metric", "label", "subset", "turns",
                                       "conversations", "run_mean", "reference_mean", "diff", "ci_low",
                                       "ci_high", "level"])


def mean_intervals(turns: pd.DataFrame, labels: Sequence[str] | None = None, *,
                   metrics: Sequence[str] | None = None, n_boot: int = 2000, level: float = 0.95,
                   seed: int = 0) -> pd.DataFrame:
    """Per (model, metric, subset): turns, conversations, the mean and its bootstrap interval
    (conversations resampled, as :func:`paired_differences`): each model's own numbers with their
    uncertainty, the no-call turns (:data:`SUBSETS`) as rows of their own. ``labels`` default to
    every model in the table, in its order; ``metrics`` to the :data:`PAIRED_METRICS` it has
    (``without_call`` derived from ``n_pred``)."""
    turns = _checked(turns, level, n_boot)
    known = list(dict.fromkeys(turns["label"]))
    wanted_labels = list(labels) if labels is not None else known
    unknown = [x for x in wanted_labels if x not in known]
    if unknown:
        raise ValueError(f"no held-out turns of {unknown}; the table has {known}")
    wanted = _metrics(turns, metrics)
    rows = []
    for label in wanted_labels:
        part = turns[turns["label"] == label].sort_values(list(KEY), kind="stable")
        for metric in wanted:
            for subset in SUBSETS:
                chosen = _subset(part, subset).dropna(subset=[metric])
                if chosen.empty:
                    continue
                key = f"{label}|{metric}|{subset}".encode()
                low, high = _cluster_interval(chosen[metric].to_numpy(dtype=float), chosen["example_id"], n_boot,
                                              level, np.random.default_rng([seed, *key]))
                rows.append({"run": label, "metric": metric, "label": PAIRED_METRICS.get(metric, metric),
                             "subset": subset, "turns": len(chosen),
                             "conversations": chosen["example_id"].nunique(),
                             "mean": float(chosen[metric].astype(float).mean()), "ci_low": low, "ci_high": high,
                             "level": level})
    return pd.DataFrame(rows, columns=["run", "metric", "label", "subset", "turns", "conversations", "mean",
                                       "ci_low", "ci_high", "level"])
