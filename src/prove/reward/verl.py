"""VERL adapter: ``compute_score`` for ``reward.custom_reward_function`` (VERL is not imported).

Use in a VERL config: ``reward.custom_reward_function.path=<.../prove/reward/verl.py>`` and
``name=compute_score``; pick an ablation with ``+reward.custom_reward_function.reward_kwargs.
config=beta0``. Returns the fixed-key dict of ``score_turn`` (VERL needs the same keys for every
sample and numeric values), the state-verified ``outcome`` included.
"""

from __future__ import annotations

from typing import Any

from prove.calls import loads, parse_tool_calls
from prove.reward.compose import outcome_of, score_turn
from prove.reward.config import RewardConfig

TOOL_LOG_KEY = "tool_calls"  # the rollout's call log, written by prove.train.agent_loop.ProveAgentLoop
EFFECT_KEY = "effect_hash"  # the rollout's effect on the records, read by ProveAgentLoop at its end
EXPECTED_KEY = "expected_effect"  # the ground truth's, on the row (prove.rows)


def _decoded(value: Any) -> Any:
    """Parquet rows may carry the log as a JSON string; decode it, keep anything else."""
    return loads(value, None) if isinstance(value, str) else value


def compute_score(
    data_source: Any,
    solution_str: Any,
    ground_truth: Any,
    extra_info: Any = None,
    config: RewardConfig | str | None = None,
    **kw: Any,
) -> dict[str, float | int]:
    """Score one VERL trajectory.

    Predicted calls come from ``extra_info["tool_calls"]`` (the live log, with outcomes) when the
    key is present — ``ProveAgentLoop`` logs every ``<tool_call>`` block there, the ones VERL's
    parser drops or never runs as failed calls, so an empty list means the policy made no call. Only when it is absent (or
    null) are ``<tool_call>`` blocks parsed from ``solution_str``; those have no live outcome,
    so they never earn validity's execution third. ``ground_truth`` is the turn's
    ``{"calls", "depends_on"}`` as a dict or a JSON string; offered schemas are
    ``extra_info["tools"]`` (list or JSON string). ``data_source`` is not used: one reward for
    every PROVE row. The state-verified outcome compares ``extra_info["effect_hash"]`` (the
    episode's effect, which the loop reads before closing it) with the row's
    ``extra_info["expected_effect"]``. An unknown ``config`` name raises (a misconfigured run
    should stop), and so does a config that weighs the outcome when either hash is missing.
    """
    info = extra_info if isinstance(extra_info, dict) else {}
    log = _decoded(info.get(TOOL_LOG_KEY))
    pred = parse_tool_calls(solution_str) if log is None else log
    return score_turn(pred, ground_truth, info.get("tools"), config,
                      outcome_of(info.get(EFFECT_KEY), info.get(EXPECTED_KEY)))
