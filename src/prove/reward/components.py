"""The five reward components as small pure functions; this docstring is where the formulas live.

Use: ``prove.reward.score_turn`` composes them; each is importable on its own for analysis.
``call_facts`` walks the predicted calls once for what formulas 1, 2 and 4 need of each call.

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

6. State-verified outcome::

       outcome = 1   if effect(episode) = effect(ground truth)
                 0   otherwise

   effect(·) is what an episode's calls did to the records since its seed (``prove.env.effects``:
   records created, changed field by field, deleted; its SHA-256). The ground truth's is recorded
   at replay validation (the example's ``replay.turn_effects``, the row's ``expected_effect``); the
   rollout's is read from its live episode when the rollout ends. Any calls that reach that effect
   earn it, in any order and with any reads in between; a write with another value does not. It is
   not a function of the calls alone, so ``score_turn`` takes it as a verdict
   (``outcome=True/False``); ``None`` (unknown) reports 0 with ``outcome_known`` 0, and a config
   that weighs it refuses to score without it.

Total: ``score = Σ_c w_c · c / Σ_c w_c`` over the six components, in [0, 1] (weights and β in
``RewardConfig``; the outcome's weight is 0 in PROVE's, so the paper's score is the five
call-based components'). A turn whose ground truth is empty (clarification, abstention) scores 1
with no call and 0 with any call, and components 1-5 report that same value (the outcome reports
the state: a read-only answer leaves it as the ground truth does).
"""

from __future__ import annotations

import math
from collections.abc import Container, Sequence

from prove.calls import CallFields
from prove.reward.config import RewardConfig
from prove.reward.parse import GroundTruth
from prove.reward.schema import ToolSpec, ToolTable
from prove.reward.values import values_match

_MAX_EXACT_STEPS = 30  # 2**n_g is never formed beyond this; greedy instead


# 1. Validity -------------------------------------------------------------------------------


def call_facts(
    pred: Sequence[CallFields], table: ToolTable, gt_names: Container[str]
) -> tuple[list[str], list[CallFields], int, int, int]:
    """One pass over P for what the components need of each call, as (names, relevant, thirds,
    n_errors, n_unknown): every name in order (formula 4); the calls naming a ground-truth tool,
    in order, the only ones formula 2 can match; the validity thirds earned over P (formula 1:
    a name that is offered, arguments its schema accepts, a live execution that succeeded); the
    failed executions; the names no offered tool has."""
    get = table.get
    names: list[str] = []
    relevant: list[CallFields] = []
    thirds = n_errors = n_unknown = 0
    for call in pred:
        name, arguments, well_formed, ok = call
        names.append(name)
        if name in gt_names:
            relevant.append(call)
        if ok is True:
            thirds += 1
        elif ok is False:
            n_errors += 1
        spec = get(name)
        if spec is None:
            n_unknown += 1
        else:
            thirds += 2 if well_formed and spec.check(arguments) else 1
    return names, relevant, thirds, n_errors, n_unknown


def validity_of(thirds: int, n_p: int) -> float:
    """Formula 1 from the thirds earned by n_p calls; 0 when there is no call."""
    return thirds / (3 * n_p) if n_p else 0.0


def validity(pred: Sequence[CallFields], table: ToolTable) -> float:
    """Mean over P of the thirds earned — name offered, arguments accepted by its schema, live
    execution succeeded; 0 when there is no call."""
    return validity_of(call_facts(pred, table, ())[2], len(pred))


# 2. Coverage (and the matching that 5 reuses) ----------------------------------------------

_PLAIN = frozenset((str, int, float, bool, type(None)))  # == is safe and exact on these
_EXACT = frozenset((int, bool, type(None)))  # two values of one of these types: ≈ is ==
_ABSENT = object()
_NO_OPTIONS: tuple[tuple[int, float], ...] = ()  # shared by every call that can cover nothing


