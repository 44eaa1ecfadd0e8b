"""The five reward components as small pure functions; this docstring is where the formulas live.

Use: ``prove.reward.score_turn`` composes them; each is importable on its own for analysis.

Notation: P the predicted calls in order (n_p), G the turn's ground-truth calls (n_g), D its
dependency edges (i, j): step j needs step i completed first.

1. Validity (graduated, in [0, 1])::

       validity = 1/n_p · Σ_{p∈P} (name_ok(p) + args_ok(p) + exec_ok(p)) / 3

   name_ok: the name is one of the offered tools. args_ok: the arguments are a JSON object the
   tool's schema accepts (required keys present, no unknown keys, types and enums valid; see
   ``prove.reward.schema``); 0 when the name is unknown (there is no schema to check against).
   exec_ok: the logged live execution succeeded (``ok`` is true); an unknown outcome (calls
   parsed from text) earns 0. No call at all (n_p = 0, n_g > 0) has validity 0.

2. Coverage::

       coverage = |M| / n_g

   M is a largest matching between steps of G and calls of P such that a call p may cover step g
   only if name(p) = name(g), keys(args(g)) ⊆ keys(args(p)), its arguments are an object, and
   (with ``coverage_requires_success``) its execution did not fail; each call covers at most one
   step; and for every edge (i, j) ∈ D with j ∈ M, step i is covered by a call earlier in P than
   j's. Among largest matchings, the one with the highest argument-value agreement (5) is taken.
   Search: exact dynamic programming over the predicted calls in order with the set of covered
   steps as state (≤ 2^n_g states; microseconds for the n_g ≤ 5 of real turns) while
   (compatible pairs) · 2^n_g ≤ ``exact_search_budget``; beyond that, greedy (each call in order
   takes the best currently coverable step) — a valid matching, so a lower bound on the maximum.

3. Adaptive efficiency::

       B = n_g + ceil(n_g · β)
       efficiency = 1                              if n_p ≤ B
                    max(0, 1 - (n_p - B) / n_g)    otherwise

   (ceil is taken with a 1e-9 tolerance so that n_g · β that is an integer in exact arithmetic is
   not pushed up by float rounding.)

4. Tool-name signal::

       name_signal = |names(P) ∩ names(G)|_multiset / max(n_p, n_g)

   Each ground-truth name is credited at most as often as it occurs in G, and the max() in the
   denominator makes every call beyond n_g cost credit, inside the budget too: calling many
   different tools does not buy credit, and any strict superset of G scores below G.

5. Argument-value match::

       arg_match = 1/n_g · Σ_{(p,g)∈M} |{k ∈ args(g) : args(p)[k] ≈ args(g)[k]}| / |args(g)|

   (a step without arguments counts 1). ≈ is ``prove.reward.values.values_match``: strings after
   collapsing whitespace and case-folding; numbers within ``rel_tol``/``abs_tol`` (bool is not a
   number; numeric strings as numbers); lists in order, or as multisets where the parameter's
   schema has ``uniqueItems: true``; objects key by key. arg_match ≤ coverage.

Total: ``score = Σ_c w_c · c / Σ_c w_c`` over the five components, in [0, 1] (weights and β in
``RewardConfig``). A turn whose ground truth is empty (clarification, abstention) scores 1 with
no call and 0 with any call, and every component reports that same value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from prove.reward.config import RewardConfig
from prove.reward.parse import Call, GroundTruth
from prove.reward.schema import ToolSpec, ToolTable
from prove.reward.values import values_match

_MAX_EXACT_STEPS = 30  # 2**n_g is never formed beyond this; greedy instead


# 1. Validity -------------------------------------------------------------------------------


def validity(pred: Sequence[Call], table: ToolTable) -> float:
    """Mean over P of the thirds earned — name offered, arguments accepted by its schema, live
    execution succeeded; 0 when there is no call."""
    if not pred:
        return 0.0
    get = table.get
    thirds = 0
    for name, arguments, well_formed, ok in pred:
        if ok is True:
            thirds += 1
        spec = get(name)
        if spec is not None:
            thirds += 2 if well_formed and spec.check(arguments) else 1
    return thirds / (3 * len(pred))


# 2. Coverage (and the matching that 5 reuses) ----------------------------------------------

_PLAIN = frozenset((str, int, float, bool, type(None)))  # == is safe and exact on these
_ABSENT = object()


def pair_value(
    gt_args: dict, pred_args: dict, spec: ToolSpec | None, config: RewardConfig
) -> float:
    """Share of one ground-truth call's argument values reproduced by a predicted call."""
    if not gt_args:
        return 1.0
    hits = 0
    for key, value in gt_args.items():
        other = pred_args.get(key, _ABSENT)
        if type(value) in _PLAIN and type(other) is type(value) and other == value:
            hits += 1
        elif other is not _ABSENT and values_match(
            value, other, spec.param_schema(key) if spec is not None else None, config
        ):
            hits += 1
    return hits / len(gt_args)


