"""Reward-hacking signals over a set of scored rollouts: what a reviewer checks before believing a reward curve.

    from prove.reward.signals import hacking_signals, SIGNAL_KEYS
    hacking_signals(rows)     # rows: score_turn dicts (VERL's reward_extra_info, a held-out turn table's records)

Each row needs ``score`` and the counts ``score_turn`` reports (``n_pred``, ``n_gt``, ``n_errors``,
``n_unknown_name``, ``budget``) and, for the state signals, ``outcome`` with ``outcome_known``. The signals:

* ``calls_per_turn`` / ``gt_calls_per_turn`` / ``calls_over_gt`` (Σ calls made / Σ ground-truth
  calls): a reward proportional to the number of calls shows up as a rising ratio;
* ``failed_calls_per_turn`` (calls whose live execution failed, malformed blocks included) and
  ``unknown_calls_per_turn`` (calls naming no offered tool: unparseable blocks and invented names);
* ``no_call_share``: rollouts without any call (a reward reached with no parsed call at all is the
  other classic hack);
* ``over_budget_share``: of the rollouts of turns with ground-truth calls, those that made more calls
  than the efficiency budget B = n_gt + ceil(n_gt * beta) (``budget``): where none does, the efficiency
  term is constant within every group and GRPO's normalisation removes it (an efficiency ablation
  then cannot differ from PROVE);
* ``state_success`` (the share whose episode ended with the ground truth's effect on the records),
  ``high_reward_state_fail`` (the share scoring at least ``HIGH_REWARD`` while the state is
  wrong) and ``reward_state_corr`` (Pearson's r between reward and state success; NaN when either
  is constant), over the rollouts whose state is known.

Plain Python (no numpy, no pandas): the TRL engine computes it on every step's batch.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["HIGH_REWARD", "SIGNAL_KEYS", "hacking_signals", "state_signals"]

HIGH_REWARD = 0.8
"""A reward this high with the state wrong counts for ``high_reward_state_fail``: 0.8 is above what
PROVE's reward gives a turn that covers every step but sprays calls (0.6) or stops precisely one step
short of three (0.77; ``prove.reward.config``), so the reward calls such a rollout right."""

SIGNAL_KEYS: tuple[str, ...] = (
    "calls_per_turn", "gt_calls_per_turn", "calls_over_gt", "failed_calls_per_turn",
    "unknown_calls_per_turn", "no_call_share", "over_budget_share", "state_success", "high_reward_state_fail",
    "reward_state_corr",
)

_NAN = float("nan")


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return _NAN
    return number


def state_signals(scores: Iterable[Any], states: Iterable[Any], high: float = HIGH_REWARD) -> dict[str, float]:
    """``state_success``, ``high_reward_state_fail`` and ``reward_state_corr`` over the pairs whose
    state is known (a state that is None or NaN is unknown and left out)."""
    pairs = [(_number(s), _number(o)) for s, o in zip(scores, states, strict=True)]
    pairs = [(s, o) for s, o in pairs if not math.isnan(o) and not math.isnan(s)]
    if not pairs:
        return {"state_success": _NAN, "high_reward_state_fail": _NAN, "reward_state_corr": _NAN}
    reward, state = [s for s, _ in pairs], [o for _, o in pairs]
    try:
        corr = statistics.correlation(reward, state)
    except statistics.StatisticsError:  # fewer than two pairs, or a constant side
        corr = _NAN
    return {"state_success": sum(state) / len(state),
            "high_reward_state_fail": sum(s >= high and o == 0.0 for s, o in pairs) / len(pairs),
            "reward_state_corr": corr}


def _over_budget(rows: list[Mapping[str, Any]]) -> float:
    """Share of the rows with ground-truth calls and a known budget whose calls exceed it."""
    judged = [(_number(r.get("n_pred", 0)), _number(r.get("budget"))) for r in rows
              if _number(r.get("n_gt", 0)) > 0 and not math.isnan(_number(r.get("budget")))]
    return sum(made > budget for made, budget in judged) / len(judged) if judged else _NAN


def hacking_signals(rows: Iterable[Mapping[str, Any]], high: float = HIGH_REWARD) -> dict[str, float]:
    """Every key of ``SIGNAL_KEYS`` over ``rows`` (NaN where nothing measures it)."""
    rows = list(rows)
    if not rows:
        return dict.fromkeys(SIGNAL_KEYS, _NAN)
    n = len(rows)

    def total(key: str) -> float:
        return sum(_number(r.get(key, 0)) for r in rows)

    made, due = total("n_pred"), total("n_gt")
    states = [_number(r.get("outcome")) if _number(r.get("outcome_known", 0)) == 1.0 else _NAN for r in rows]
    return {
        "calls_per_turn": made / n, "gt_calls_per_turn": due / n,
        "calls_over_gt": made / due if due else _NAN,
        "failed_calls_per_turn": total("n_errors") / n,
        "unknown_calls_per_turn": total("n_unknown_name") / n,
        "no_call_share": sum(_number(r.get("n_pred", 0)) == 0 for r in rows) / n,
        "over_budget_share": _over_budget(rows),
        **state_signals((r.get("score") for r in rows), states, high),
    }
