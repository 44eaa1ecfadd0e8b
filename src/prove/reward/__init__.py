"""PROVE's programmatic reward (no judge model): validity, dependency-ordered coverage, adaptive
efficiency, tool-name signal, argument-value match and the state-verified outcome (weight 0 by
default), composed by ``score_turn``.

Use: ``from prove.reward import score_turn; score_turn(logged_calls, ground_truth, tools)``
(``prepare_turn`` normalises a row once for all its rollouts).
Formulas: ``prove.reward.components``; weights, β and ablations: ``prove.reward.config``;
VERL: ``prove.reward.verl.compute_score``; TRL: ``prove.reward.trl.make_trl_reward``.
"""

from prove.calls import Call, normalise_calls, parse_tool_calls
from prove.reward.compose import (
    COMPONENT_KEYS,
    KEYS,
    PreparedTurn,
    outcome_of,
    prepare_turn,
    score_turn,
)
from prove.reward.config import (
    ABLATIONS,
    CALL_ABLATIONS,
    COMPONENTS,
    PROVE,
    RewardConfig,
    get_config,
)
from prove.reward.parse import normalise_ground_truth
from prove.reward.trl import make_trl_reward, score_batch, trl_reward
from prove.reward.verl import compute_score

__all__ = [
    "ABLATIONS", "CALL_ABLATIONS", "COMPONENTS", "COMPONENT_KEYS", "KEYS", "PROVE", "Call", "PreparedTurn", "outcome_of",
    "RewardConfig", "compute_score", "get_config", "make_trl_reward", "normalise_calls",
    "normalise_ground_truth", "parse_tool_calls", "prepare_turn", "score_batch", "score_turn",
    "trl_reward",
]