def compatible_pairs(
    pred: Sequence[Call], gt: GroundTruth, table: ToolTable, config: RewardConfig
) -> list[list[tuple[int, float]]]:
    """For each predicted call in order: the (step, argument-value share) pairs it may cover."""
    by_name, step_keys, step_args = gt.by_name, gt.keys, gt.arguments
    skip_failed = config.coverage_requires_success
    out: list[list[tuple[int, float]]] = []
    for name, arguments, well_formed, ok in pred:
        steps = by_name.get(name)
        if steps is None or not well_formed or (skip_failed and ok is False):
            out.append([])
            continue
        keys = arguments.keys()
        spec = table.get(name)
        out.append([(g, pair_value(step_args[g], arguments, spec, config))
                    for g in steps if keys >= step_keys[g]])
    return out


def best_matching(
    options: Sequence[Sequence[tuple[int, float]]], need: Sequence[int], budget: int
) -> tuple[int, float]:
    """(|M|, Σ argument-value shares over M) of the dependency-respecting matching of formula 2:
    exact DP while (pairs · 2^n_g) ≤ budget, greedy beyond. When every call may cover at most
    one step and every step has at most one candidate call the matching is forced, and the
    greedy pass is that exact answer."""
    n_g = len(need)
    pairs = 0
    forced = True
    seen = 0
    for opts in options:
        if opts:
            pairs += len(opts)
            if len(opts) > 1 or seen >> opts[0][0] & 1:
                forced = False
            else:
                seen |= 1 << opts[0][0]
    if pairs == 0:
        return 0, 0.0
    if forced or n_g > _MAX_EXACT_STEPS or (pairs << n_g) > budget:
        return _greedy_matching(options, need)
    states: dict[int, float] = {0: 0.0}
    for opts in options:
        if not opts:
            continue
        for mask, value in list(states.items()):
            for g, share in opts:
                if mask >> g & 1 or need[g] & ~mask:
                    continue
                new_mask = mask | (1 << g)
                new_value = value + share
                old = states.get(new_mask)
                if old is None or new_value > old:
                    states[new_mask] = new_value
    best_mask, best_value = max(states.items(), key=lambda kv: (kv[0].bit_count(), kv[1]))
    return best_mask.bit_count(), best_value


def _greedy_matching(
    options: Sequence[Sequence[tuple[int, float]]], need: Sequence[int]
) -> tuple[int, float]:
    covered, count, total = 0, 0, 0.0
    for opts in options:
        choice: tuple[int, float] | None = None
        for g, share in opts:
            if covered >> g & 1 or need[g] & ~covered:
                continue
            if choice is None or share > choice[1]:
                choice = (g, share)
        if choice is not None:
            covered |= 1 << choice[0]
            count += 1
            total += choice[1]
    return count, total


def coverage(n_matched: int, n_g: int) -> float:
    """Share of G covered in a correct dependency order (formula 2)."""
    return n_matched / n_g if n_g else 1.0


# 3. Adaptive efficiency --------------------------------------------------------------------


def budget(n_g: int, beta: float) -> int:
    """B = n_g + ceil(n_g · β)."""
    return n_g + math.ceil(n_g * beta - 1e-9)


def efficiency(n_p: int, n_g: int, beta: float) -> float:
    """1 within the budget, then falling by 1/n_g per extra call to 0 (formula 3)."""
    b = budget(n_g, beta)
    if n_p <= b:
        return 1.0
    if n_g == 0:
        return 0.0
    return max(0.0, 1.0 - (n_p - b) / n_g)


# 4. Tool-name signal -----------------------------------------------------------------------


def name_signal(pred_names: Sequence[str], gt_names: Sequence[str]) -> float:
    """Multiset overlap of names normalised by max(n_p, n_g) (formula 4); 1 when both empty."""
    denominator = max(len(pred_names), len(gt_names))
    if denominator == 0:
        return 1.0
    remaining: dict[str, int] = {}
    for name in gt_names:
        remaining[name] = remaining.get(name, 0) + 1
    hits = 0
    for name in pred_names:
        left = remaining.get(name)
        if left:
            hits += 1
            remaining[name] = left - 1
    return hits / denominator


# 5. Argument-value match -------------------------------------------------------------------


def arg_match(value_sum: float, n_g: int) -> float:
    """Σ over matched pairs of the reproduced share of argument values, divided by n_g."""
    return min(1.0, value_sum / n_g) if n_g else 1.0


# Total -------------------------------------------------------------------------------------


def total(parts: Sequence[float], weights: Sequence[float]) -> float:
    """Σ w_c · c / Σ w_c, clipped to [0, 1]. Numerator and denominator add the same weights in
    the same order, so five perfect components give exactly 1.0."""
    w0, w1, w2, w3, w4 = weights
    c0, c1, c2, c3, c4 = parts
    mean = (w0 * c0 + w1 * c1 + w2 * c2 + w3 * c3 + w4 * c4) / (w0 + w1 + w2 + w3 + w4)
    return min(1.0, max(0.0, mean))
