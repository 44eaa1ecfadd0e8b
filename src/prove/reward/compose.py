"""One turn's reward: the six components composed into a fixed-key dict (``score_turn``).

Use: ``score_turn(pred, ground_truth, tools, config)`` where ``pred`` is the logged calls (or
model text with ``<tool_call>`` blocks), ``ground_truth`` ``{"calls", "depends_on"}``, ``tools``
the offered schemas, ``config`` a ``RewardConfig`` or an ablation name. Formulas:
``prove.reward.components``. To score the rollouts of one row, normalise it once:
``turn = prepare_turn(ground_truth, tools)``, then ``score_turn(pred, *turn, config)``. The
state-verified outcome is a verdict the caller brings (``outcome=`` the rollout's effect hash
equals the row's ``expected_effect``; ``outcome_of`` compares them).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from prove.calls import calls_fields
from prove.reward import components as C
from prove.reward.config import RewardConfig, get_config
from prove.reward.parse import GroundTruth, normalise_ground_truth
from prove.reward.schema import ToolTable, tool_table

COMPONENT_KEYS: tuple[str, ...] = ("validity", "coverage", "efficiency", "name_signal", "arg_match",
                                   "outcome")
COUNT_KEYS: tuple[str, ...] = (
    "n_pred",  # calls made, unparseable ones included
    "n_gt",  # ground-truth calls of the turn
    "n_matched",  # ground-truth steps covered (|M| of formula 2)
    "n_errors",  # calls whose live execution is logged as failed
    "n_unknown_name",  # calls naming no offered tool (hallucinated or unparseable)
    "budget",  # B = n_g + ceil(n_g · β)
    "gt_empty",  # 1 for clarification/abstention turns (no ground-truth call)
    "outcome_known",  # 1 when the rollout's effect on the records was compared with the expected one
)
KEYS: tuple[str, ...] = ("score", *COMPONENT_KEYS, *COUNT_KEYS)


class PreparedTurn(NamedTuple):
    """One row's ground truth and offered tools, normalised and compiled once: a frozen snapshot
    (editing the row afterwards does not change it) shared by the rollouts of the row."""

    ground_truth: GroundTruth
    tools: ToolTable


def prepare_turn(ground_truth: Any, tools: Any = None) -> PreparedTurn:
    """``ground_truth`` normalised (``normalise_ground_truth``) and every offered tool compiled
    (``tool_table(tools).compile_all()``); dicts, lists and JSON strings as ``score_turn`` takes."""
    return PreparedTurn(normalise_ground_truth(ground_truth), tool_table(tools).compile_all())


def outcome_of(effect_hash: Any, expected_effect: Any) -> bool | None:
    """The state verdict: the rollout's effect hash equals the row's expected one; None when
    either is missing (a rollout that was not read, a row exported before rows carried it)."""
    if not effect_hash or not expected_effect:
        return None
    return str(effect_hash) == str(expected_effect)


def score_turn(
    pred: Any,
    ground_truth: Any,
    tools: Any = None,
    config: RewardConfig | str | None = None,
    outcome: bool | None = None,
) -> dict[str, float | int]:
    """The reward of one turn: ``score`` and every component and count in ``KEYS``, always.

    ``ground_truth`` and ``tools`` may also be JSON strings, or a ``prepare_turn``'s
    ``GroundTruth`` and ``ToolTable``; dicts and lists are read anew on every call (an edited row
    scores as edited). Without ``tools`` nothing was offered, so no call earns validity's name
    or argument thirds. ``outcome``: whether the rollout's episode ended with the ground truth's
    effect on the records (``outcome_of``); None reports the component as 0 with
    ``outcome_known`` 0, and raises under a config that weighs it on a turn with ground-truth
    calls (a turn without any scores by its calls alone: none is the answer).
    """
    cfg = get_config(config)
    calls = calls_fields(pred)
    gt = normalise_ground_truth(ground_truth)
    if outcome is None and cfg.needs_state and gt.names:
        raise ValueError(
            f"this reward config weighs the state-verified outcome (w_outcome={cfg.w_outcome:g}) "
            "but the rollout came without a verdict: the rollout's effect hash (the agent loop's "
            "extra_fields['effect_hash']) and the row's extra_info['expected_effect'] (rows "
            "exported from examples with replay.turn_effects) are both needed")
    state = 1.0 if outcome else 0.0
    table = tool_table(tools)
    n_p, n_g = len(calls), len(gt.names)
    names, relevant, thirds, n_errors, n_unknown = C.call_facts(calls, table, gt.by_name)

    b = C.budget(n_g, cfg.beta)
    if n_g == 0:  # clarification / abstention: full score for no call, none for calling
        validity = coverage = efficiency = name_signal = arg_match = 1.0 if n_p == 0 else 0.0
        n_matched = 0
    else:
        n_matched, value_sum = C.best_matching(
            C.compatible_pairs(relevant, gt, table, cfg), gt.need, cfg.exact_search_budget
        )
        validity = C.validity_of(thirds, n_p)
        coverage = C.coverage(n_matched, n_g)
        efficiency = C.efficiency_of(n_p, n_g, b)
        name_signal = C.name_signal(names, gt.names)
        arg_match = C.arg_match(value_sum, n_g)
    parts = (validity, coverage, efficiency, name_signal, arg_match, state)
    return {
        "score": C.total(parts, cfg.weights) if n_g else validity,
        "validity": validity,
        "coverage": coverage,
        "efficiency": efficiency,
        "name_signal": name_signal,
        "arg_match": arg_match,
        "outcome": state,
        "n_pred": n_p,
        "n_gt": n_g,
        "n_matched": n_matched,
        "n_errors": n_errors,
        "n_unknown_name": n_unknown,
        "budget": b,
        "gt_empty": 0 if n_g else 1,
        "outcome_known": 0 if outcome is None else 1,
    }
