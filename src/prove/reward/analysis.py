"""Tables that show the reward's behaviour (used by notebooks/04_reward.ipynb).

Use: ``hand_built_cases()``, ``verbosity_curve()``, ``coverage_grid()``, ``budget_table()``,
``efficiency_curves()`` — each returns a pandas DataFrame built only from ``score_turn`` on a
small banking turn, so every number can be checked by hand against ``prove.reward.components``.
The cases have no live episode, so they are scored under the call-based configs
(``CALL_ABLATIONS``); the state-verified ``outcome`` is measured on live behaviours
(``prove.reward.behaviours``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pandas as pd

from prove.reward import components as C
from prove.reward.compose import COMPONENT_KEYS, score_turn
from prove.reward.config import CALL_ABLATIONS, get_config


def _call_configs(configs: Iterable[str]) -> list[str]:
    names = list(configs)
    stateful = [c for c in names if get_config(c).needs_state]
    if stateful:
        raise ValueError(f"{stateful} weigh the state-verified outcome, which hand-built cases (no "
                         "live episode) cannot have; score them with prove.reward.behaviours, and "
                         f"these tables with the call-based configs: {', '.join(CALL_ABLATIONS)}")
    return names


def _fn(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required,
                  "additionalProperties": False}
    return {"type": "function", "function": {"name": name, "description": name,
                                             "parameters": parameters}}


_ID = {"type": "string"}
DEMO_TOOLS: list[dict[str, Any]] = [
    _fn("get_balance", {"account_id": _ID}, ["account_id"]),
    _fn("transfer_funds", {"from_account_id": _ID, "to_account_id": _ID,
                           "amount": {"type": "number", "exclusiveMinimum": 0}, "memo": _ID},
        ["from_account_id", "to_account_id", "amount"]),
    _fn("list_bank_transactions", {"account_id": _ID, "limit": {"type": "integer", "minimum": 1}},
        ["account_id"]),
    _fn("list_bank_cards", {"account_id": _ID}, ["account_id"]),
    _fn("search_bank_customers", {"query": _ID}, []),
]


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


BALANCE = _call("get_balance", account_id="ACC-1")
TRANSFER = _call("transfer_funds", from_account_id="ACC-1", to_account_id="ACC-2", amount=50)
HISTORY = _call("list_bank_transactions", account_id="ACC-1")
# "Check my balance, move 50 to ACC-2, then show me the statement": 0 -> 1 -> 2
DEMO_TURN: dict[str, Any] = {"calls": [BALANCE, TRANSFER, HISTORY], "depends_on": [[0, 1], [1, 2]]}
# Extra calls a verbose policy adds: valid, successful, plausible, not needed.
EXTRAS: list[dict[str, Any]] = [
    _call("get_balance", account_id="ACC-2"), _call("list_bank_cards", account_id="ACC-1"),
    _call("search_bank_customers", query="ACC-1"), BALANCE, _call("list_bank_transactions",
                                                              account_id="ACC-2"),
]


def ok(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    """Calls as the live log records successful executions."""
    return [dict(c, ok=True, result={}) for c in calls]


def failed(call: dict[str, Any]) -> dict[str, Any]:
    return dict(call, ok=False, error="ToolError")


def padding(k: int) -> list[dict[str, Any]]:
    """The first ``k`` extra calls (cycling through ``EXTRAS``), executed successfully."""
    return ok(*(EXTRAS[i % len(EXTRAS)] for i in range(k)))


def _hermes(*calls: dict[str, Any]) -> str:
    return "".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls)


def _spray() -> list[dict[str, Any]]:
    """Every offered tool with every argument key, once per ground-truth step."""
    one_round = [_call(t["function"]["name"], **dict.fromkeys(
        t["function"]["parameters"]["properties"], "ACC-1")) for t in DEMO_TOOLS]
    return ok(*(one_round * len(DEMO_TURN["calls"])))


def hand_built_cases() -> list[tuple[str, str, Any, Any]]:
    """(case, what the policy did, predicted calls or text, ground truth) on the demo turn and
    on an abstention turn."""
    retry = _call("transfer_funds", from_account_id="ACC-1", to_account_id="ACC-2", amount=-50)
    formatting = _call("transfer_funds", from_account_id=" acc-1", to_account_id="ACC-2 ",
                       amount="50.00")
    empty = {"calls": [], "depends_on": []}
    return [
        ("exact", "the three ground-truth calls in order", ok(BALANCE, TRANSFER, HISTORY),
         DEMO_TURN),
        ("no call", "answers without acting", [], DEMO_TURN),
        ("stops early", "balance and transfer, no statement", ok(BALANCE, TRANSFER), DEMO_TURN),
        ("wrong order", "transfers before checking the balance", ok(TRANSFER, BALANCE, HISTORY),
         DEMO_TURN),
        ("wrong amount", "transfers 500 instead of 50",
         ok(BALANCE, dict(TRANSFER, arguments=dict(TRANSFER["arguments"], amount=500)), HISTORY),
         DEMO_TURN),
        ("formatting", "same values, other spelling (' acc-1', '50.00')",
         ok(BALANCE, formatting, HISTORY), DEMO_TURN),
        ("transfer failed", "the transfer errors live and is not retried",
         ok(BALANCE) + [failed(TRANSFER)] + ok(HISTORY), DEMO_TURN),
        ("recovers", "a bad transfer errors, the retry succeeds",
         ok(BALANCE) + [failed(retry)] + ok(TRANSFER, HISTORY), DEMO_TURN),
        ("one extra call", "adds a lookup nobody asked for", ok(BALANCE, TRANSFER, HISTORY)
         + padding(1), DEMO_TURN),
        ("five extra calls", "pads well past the budget", ok(BALANCE, TRANSFER, HISTORY)
         + padding(5), DEMO_TURN),
        ("hallucinated tool", "adds a call to a tool that was not offered",
         ok(BALANCE, TRANSFER, HISTORY) + [failed(_call("move_money", amount=50))], DEMO_TURN),
        ("unparseable", "adds a call that is not valid JSON",
         _hermes(BALANCE, TRANSFER, HISTORY) + "<tool_call>{transfer_funds(50)}</tool_call>",
         DEMO_TURN),
        ("text only", "the exact calls, parsed from text (no live outcome)",
         _hermes(BALANCE, TRANSFER, HISTORY), DEMO_TURN),
        ("spray", "every tool with every key, once per step", _spray(), DEMO_TURN),
        ("abstains", "abstention turn: asks instead of calling", [], empty),
        ("acts anyway", "abstention turn: calls a tool", ok(BALANCE), empty),
    ]


def cases_table(configs: Iterable[str] = CALL_ABLATIONS) -> pd.DataFrame:
    """One row per hand-built case: PROVE's components and score, then each config's score."""
    configs = _call_configs(configs)
    rows = []
    for case, did, pred, gt in hand_built_cases():
        result = score_turn(pred, gt, DEMO_TOOLS)
        row = {"case": case, "policy": did, "n_pred": result["n_pred"],
               **{k: result[k] for k in COMPONENT_KEYS}}
        row.update({f"score[{c}]": score_turn(pred, gt, DEMO_TOOLS, c)["score"]
                    for c in configs})
        rows.append(row)
    return pd.DataFrame(rows)


def verbosity_curve(max_extra: int = 12, configs: Iterable[str] = CALL_ABLATIONS) -> pd.DataFrame:
    """Score of the exact ground truth plus k extra valid, successful calls, per config."""
    configs = _call_configs(configs)
    base = ok(BALANCE, TRANSFER, HISTORY)
    rows = [{"config": c, "extra_calls": k, "n_pred": len(base) + k,
             "score": score_turn(base + padding(k), DEMO_TURN, DEMO_TOOLS, c)["score"]}
            for c in configs for k in range(max_extra + 1)]
    return pd.DataFrame(rows)


def precise_partial_score(config: str = "prove") -> float:
    """Score of stopping after 2 of the 3 steps with no extra call (a reference line)."""
    return score_turn(ok(BALANCE, TRANSFER), DEMO_TURN, DEMO_TOOLS, config)["score"]


GRID_TURN: dict[str, Any] = {  # four steps, a chain; extras below never cover any of them
    "calls": [BALANCE, TRANSFER, _call("get_balance", account_id="ACC-2"),
              _call("list_bank_transactions", account_id="ACC-2")],
    "depends_on": [[0, 1], [1, 2], [2, 3]],
}


def coverage_grid(max_calls: int = 12, configs: Iterable[str] = ("prove", "recall_only")
                  ) -> pd.DataFrame:
    """Score over (coverage, n_p/n_g) on a 4-step turn: the first k steps done in order, the
    other n_p - k calls valid, successful and useless (cells with n_p < k do not exist)."""
    n_g = len(GRID_TURN["calls"])
    useless = [_call("list_bank_cards", account_id="ACC-1"), _call("search_bank_customers", query="x")]
    rows = []
    for config in configs:
        for k in range(n_g + 1):
            for n_p in range(k, max_calls + 1):
                pred = ok(*GRID_TURN["calls"][:k]) + ok(*(useless[i % 2] for i in range(n_p - k)))
                result = score_turn(pred, GRID_TURN, DEMO_TOOLS, config)
                rows.append({"config": config, "coverage": result["coverage"], "n_pred": n_p,
                             "calls_per_step": n_p / n_g, "score": result["score"]})
    return pd.DataFrame(rows)


def budget_table(betas: Iterable[float] = (0.0, 0.25, 0.5, 1.0),
                 n_gts: Iterable[int] = range(1, 9)) -> pd.DataFrame:
    """B = n_g + ceil(n_g · β) for each β (rows) and n_g (columns)."""
    n_gts = list(n_gts)
    return pd.DataFrame({f"n_g={n}": [C.budget(n, b) for b in betas] for n in n_gts},
                        index=pd.Index(list(betas), name="beta"))


def efficiency_curves(betas: Iterable[float] = (0.0, 0.25, 0.5, 1.0), n_g: int = 4,
                      max_calls: int = 16) -> pd.DataFrame:
    """The efficiency component against the number of calls, for each β."""
    return pd.DataFrame([{"beta": b, "n_pred": n, "efficiency": C.efficiency(n, n_g, b),
                          "budget": C.budget(n_g, b)}
                         for b in betas for n in range(max_calls + 1)])
