"""Structured tool errors (prove.env.errors): the facts of a refused call reach the hub's result as
data, from the servers' lookups and preconditions, the argument validation and the hub itself, and a
server that raises MCP's unstructured ToolError breaks the contract.

    .venv/bin/python -m pytest tests/env/test_tool_errors.py -q
"""

from __future__ import annotations

import dataclasses
import sys
import types
from datetime import date

import pytest
from mcp.server.mcpserver.exceptions import ToolError as McpToolError

from prove.env import load_registry
from prove.env.contract import check_server
from prove.env.errors import REASONS, ToolError, detail_of
from prove.env.helpers import lookup, require, shown
from prove.env.hub import Hub

REG = load_registry()


@pytest.fixture(scope="module")
def hub() -> Hub:
    h = Hub(REG)
    h.open("ep", seed=0)
    return h


def test_a_reason_outside_the_list_is_refused_and_facts_become_json_scalars() -> None:
    with pytest.raises(ValueError, match="unknown ToolError reason 'nope'; valid: invalid"):
        ToolError("x", reason="nope")
    with pytest.raises(TypeError, match=r"not one string: write \('ACC-1',\)"):
        ToolError("x", rejected="ACC-1")
    err = ToolError("x", rejected=(date(2026, 3, 1), ["a", "b"], 3, None), choices=[{"k": 1}])
    assert err.rejected == ("2026-03-01", "a", "b", 3, None) and err.choices == ("{'k': 1}",)
    assert set(REASONS) >= {"invalid", "not_found", "missing", "state", "future", "unknown_tool"}


def test_rejected_values_find_their_parameters_by_value_and_type() -> None:
    err = ToolError("no", params=("limit",), rejected=("ACC-0001", 5), choices=("ACC-0002",))
    detail = err.detail_for({"account_id": "ACC-0001", "n": "5", "flag": True, "k": 5})
    assert detail["params"] == ["limit"]
    assert detail["rejected_params"] == ["account_id", "k"]  # "5" is not 5, True is not a value
    assert detail["choices"] == ["ACC-0002"] and detail["reason"] == "invalid"
    assert detail_of(McpToolError("plain"), {"a": 1})["params"] == []  # unstructured: no facts


def test_lookup_and_require_carry_their_facts() -> None:
    with pytest.raises(ToolError) as info:
        lookup({f"ACC-{i:04d}": i for i in range(12)}, "ACC-0099", "account_id", "account")
    assert info.value.reason == "not_found" and info.value.params == ("account_id",)
    assert info.value.rejected == ("ACC-0099",) and len(info.value.choices) == 8
    with pytest.raises(ToolError) as info:
        lookup({"CPN-1": 1}, "CPN-2", "code", "coupon", hint="ask the customer for the code")
    assert info.value.choices == ()  # a hint instead of ids: none leak as data either
    with pytest.raises(ToolError) as info:
        require(False, "only open orders", reason="state", rejected=("ORD-1",), wanted=("open",))
    assert info.value.wanted == ("open",) and str(info.value) == "only open orders"
    require(True, "never raised", reason="state")
    assert shown(["a", "b", "c"], 2) == ("a", "b")


def test_a_missing_id_reaches_the_hub_with_its_parameter_and_choices(hub: Hub) -> None:
    out = hub.call("get_balance", {"account_id": "ACC-9999"}, episode_id="ep")
    assert not out["ok"]
    detail = out["detail"]
    assert detail["reason"] == "not_found" and "account_id" in detail["params"]
    assert detail["rejected_params"] == ["account_id"]
    known = set(hub.store.read_state(hub.store.get("ep"), "banking").accounts)
    assert detail["choices"] and set(detail["choices"]) <= known


def test_validation_errors_say_which_parameter_and_offer_an_enums_values(hub: Hub) -> None:
    spec = REG.tool("list_bank_transactions")
    out = hub.call(spec.name, {}, episode_id="ep")
    assert out["detail"]["reason"] == "missing" and out["detail"]["params"] == list(spec.required)
    args = {p: "ACC-0001" for p in spec.required} | {"category": "nonsense"}  # Optional[Literal]
    detail = hub.call(spec.name, args, episode_id="ep")["detail"]
    assert detail["reason"] == "invalid" and detail["params"] == ["category"]
    assert detail["choices"] == spec.input_schema["properties"]["category"]["anyOf"][0]["enum"]
    detail = hub.call(spec.name, {"acount": 1}, episode_id="ep")["detail"]
    assert detail["reason"] == "unknown_argument" and detail["params"] == ["acount"]
    assert detail["choices"] == list(spec.params)


def test_an_unknown_tool_offers_the_closest_names(hub: Hub) -> None:
    out = hub.call("get_balanse", {}, episode_id="ep")
    assert out["detail"]["reason"] == "unknown_tool" and "get_balance" in out["detail"]["choices"]


def test_every_servers_failures_carry_a_reason_from_the_list(hub: Hub) -> None:
    """One refused call per tool (empty arguments, then the first required id made unknown): each
    failure has a detail whose reason is a listed one and whose facts are lists."""
    seen = set()
    for spec in REG.tools.values():
        for args in ({}, {p: "ZZZ-9999" for p in spec.required}):
            out = hub.call(spec.name, args, episode_id="ep")
            if out["ok"]:
                continue
            detail = out["detail"]
            assert detail["reason"] in REASONS, (spec.name, detail)
            assert all(isinstance(detail[k], list) for k in
                       ("params", "rejected_params", "rejected", "choices", "wanted"))
            seen.add(detail["reason"])
    assert {"missing", "not_found"} <= seen


def test_a_server_module_raising_mcps_tool_error_breaks_the_contract() -> None:
    spec = REG.server("banking")
    assert check_server(spec) == []
    rogue = types.ModuleType("prove_servers.banking.rogue")
    rogue.ToolError = McpToolError  # type: ignore[attr-defined]
    sys.modules[rogue.__name__] = rogue
    try:
        problems = check_server(dataclasses.replace(spec))
    finally:
        del sys.modules[rogue.__name__]
    assert any("prove_servers.banking.rogue imports MCP's ToolError" in p for p in problems)
