"""Reward ablations on real turns: scripted behaviours executed live, scored under every reward config.

    from prove.reward.behaviours import score_behaviours, discrimination
    scores = score_behaviours(rows)              # VERL training rows (synthesis export); in-process hub
    discrimination(scores)                       # how often each config ranks the exact answer higher

For each training row (one user turn with its ground truth, seed, prefix and offered tools) every
behaviour below turns the ground-truth calls into a rollout: the exact calls, the calls padded with
repeated lookups, the calls in reverse order, the last call dropped, one argument value changed, one
call given another offered tool's name, or no call (reversal only where the turn has a
dependency edge, since independent calls may come in any order). Each rollout runs on a fresh episode of the row's
seed after its prefix (the live outcome, ok or error, is what the reward sees, as in training; the
episode's effect on the records, compared with the row's ``expected_effect``, is the state-verified
``outcome``) and is scored under every config in ``prove.reward.config.ABLATIONS``. A config that scores a degraded
behaviour as high as the exact answer gives GRPO no signal against it: that is what an ablation
removes. Everything is deterministic (no random draws), so the same rows give the same table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from prove.reward.compose import COMPONENT_KEYS, outcome_of, score_turn
from prove.reward.config import ABLATIONS, RewardConfig

__all__ = ["BEHAVIOURS", "DEGRADED", "turn_cases", "rollouts", "score_behaviours", "discrimination",
           "mean_table"]

Call = dict[str, Any]


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _exact(gt: list[Call], tools: list[str], writes: set[str]) -> list[Call] | None:
    return [dict(c) for c in gt]


def _padded(gt: list[Call], tools: list[str], writes: set[str]) -> list[Call] | None:
    """The answer, then each of its lookups once more: valid, successful, not needed."""
    reads = [c for c in gt if c["name"] not in writes]
    return [dict(c) for c in gt] + [dict(c) for c in reads[:2]] if reads else None


def _reordered(gt: list[Call], tools: list[str], writes: set[str]) -> list[Call] | None:
    return [dict(c) for c in reversed(gt)] if len(gt) >= 2 else None


def _truncated(gt: list[Call], tools: list[str], writes: set[str]) -> list[Call] | None:
    return [dict(c) for c in gt[:-1]]


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "-X"
    return None


def _wrong_args(gt: list[Call], tools: list[str], writes: set[str]) -> list[Call] | None:
    """The answer with the first changeable argument value of the last call altered."""
    out = [dict(c) for c in gt]
    for i in reversed(range(len(out))):
        args = dict(out[i].get("arguments") or {})
        for key in sorted(args):
            new = _changed(args[key])
            if new is not None:
                args[key] = new
                out[i] = {"name": out[i]["name"], "arguments": args}
                return out
    return None


def _wrong_tool(gt: list[Call], tools: list[str], writes: set[str]) -> list[Call] | None:
    """The answer with its last call renamed to the next offered tool (same arguments)."""
    others = sorted(set(tools) - {gt[-1]["name"]})
    if not others:
        return None
    name = next((t for t in others if t > gt[-1]["name"]), others[0])
    return [dict(c) for c in gt[:-1]] + [{"name": name, "arguments": dict(gt[-1].get("arguments") or {})}]


def _no_call(gt: list[Call], tools: list[str], writes: set[str]) -> list[Call] | None:
    return []


BEHAVIOURS: dict[str, Callable[[list[Call], list[str], set[str]], list[Call] | None]] = {
    "exact": _exact,
    "padded": _padded,
    "reordered": _reordered,
    "truncated": _truncated,
    "wrong_args": _wrong_args,
    "wrong_tool": _wrong_tool,
    "no_call": _no_call,
}
"""name -> f(ground-truth calls, offered tool names, write tools) -> calls, or None (not applicable)."""

DEGRADED: tuple[str, ...] = tuple(b for b in BEHAVIOURS if b != "exact")


def turn_cases(row: Mapping[str, Any], writes: set[str]) -> dict[str, list[Call]]:
    """Every applicable behaviour's calls for one training row with a non-empty ground truth."""
    truth = _json(row["reward_model"]["ground_truth"])
    gt = truth["calls"]
    if not gt:
        return {}
    tools = [t["function"]["name"] for t in _json(row["extra_info"]["tools"])]
    out = {}
    for name, make in BEHAVIOURS.items():
        if name == "reordered" and not truth.get("depends_on"):
            continue  # reversing independent calls is a correct answer, not a degraded one
        calls = make([{"name": c["name"], "arguments": c.get("arguments") or {}} for c in gt], tools, writes)
        if calls is not None:
            out[name] = calls
    return out


