"""The hand-written intents (data/intents/<server>.yaml) keep their rules, and the rules bite.

    .venv/bin/python -m pytest tests/synth/test_intents.py -q
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prove.env import load_registry
from prove.synth.intents import INTENTS_DIR, check_intents, copied_run, load_intents

REG = load_registry()
WRITTEN = sorted(p.stem for p in INTENTS_DIR.glob("*.yaml") if p.stem in REG.servers)


@pytest.mark.parametrize("server", WRITTEN)
def test_intents_keep_the_rules(server: str) -> None:
    problems = check_intents(REG.server(server), load_intents(server))
    assert not problems, "\n".join(problems[:40])


def test_copied_description_wording_is_found() -> None:
    desc = "Move money between two accounts of the bank in the same currency; both balances change."
    assert copied_run("please move money between two accounts of mine", desc) == "move money between two accounts"
    assert copied_run("send {amount} from {from_account_id} to my savings", desc) is None


def test_a_file_that_breaks_the_rules_is_explained(tmp_path: Path) -> None:
    (tmp_path / "banking.yaml").write_text(
        "tools:\n"
        "  transfer_funds:\n"
        "    ask: ['move money between two accounts of the bank {amount}', 'send {amount} {nope}']\n"
        "    clarify: {amount: ['How much?']}\n"
        "off_tool: ['Can you raise my credit limit?']\n")
    problems = check_intents(REG.server("banking"), load_intents("banking", str(tmp_path)))
    text = "\n".join(problems)
    assert "needs at least 4 different requests" in text
    assert "'{nope}' is not a parameter" in text
    assert "required '{from_account_id}' missing" in text
    assert "copies 'move money between two accounts'" in text
    assert "no clarify questions for required 'to_account_id'" in text
    assert "no intents for tool get_bank_account" in text
    assert "off_tool needs at least 8" in text


def test_unknown_keys_are_refused_with_the_valid_ones(tmp_path: Path) -> None:
    (tmp_path / "banking.yaml").write_text("tool: {}\noff_tool: []\n")
    with pytest.raises(ValueError, match=r"unknown top-level keys \['tool'\]; valid: motives, off_tool, tools"):
        load_intents("banking", str(tmp_path))
