"""Ground truth for the reward, normalised: ``normalise_ground_truth(gt)`` → ``GroundTruth``.

Predicted calls are parsed by ``prove.calls`` (shared with synthesis). Nothing here raises on
JSON-like input: every shape is mapped explicitly to a sensible value, as documented below.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple

from prove.calls import as_list, loads

_new = tuple.__new__  # builds a GroundTruth without NamedTuple's slower keyword-handling __new__


class GroundTruth(NamedTuple):
    """One turn's ground truth, normalised: ``need[j]`` is the bitmask of j's predecessors."""

    names: tuple[str, ...]
    arguments: tuple[dict, ...]
    keys: tuple[frozenset, ...]
    need: tuple[int, ...]
    by_name: dict[str, tuple[int, ...]]  # name → the steps with that name, in order


EMPTY_GROUND_TRUTH = GroundTruth((), (), (), (), {})


def _edge(raw: Any) -> tuple[Any, Any]:
    pair = raw if type(raw) is list else as_list(raw)
    if pair is None or len(pair) != 2:
        return None, None
    return pair[0], pair[1]


_gt_cache: OrderedDict[Any, tuple[Any, GroundTruth]] = OrderedDict()
_GT_CACHE_SIZE = 1024


def normalise_ground_truth(gt: Any) -> GroundTruth:
    """``{"calls": [...], "depends_on": [[i, j], ...]}`` (or its JSON string, or a bare list of
    calls). Calls without a non-empty string name or with non-object arguments are dropped and
    edges renumbered; edges naming dropped or out-of-range calls are dropped, and so are edges
    with i >= j: the ground-truth sequence was executed in order, so every real edge points
    forward (this also makes the dependency graph acyclic). A ``GroundTruth`` is returned as it
    is. Cached like ``schema.tool_table``: JSON strings by value, anything else by identity with
    a strong reference held (so an id cannot be reused; the rollouts of one prompt share one
    object). A ground truth is treated as immutable: edit one in place after scoring and the
    cache is stale."""
    if type(gt) is GroundTruth:
        return gt
    key = gt if isinstance(gt, str) else id(gt)
    hit = _gt_cache.get(key)
    if hit is not None and (hit[0] is gt or isinstance(gt, str)):
        return hit[1]
    normalised = _normalise_ground_truth(loads(gt) if isinstance(gt, str) else gt)
    _gt_cache[key] = (gt, normalised)
    if len(_gt_cache) > _GT_CACHE_SIZE:
        _gt_cache.popitem(last=False)
    return normalised


def _normalise_ground_truth(gt: Any) -> GroundTruth:
    if isinstance(gt, dict):
        raw_calls = gt.get("calls")
        if type(raw_calls) is not list:
            raw_calls = as_list(raw_calls) or []
        raw_edges = gt.get("depends_on")
        if type(raw_edges) is not list:
            raw_edges = as_list(raw_edges) or []
    else:
        raw_calls = as_list(gt) or []
        raw_edges = []
    names: list[str] = []
    arguments: list[dict] = []
    keys: list[frozenset] = []
    by_name: dict[str, tuple[int, ...]] = {}
    index: list[int] = []  # old position → new position, -1 when dropped
    for call in raw_calls:
        if isinstance(call, dict):
            name = call.get("name")
            args = call.get("arguments")
            if args is None:
                args = {}
            if type(name) is str and name and isinstance(args, dict):
                g = len(names)
                index.append(g)
                names.append(name)
                arguments.append(args)
                keys.append(frozenset(args))
                by_name[name] = by_name[name] + (g,) if name in by_name else (g,)
                continue
        index.append(-1)
    if not names:
        return EMPTY_GROUND_TRUTH
    need = [0] * len(names)
    n_raw = len(raw_calls)
    for raw in raw_edges:
        i, j = raw if type(raw) is list and len(raw) == 2 else _edge(raw)
        if type(i) is not int or type(j) is not int or not 0 <= i < j < n_raw:
            continue
        a, b = index[i], index[j]
        if a >= 0 and b >= 0:
            need[b] |= 1 << a
    return _new(GroundTruth, (tuple(names), tuple(arguments), tuple(keys), tuple(need), by_name))