def rollouts(rows: Iterable[Mapping[str, Any]], hub: Any = None) -> list[dict[str, Any]]:
    """Run every behaviour of every row live; one record per (row, behaviour) with the logged calls."""
    from prove.env.effects import effect_hash
    from prove.env.hub import Hub

    hub = hub if hub is not None else Hub()
    writes = {name for name, spec in hub.registry.tools.items() if spec.write}
    out = []
    for row in rows:
        info = row["extra_info"]
        prefix = _json(info.get("prefix")) or []
        for behaviour, calls in turn_cases(row, writes).items():
            episode = f"ablate-{info['example_id']}-t{info['turn']}-{behaviour}"
            hub.open(episode, int(info["seed"]), prefix)
            try:
                logged = [hub.call(c["name"], c["arguments"], episode_id=episode) for c in calls]
                effect = effect_hash(hub.effect(episode))
            finally:
                hub.close(episode)
            out.append({"example_id": info["example_id"], "turn": int(info["turn"]), "behaviour": behaviour,
                        "calls": logged, "ground_truth": row["reward_model"]["ground_truth"],
                        "tools": info["tools"], "effect_hash": effect,
                        "expected_effect": info.get("expected_effect") or ""})
    return out


def score_behaviours(rows: Iterable[Mapping[str, Any]], configs: Mapping[str, RewardConfig] | None = None,
                     hub: Any = None) -> pd.DataFrame:
    """One row per (turn, behaviour, config): score, the six components, n_pred, n_errors."""
    configs = dict(ABLATIONS if configs is None else configs)
    records = []
    for r in rollouts(rows, hub):
        for name, cfg in configs.items():
            s = score_turn(r["calls"], r["ground_truth"], r["tools"], cfg,
                           outcome_of(r["effect_hash"], r["expected_effect"]))
            records.append({"example_id": r["example_id"], "turn": r["turn"], "behaviour": r["behaviour"],
                            "config": name, "score": s["score"], **{k: s[k] for k in COMPONENT_KEYS},
                            "n_pred": s["n_pred"], "n_gt": s["n_gt"], "n_errors": s["n_errors"],
                            "outcome_known": s["outcome_known"]})
    return pd.DataFrame.from_records(records)


def mean_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean score, behaviour x config (behaviours in `BEHAVIOURS` order, configs in `ABLATIONS` order)."""
    table = scores.pivot_table(index="behaviour", columns="config", values="score", aggfunc="mean")
    rows = [b for b in BEHAVIOURS if b in table.index]
    cols = [c for c in ABLATIONS if c in table.columns] + [c for c in table.columns if c not in ABLATIONS]
    return table.loc[rows, cols]


def discrimination(scores: pd.DataFrame, behaviours: Sequence[str] = DEGRADED) -> pd.DataFrame:
    """Share of turns where the exact answer scores strictly above each degraded behaviour, per config.

    1.0: the config always prefers the exact answer (GRPO gets a signal against that behaviour);
    lower: ties or inversions, where the group advantage cannot push the policy away from it.
    """
    key = ["example_id", "turn", "config"]
    exact = scores[scores.behaviour == "exact"].set_index(key)["score"]
    out = {}
    for b in behaviours:
        other = scores[scores.behaviour == b].set_index(key)["score"]
        joined = pd.concat([exact.rename("exact"), other.rename("other")], axis=1, join="inner")
        if joined.empty:
            continue
        wins = (joined["exact"] > joined["other"] + 1e-12).groupby(level="config").mean()
        out[b] = wins
    table = pd.DataFrame(out).T
    cols = [c for c in ABLATIONS if c in table.columns] + [c for c in table.columns if c not in ABLATIONS]
    return table[cols]
