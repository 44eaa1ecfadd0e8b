"""Ground truth for the reward, normalised: ``normalise_ground_truth(gt)`` → ``GroundTruth``.

Predicted calls are parsed by ``prove.calls`` (shared with synthesis). Nothing here raises on
JSON-like input: every shape is mapped explicitly to a sensible value, as documented below.
"""

from __future__ import annotations

import marshal
from collections import OrderedDict
from typing import Any, NamedTuple

from prove.calls import as_list, loads
from prove.reward.values import MAX_VALUE_DEPTH

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


_gt_cache: OrderedDict[str | bytes, GroundTruth] = OrderedDict()  # value → normalised
_GT_CACHE_SIZE = 1024
_SCALARS = frozenset((str, int, float, bool, type(None)))
_COPY_DEPTH = 2 * MAX_VALUE_DEPTH


def _json_copy(value: Any, depth: int = 0) -> Any:
    """A copy of a JSON-like value sharing no dict or list with it, down to ``_COPY_DEPTH``
    (far below Python's recursion limit, and deeper than value matching looks)."""
    if type(value) in _SCALARS or depth >= _COPY_DEPTH:
        return value
    if isinstance(value, dict):
        return {k: _json_copy(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_copy(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return tuple(_json_copy(v, depth + 1) for v in value)
    return value


def _owned(args: dict) -> dict:
    """A copy of one call's arguments sharing no dict or list with them (scalars, the usual
    values, are taken as they are)."""
    copied = dict(args)
    for key, value in copied.items():
        if type(value) not in _SCALARS:
            copied[key] = _json_copy(value, 1)
    return copied


def normalise_ground_truth(gt: Any) -> GroundTruth:
    """``{"calls": [...], "depends_on": [[i, j], ...]}`` (or its JSON string, or a bare list of
    calls). Calls without a non-empty string name or with non-object arguments are dropped and
    edges renumbered; edges naming dropped or out-of-range calls are dropped, and so are edges
    with i >= j: the ground-truth sequence was executed in order, so every real edge points
    forward (this also makes the dependency graph acyclic). A ``GroundTruth`` is returned as it
    is.

    The result is a snapshot that owns its argument values: editing ``gt`` afterwards changes
    neither it nor the next call's result. Cached by value, never by identity: JSON text by the
    string, plain dicts and lists by their ``marshal`` bytes (which exist only for built-in
    values and decode to an equal value of the same types), so the rollouts of a row, and every
    copy of it, share one ``GroundTruth`` and an edited row is a new key. Anything else (numpy
    values, dict subclasses) is normalised anew; ``prove.reward.prepare_turn`` normalises a row
    once for all its rollouts."""
    if type(gt) is GroundTruth:
        return gt
    if isinstance(gt, str):
        key: str | bytes = gt
    else:
        try:
            key = marshal.dumps(gt, 2)  # version 2: no back-references to objects
        except (ValueError, RecursionError):
            return _normalise_ground_truth(gt, owned=False)
    hit = _gt_cache.get(key)
    if hit is None:
        raw = loads(gt, None) if isinstance(gt, str) else marshal.loads(key)  # a private copy
        hit = _gt_cache[key] = _normalise_ground_truth(raw, owned=True)
        if len(_gt_cache) > _GT_CACHE_SIZE:
            _gt_cache.popitem(last=False)
    return hit


def _normalise_ground_truth(gt: Any, owned: bool) -> GroundTruth:
    """``owned``: the arguments are this function's alone (decoded), so they are not copied."""
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
                if not owned:
                    args = _owned(args)
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
