"""Structured tool errors: what a refused call got wrong as data (parameters, reason, rejected values,
valid choices, wanted states) beside the model-facing message, which is free to change.

    raise ToolError(f"account '{account_id}' is frozen", reason="state", rejected=(account_id,),
                    wanted=("active",))
    require(amount > 0, f"amount must be positive, got {amount}", params=("amount",))
    hub.call(...)["detail"]   # {"reason": "state", "params": ["account_id"], "rejected": [...], ...}

The message is what a model reads; `detail` is what programs read (synthesis's planner and its
repairs), so rewording a message never changes what they do (tests/synth/test_error_wording.py).
`params` are the parameters the error names, `rejected` the values it refuses (the call's
parameters holding them are found by value: `detail_for`), `choices` values it offers instead (for
the named parameters, else for the rejected ones), `wanted` the states an entity must be in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError as _McpToolError

__all__ = ["REASONS", "ToolError", "detail_of"]

REASONS: dict[str, str] = {
    "invalid": "a value is not acceptable (the default)",
    "not_found": "an id or name does not exist",
    "missing": "a parameter the call needs was not given",
    "state": "an entity is not in a state that allows this (see `wanted`)",
    "conflict": "the change clashes with existing data (a duplicate, an overlap, already done)",
    "limit": "a quantity, size or balance is past a limit",
    "future": "a date or time is later than allowed (it must not be in the future)",
    "past": "a date or time is earlier than allowed (it must be in the future)",
    "unknown_tool": "no tool has this name (`choices`: the closest names)",
    "unknown_argument": "the tool takes no parameter of this name (`choices`: its parameters)",
    "type": "a value has the wrong JSON type or shape",
}
"""The reasons a tool may give, each with what it means."""

_SCALARS = (str, int, float, bool)


def _scalars(values: Iterable[Any], what: str) -> tuple[Any, ...]:
    """`values` as JSON scalars: lists, tuples and sets inside are spread, dates and times become
    ISO strings, other objects their str (a fact must never stop the error it explains)."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"ToolError {what} must be a sequence of values, not one string: "
                        f"write ({values!r},)")
    out: list[Any] = []
    for v in values:
        if v is None or isinstance(v, _SCALARS):
            out.append(v)
        elif isinstance(v, (list, tuple, set, frozenset)):
            out += [x if x is None or isinstance(x, _SCALARS) else str(x) for x in v]
        elif isinstance(v, (date, datetime)):
            out.append(v.isoformat())
        else:
            out.append(str(v))
    return tuple(out)


class ToolError(_McpToolError):
    """A model-facing tool error with its facts as data (see the module docstring)."""

    def __init__(self, message: str, *, reason: str = "invalid", params: Iterable[str] = (),
                 rejected: Iterable[Any] = (), choices: Iterable[Any] = (),
                 wanted: Iterable[str] = ()) -> None:
        if reason not in REASONS:
            raise ValueError(f"unknown ToolError reason {reason!r}; valid: {', '.join(REASONS)}")
        super().__init__(message)
        self.reason = reason
        self.params = _scalars(params, "params")
        self.rejected = _scalars(rejected, "rejected values")
        self.choices = _scalars(choices, "choices")
        self.wanted = _scalars(wanted, "wanted states")

    def detail_for(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The error's facts for a call with `arguments`. `params` are the parameters named at the
        raise site; `rejected_params` the call's arguments whose value the error rejects (matched
        by value, so a helper need not know which parameter it was given). `choices` replace the
        named parameters, or the rejected ones when none is named."""
        params = list(dict.fromkeys(self.params))
        matched = [name for name, value in (arguments or {}).items()
                   if isinstance(value, _SCALARS) and not isinstance(value, bool)
                   and any(type(r) is type(value) and r == value for r in self.rejected)]
        return {"reason": self.reason, "params": params, "rejected_params": matched,
                "rejected": list(self.rejected), "choices": list(self.choices),
                "wanted": list(self.wanted)}


def detail_of(exc: BaseException, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """`exc`'s facts; an unstructured error (MCP's own ToolError) says only that it is invalid."""
    if isinstance(exc, ToolError):
        return exc.detail_for(arguments)
    return {"reason": "invalid", "params": [], "rejected_params": [], "rejected": [], "choices": [],
            "wanted": []}