def _same_strings(a: list, b: list) -> bool:
    """Equal lists of plain strings (which ≈ always accepts, in order or as multisets)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=False):  # same length, checked above
        if type(x) is not str or type(y) is not str or x != y:
            return False
    return True


def pair_value(
    gt_args: dict, pred_args: dict, spec: ToolSpec | None, config: RewardConfig
) -> float:
    """Share of one ground-truth call's argument values reproduced by a predicted call. Values of
    one plain type that are equal match, two unequal ints (or bools) do not, and equal lists of
    plain strings match, all without calling ``values_match``; it decides everything else."""
    if not gt_args:
        return 1.0
    hits = 0
    for key, value in gt_args.items():
        other = pred_args.get(key, _ABSENT)
        kind = type(value)
        if kind is type(other):
            if kind in _PLAIN and other == value:
                hits += 1
                continue
            if kind in _EXACT:
                continue
            if kind is list and _same_strings(value, other):
                hits += 1
                continue
        elif other is _ABSENT:
            continue
        if values_match(value, other, spec.param_schema(key) if spec is not None else None,
                        config):
            hits += 1
    return hits / len(gt_args)


def compatible_pairs(
    pred: Sequence[CallFields], gt: GroundTruth, table: ToolTable, config: RewardConfig
) -> list[Sequence[tuple[int, float]]]:
    """For each predicted call in order: the (step, argument-value share) pairs it may cover."""
    by_name, step_keys, step_args = gt.by_name, gt.keys, gt.arguments
    skip_failed = config.coverage_requires_success
    out: list[Sequence[tuple[int, float]]] = []
    for name, arguments, well_formed, ok in pred:
        steps = by_name.get(name)
        if steps is None or not well_formed or (skip_failed and ok is False):
            out.append(_NO_OPTIONS)
            continue
        keys = arguments.keys()
        spec = table.get(name)
        options = []
        for g in steps:
            if keys >= step_keys[g]:
                options.append((g, pair_value(step_args[g], arguments, spec, config)))
        out.append(options)
    return out


def best_matching(
    options: Sequence[Sequence[tuple[int, float]]], need: Sequence[int], budget: int
) -> tuple[int, float]:
    """(|M|, Σ argument-value shares over M) of the dependency-respecting matching of formula 2:
    exact DP while (pairs · 2^n_g) ≤ budget, greedy beyond. When every call may cover at most
    one step and every step has at most one candidate call the matching is forced: the greedy
    pass is that exact answer, and it runs in the same loop that finds out."""
    n_g = len(need)
    pairs = 0
    forced = True
    seen = covered = count = 0  # seen: steps some call may cover; covered: those taken
    total = 0.0
    for opts in options:
        if opts:
            pairs += len(opts)
            if forced:
                g, share = opts[0]
                if len(opts) > 1 or seen >> g & 1:
                    forced = False
                else:
                    seen |= 1 << g
                    if not need[g] & ~covered:
                        covered |= 1 << g
                        count += 1
                        total += share
    if forced:
        return count, total
    if n_g > _MAX_EXACT_STEPS or (pairs << n_g) > budget:
        return _greedy_matching(options, need)
    states: dict[int, float] = {0: 0.0}
    for opts in options:
        if not opts:
            continue
        for mask, value in list(states.items()):
            for g, share in opts:
                if mask >> g & 1 or need[g] & ~mask:
                    continue
                new_mask = mask | 1 << g
                new_value = value + share
                if new_value > states.get(new_mask, -1.0):  # shares are >= 0
                    states[new_mask] = new_value
    best_count, best_value = 0, 0.0  # the empty matching, always a state
    for mask, value in states.items():
        count = mask.bit_count()
        if count > best_count or (count == best_count and value > best_value):
            best_count, best_value = count, value
    return best_count, best_value


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
    return efficiency_of(n_p, n_g, budget(n_g, beta))


def efficiency_of(n_p: int, n_g: int, b: int) -> float:
    """Formula 3 for a budget B already worked out."""
    if n_p <= b:
        return 1.0
    if n_g == 0:
        return 0.0
    left = 1.0 - (n_p - b) / n_g
    return left if left > 0.0 else 0.0  # max(0.0, left) without the call


# 4. Tool-name signal -----------------------------------------------------------------------


def name_signal(pred_names: Sequence[str], gt_names: Sequence[str]) -> float:
    """Multiset overlap of names normalised by max(n_p, n_g) (formula 4); 1 when both empty."""
    n_p, n_g = len(pred_names), len(gt_names)
    denominator = n_p if n_p > n_g else n_g  # max(n_p, n_g) without the call
    if denominator == 0:
        return 1.0
    distinct = set(gt_names)
    if len(distinct) == n_g:  # each name once in G (the usual turn): a set overlap
        return len(distinct.intersection(pred_names)) / denominator
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
    if not n_g:
        return 1.0
    share = value_sum / n_g
    return share if share < 1.0 else 1.0  # min(1.0, share) without the call


# Total -------------------------------------------------------------------------------------


def total(parts: Sequence[float], weights: Sequence[float]) -> float:
    """Σ w_c · c / Σ w_c, clipped to [0, 1]. Numerator and denominator add the same weights in
    the same order, so six perfect components give exactly 1.0, and a zero outcome weight adds
    exactly 0.0 to both (the five-component score, bit for bit)."""
    w0, w1, w2, w3, w4, w5 = weights
    c0, c1, c2, c3, c4, c5 = parts
    mean = ((w0 * c0 + w1 * c1 + w2 * c2 + w3 * c3 + w4 * c4 + w5 * c5)
            / (w0 + w1 + w2 + w3 + w4 + w5))
    if mean > 0.0:  # min(1.0, max(0.0, mean)) without the calls
        return mean if mean < 1.0 else 1.0
    return 0.0
