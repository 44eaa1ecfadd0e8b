"""The server contract (prove.env.contract) holds for every selected server, and each rule bites.

    PROVE_SERVERS=banking,<name> .venv/bin/python -m pytest tests/env/test_server_contract.py -q
"""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from prove.env import FAMILIES, ServerSpec, load_registry, tool
from prove.env.contract import (
    CONTRACT_SEEDS,
    MAX_SERVER_NAME_CHARS,
    MAX_TOOL_NAME_CHARS,
    MAX_TOOLS,
    MIN_DESCRIPTION_CHARS,
    check_server,
    check_tool,
)
from prove.env.tool import ToolSpec
from prove.env.types import text

REG = load_registry()
README = Path(__file__).resolve().parents[2] / "servers" / "README.md"


@pytest.mark.parametrize("server", sorted(REG.servers))
def test_server_keeps_the_contract(server: str) -> None:
    problems = check_server(REG.server(server))
    assert not problems, "\n".join(problems)


def _banking(**changes: object) -> ServerSpec:
    return dataclasses.replace(REG.server("banking"), **changes)


def test_a_wrong_family_name_and_description_are_named() -> None:
    problems = check_server(_banking(name="Bank-2", family="gaming", description="bank"))
    text = "\n".join(problems)
    assert "server name 'Bank-2' is not a valid name: use lower_snake" in text
    assert "must live in the package prove_servers.Bank-2" in text
    assert "family 'gaming' is not one of finance, productivity" in text
    assert "description must say what the app holds" in text


def test_a_nondeterministic_initial_state_is_caught() -> None:
    banking = REG.server("banking")
    draws = random.Random(0)

    def noisy(seed: int):
        state = banking.initial_state(seed)
        state.now = f"2026-03-{draws.randrange(10, 28)}T09:00"  # a draw that ignores the seed
        return state

    problems = check_server(_banking(initial_state=noisy))
    assert any(f"initial_state({CONTRACT_SEEDS[0]}) is not deterministic" in p for p in problems), problems


def test_a_hand_kept_id_counter_is_refused() -> None:
    banking = REG.server("banking")

    def counted(seed: int):
        state = banking.initial_state(seed)
        state.counters = {"TXN": 99}
        return state

    problems = check_server(_banking(initial_state=counted))
    assert any("sets counters ['TXN']; leave them empty" in p for p in problems), problems


def test_a_state_of_the_wrong_model_or_without_entities_is_caught() -> None:
    banking = REG.server("banking")
    other = _banking(initial_state=lambda seed: banking.state_model(now="2026-03-16T09:00"))
    assert any("seeds no entity table" in p for p in check_server(other))
    calendar_like = type("Other", (banking.state_model,), {})
    wrong = _banking(state_model=calendar_like)
    assert any("must return a Other, got BankState" in p for p in check_server(wrong))
    raising = _banking(initial_state=lambda seed: 1 / 0)
    assert any("initial_state(0) raised ZeroDivisionError" in p for p in check_server(raising))


def test_reads_and_writes_are_both_required_and_the_count_is_bounded() -> None:
    banking = REG.server("banking")
    reads = tuple(t for t in banking.tools if not t.write)
    problems = check_server(_banking(tools=reads))
    assert any(f"has {len(reads)} read, 0 write" in p for p in problems), problems
    many = banking.tools * (MAX_TOOLS // len(banking.tools) + 1)
    assert any(f"at most {MAX_TOOLS}, split the server" in p for p in check_server(_banking(tools=many)))


class _Out(BaseModel):
    ok: bool


@tool()
def Bad_Tool(state: object, mode: Literal["a", "b"], note: str = "") -> _Out:
    """Short."""
    return _Out(ok=True)


@tool()
def returns_a_number(state: object, note: text("body", "A note.") = "") -> int:
    """Returns a plain number instead of a model."""
    return 1


def test_tool_rules_name_the_tool_and_the_rule() -> None:
    problems = check_tool(ToolSpec.from_function(Bad_Tool, "banking"))
    text = "\n".join(problems)
    assert "tool name 'Bad_Tool' is not a valid name" in text
    assert "must say what it does in at least 15 characters; got 'Short.'" in text
    assert "parameter 'note' has no description" in text
    assert "parameter 'mode' has no description" in text
    assert "parameter 'note' takes a string that is no id, enum or date; declare what it takes " \
        "with prove.env.types.text(kind" in text
    plain = check_tool(ToolSpec.from_function(returns_a_number, "banking"))
    assert len(plain) == 1 and "must return a pydantic model" in plain[0], plain
    assert check_tool(REG.tool("transfer_funds")) == []


def test_the_readme_states_the_contracts_families_and_limits() -> None:
    text = README.read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("**Families**"))
    assert re.findall(r"`([a-z]+)`", line) == list(FAMILIES)
    contract = " ".join(text.split("## The contract")[1].split("\n## ")[0].split())
    for limit in (f"at most {MAX_SERVER_NAME_CHARS} characters", f"at most {MAX_TOOLS} tools",
                  f"at most {MAX_TOOL_NAME_CHARS} characters", f"at least {MIN_DESCRIPTION_CHARS} characters",
                  f"seeds {CONTRACT_SEEDS[0]} and {CONTRACT_SEEDS[1]}"):
        assert limit in contract, limit
