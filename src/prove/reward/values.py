"""Argument-value normalisation and comparison for the argument-value match component.

Use: ``values_match(gt_value, pred_value, param_schema, config)`` → bool. The rules (documented
with the formulas in ``prove.reward.components``): strings compare after collapsing whitespace
and case-folding; numbers (bool is not a number) with ``math.isclose(rel_tol, abs_tol)``, and a
numeric string as its number when ``config.numeric_strings``; lists element-wise in order, or as
multisets when the parameter schema says ``uniqueItems: true``; objects need the same keys and
matching values; ``null`` matches only ``null``. Values nested deeper than ``MAX_VALUE_DEPTH``
do not match (bounded work on adversarial input).
"""

from __future__ import annotations

import math
from typing import Any

from prove.reward.config import RewardConfig

MAX_VALUE_DEPTH = 32
_MAX_FLOAT_BITS = 1000  # ints wider than this overflow float(); compared exactly instead


def normalise_text(text: str) -> str:
    """Whitespace collapsed, case folded: ``"  New  York "`` → ``"new york"``."""
    return " ".join(text.split()).casefold()


def _as_number(value: Any, numeric_strings: bool) -> float | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if numeric_strings and isinstance(value, str) and 0 < len(value) <= 64:
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _numbers_close(a: float | int, b: float | int, config: RewardConfig) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    for x in (a, b):
        if isinstance(x, int) and x.bit_length() > _MAX_FLOAT_BITS:
            return False
    return math.isclose(a, b, rel_tol=config.rel_tol, abs_tol=config.abs_tol)


def _sub(schema: Any, key: str) -> Any:
    return schema.get(key) if isinstance(schema, dict) else None


def values_match(gt: Any, pred: Any, schema: Any, config: RewardConfig, depth: int = 0) -> bool:
    """Does ``pred`` reproduce the ground-truth value ``gt`` under the normalisation rules?"""
    if depth > MAX_VALUE_DEPTH:
        return False
    if isinstance(gt, str):
        if isinstance(pred, str):
            if gt == pred:
                return True
            return config.normalise_strings and normalise_text(gt) == normalise_text(pred)
        if config.numeric_strings:
            a, b = _as_number(gt, True), _as_number(pred, False)
            return a is not None and b is not None and _numbers_close(a, b, config)
        return False
    if isinstance(gt, bool) or gt is None:
        return pred is gt
    if isinstance(gt, (int, float)):
        b = _as_number(pred, config.numeric_strings)
        return b is not None and _numbers_close(gt, b, config)
    if isinstance(gt, (list, tuple)):
        if not isinstance(pred, (list, tuple)) or len(pred) != len(gt):
            return False
        items = _sub(schema, "items")
        if _sub(schema, "uniqueItems") is True:
            return _multiset_match(gt, pred, items, config, depth + 1)
        pairs = zip(gt, pred, strict=True)
        return all(values_match(g, p, items, config, depth + 1) for g, p in pairs)
    if isinstance(gt, dict):
        if not isinstance(pred, dict) or gt.keys() != pred.keys():
            return False
        props = _sub(schema, "properties")
        return all(
            values_match(v, pred[k], _sub(props, k), config, depth + 1) for k, v in gt.items()
        )
    return False  # not a JSON value


def _multiset_match(gt: Any, pred: Any, items: Any, config: RewardConfig, depth: int) -> bool:
    """Order-insensitive: each ground-truth element claims a distinct matching predicted one."""
    unused = list(pred)
    for g in gt:
        for i, p in enumerate(unused):
            if values_match(g, p, items, config, depth):
                del unused[i]
                break
        else:
            return False
    return True
