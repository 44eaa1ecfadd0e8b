"""TRL adapter: a batch reward function for ``GRPOTrainer(reward_funcs=[...])`` (TRL not imported).

Use: ``GRPOTrainer(..., reward_funcs=[make_trl_reward("prove")])`` with dataset columns
``ground_truth`` (the turn's ``{"calls", "depends_on"}``, dict or JSON string), optionally
``tools`` (offered schemas), ``tool_calls`` (a live log per completion), and for the
state-verified outcome ``expected_effect`` (the row's) and ``effect_hash`` (each rollout's, from
its live episode: ``prove.train.trl_engine.ProveRollout`` returns it).
``score_batch`` returns the full component dicts for logging.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from prove.calls import Call, normalise_call, parse_tool_calls
from prove.reward.compose import outcome_of, score_turn
from prove.reward.config import RewardConfig, get_config
from prove.reward.parse import GroundTruth, normalise_ground_truth
from prove.reward.schema import ToolTable, tool_table


def calls_from_completion(completion: Any) -> list[Call]:
    """Calls in a TRL completion: plain text (``<tool_call>`` blocks) or conversational (a list
    of messages: each assistant message's OpenAI ``tool_calls`` and ``<tool_call>`` blocks in its
    content, in order). Outcomes are unknown here; pass a ``tool_calls`` log to have them."""
    if isinstance(completion, str):
        return parse_tool_calls(completion)
    calls: list[Call] = []
    for message in completion if isinstance(completion, (list, tuple)) else ():
        if not isinstance(message, dict) or message.get("role", "assistant") != "assistant":
            continue
        structured = message.get("tool_calls")
        if isinstance(structured, list):
            calls.extend(normalise_call(c, outcome=False) for c in structured)
        calls.extend(parse_tool_calls(message.get("content")))
    return calls


def _column(values: Any, n: int, name: str) -> Sequence[Any]:
    if values is None:
        return [None] * n
    if not isinstance(values, (list, tuple)) or len(values) != n:
        raise ValueError(f"column {name!r} must be a list with one entry per completion ({n})")
    return values


def score_batch(
    completions: Sequence[Any],
    ground_truth: Sequence[Any],
    tools: Sequence[Any] | None = None,
    tool_calls: Sequence[Any] | None = None,
    config: RewardConfig | str | None = None,
    effect_hash: Sequence[Any] | None = None,
    expected_effect: Sequence[Any] | None = None,
) -> list[dict[str, float | int]]:
    """``score_turn`` over a batch. A completion's ``tool_calls`` log, when given (not None),
    takes precedence over calls parsed from its text. The ground truth and tools of a run of
    consecutive rows that carry the same objects, as the rollouts of one prompt do, are
    normalised once for the run (within this call, so a row edited between two calls scores as
    edited). Misaligned columns raise ``ValueError``."""
    n = len(completions)
    cfg = get_config(config)
    gts = _column(ground_truth, n, "ground_truth")
    offered = _column(tools, n, "tools")
    logs = _column(tool_calls, n, "tool_calls")
    got = _column(effect_hash, n, "effect_hash")
    want = _column(expected_effect, n, "expected_effect")
    scores: list[dict[str, float | int]] = []
    row: tuple[Any, Any, GroundTruth, ToolTable] | None = None  # the current run of rows
    for c, gt, t, log, h, e in zip(completions, gts, offered, logs, got, want, strict=True):
        if row is None or gt is not row[0] or t is not row[1]:
            # compiled lazily (only the names called): the table lives for this call only
            row = (gt, t, normalise_ground_truth(gt), tool_table(t))
        pred = log if log is not None else calls_from_completion(c)
        scores.append(score_turn(pred, row[2], row[3], cfg, outcome_of(h, e)))
    return scores


def make_trl_reward(config: RewardConfig | str | None = None) -> Callable[..., list[float]]:
    """A TRL reward function (``prompts, completions, **columns`` → one float per completion),
    named ``prove_<config>`` so TRL logs it as ``rewards/prove_<config>``."""
    cfg = get_config(config)
    label = config if isinstance(config, str) else "prove" if config is None else "custom"

    def reward(
        prompts: Any = None,
        completions: Sequence[Any] = (),
        ground_truth: Sequence[Any] | None = None,
        tools: Sequence[Any] | None = None,
        tool_calls: Sequence[Any] | None = None,
        effect_hash: Sequence[Any] | None = None,
        expected_effect: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float]:
        scores = score_batch(completions, ground_truth, tools, tool_calls, cfg, effect_hash,
                             expected_effect)
        return [float(s["score"]) for s in scores]

    reward.__name__ = reward.__qualname__ = f"prove_{label}"
    return reward


trl_reward = make_trl_reward()
