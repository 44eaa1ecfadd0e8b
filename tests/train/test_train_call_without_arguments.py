"""A ``<tool_call>`` block with a ``name`` and no ``arguments`` is one call, with ``{}``, for the
reward's text parse (``prove.calls.parse_tool_calls``, what ``prove.reward`` reads) and for both
engines' parsers (``ProveAgentLoop``'s hermes parser, ``hermes_blocks`` for TRL): a tool without
required parameters needs no arguments. VERL's own hermes parser drops such a block, so before
``ProveHermesToolParser`` the VERL loop ran nothing (and logged a malformed call) while the reward's
text parse credited a well-formed call.

    .venv/bin/python -m pytest tests/train/test_train_call_without_arguments.py -q
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from train_helpers import need_verl, run

BLOCKS = {"absent": '{{"name": "{name}"}}', "null": '{{"name": "{name}", "arguments": null}}'}


def _text(name: str, shape: str) -> str:
    return "Let me check.\n<tool_call>\n" + BLOCKS[shape].format(name=name) + "\n</tool_call>"


@pytest.mark.parametrize("shape", list(BLOCKS))
def test_the_reward_and_both_engines_read_one_call_with_empty_arguments(shape: str, tokenizer: Any) -> None:
    need_verl()
    from verl.experimental.agent_loop.tool_parser import HermesToolParser

    from prove.calls import parse_tool_calls
    from prove.train.agent_loop import ProveHermesToolParser, hermes_blocks

    text = _text("list_accounts", shape)
    ids = tokenizer.encode(text, add_special_tokens=False)
    reward = [(c.name, c.arguments, c.well_formed) for c in parse_tool_calls(text)]
    _, verl_calls = run(ProveHermesToolParser(tokenizer).extract_tool_calls(ids))
    loop = [(c.name, json.loads(c.arguments), True) for c in verl_calls]
    trl = [(b.call.name, json.loads(b.call.arguments), True) for b in hermes_blocks(text) if b.call is not None]
    assert reward == loop == trl == [("list_accounts", {}, True)]
    # Why the loop has its own parser: VERL 0.9.1's drops the block without arguments (only logs a
    # line) and passes null on as the text "null", which the loop refuses as not a JSON object.
    stock = [(c.name, c.arguments) for c in run(HermesToolParser(tokenizer).extract_tool_calls(ids))[1]]
    assert stock == {"absent": [], "null": [("list_accounts", "null")]}[shape]


def _no_argument_lookup(rows: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """A row and a read it offers that has no required parameter (on one of the row's servers)."""
    from prove.env.registry import load_registry

    tools = load_registry().tools
    for row in rows:
        servers = set(row["extra_info"]["servers"])
        for name in row["extra_info"]["tool_selection"]:
            spec = tools.get(name)
            if spec is not None and not spec.write and not spec.required and spec.server in servers:
                return row, name
    raise AssertionError("the synthesis fixture offers no read without required parameters")


def test_the_verl_loop_runs_a_call_without_arguments_as_the_reward_counts_it(
        verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict]) -> None:
    """Live, through ``ProveAgentLoop``: the block runs (``ok``), logged with ``{}``, the call the
    reward's text parse reads from the same response."""
    from prove.calls import parse_tool_calls
    from prove.train.agent_loop import ProveHermesToolParser
    from prove.train.rollout import make_agent_loop, run_rollouts

    row, name = _no_argument_lookup(synth_rows)
    assert isinstance(make_agent_loop(verl_cfg, tokenizer, verl_tools, None).tool_parser, ProveHermesToolParser)
    turn = _text(name, "absent")
    [out] = run(run_rollouts(verl_cfg, tokenizer, verl_tools, [row], [[turn, "Done."]]))
    assert not isinstance(out, BaseException), out
    log = out.extra_fields["tool_calls"]
    assert [(e["name"], e["arguments"], e["ok"]) for e in log] == [(name, {}, True)], log
    assert [(c.name, c.arguments) for c in parse_tool_calls(turn)] == [(e["name"], e["arguments"]) for e in log]
