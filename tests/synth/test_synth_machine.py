"""The state machine: explicit, logged transitions; recovery with the error message, a bounded
number of retries, a switch to an alternative tool, and rejection (never a crash) on bad turns."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from prove.env.hub import Hub
from prove.env.registry import load_registry
from prove.graph.chains import Chain, ToolGraph
from prove.synth.machine import (
    TRANSITIONS,
    Action,
    Conversation,
    Outcome,
    Script,
    State,
    SynthEnv,
    TurnSpec,
    run_conversation,
)
from prove.synth.perturb import offered_tools
from prove.synth.sampling import LiveSampler


@pytest.fixture(scope="module")
def env() -> SynthEnv:
    registry = load_registry().subset(["banking"])
    hub = Hub(registry)
    return SynthEnv(hub, ToolGraph.build(registry), LiveSampler(hub), max_retries=2)


def _script(env: SynthEnv, tools: tuple[str, ...], turns: list[TurnSpec]) -> Script:
    servers = ("banking",) * len(tools)
    chain = Chain(tools, servers, env.graph.chain_edges(tools, servers))
    offered = offered_tools(["banking"], env.registry, [], random.Random(0))
    return Script("test-000000", "multi_turn", 0, 1, chain, turns, [], offered)


class Scripted:
    """Returns the given actions in order; `alt` answers an alternative request."""

    name = "scripted"

    def __init__(self, actions: list[Any], alt: Action | None = None) -> None:
        self.actions, self.alt, self.offered = list(actions), alt, None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    async def prepare(self, convo: Conversation) -> None:
        return None

    async def user_message(self, convo: Conversation, k: int) -> str:
        return "Show me the balance of account ACC-0001, please."

    async def assistant(self, convo: Conversation, k: int) -> Action:
        return self.actions.pop(0) if self.actions else Action(text="Done.")

    async def alternative(self, convo: Conversation, k: int, failed: dict[str, Any],
                          options: list[str]) -> Action | None:
        self.offered = options
        return self.alt


def _run(env: SynthEnv, teacher: Any, tools: tuple[str, ...] = ("list_accounts", "get_balance"),
         turns: list[TurnSpec] | None = None) -> Outcome:
    script = _script(env, tools, turns or [TurnSpec("act", tuple(range(len(tools))))])
    return asyncio.run(run_conversation(script, teacher, env))


def _legal(transitions: list[list[Any]]) -> None:
    state = State.SAMPLE
    for row in transitions:
        assert State(row[0]) == state, row
        assert State(row[1]) in TRANSITIONS[state], row
        state = State(row[1])
    assert state in (State.FINISH, State.ABORT)


def call(name: str, **arguments: Any) -> Action:
    return Action(calls=[{"name": name, "arguments": arguments}])


def test_recovery_from_an_error_is_logged_and_kept(env: SynthEnv) -> None:
    out = _run(env, Scripted([call("get_balance", account_id="ACC-9999"),
                              call("get_balance", account_id="ACC-0001"), Action(text="Done.")]),
               ("get_balance",))
    assert out.example is not None
    _legal(out.transitions)
    events = [(r[0], r[1], r[2]) for r in out.transitions]
    assert ("execute", "observe", "error") in events and ("observe", "recover", "retry") in events
    assert out.example["turns"][0]["calls"] == [{"name": "get_balance",
                                                 "arguments": {"account_id": "ACC-0001"}}]
    assert out.example["replay"]["n_errors"] == 1 and out.example["replay"]["n_calls"] == 2
    assert out.example["transitions"] == out.transitions


def test_retries_are_bounded_then_an_alternative_is_used(env: SynthEnv) -> None:
    bad = call("list_accounts", limit=0)  # invalid: limit >= 1
    teacher = Scripted([bad, bad, bad, call("get_balance", account_id="ACC-0001"),
                        Action(text="Done.")], alt=call("get_transaction", transaction_id="TXN-0001"))
    out = _run(env, teacher)
    _legal(out.transitions)
    events = [r[2] for r in out.transitions]
    assert events.count("retry") == env.max_retries
    assert "retries_exhausted" in events and teacher.offered
    assert out.example is not None
    assert [c["name"] for c in out.example["turns"][0]["calls"]] == ["get_transaction", "get_balance"]


def test_no_alternative_aborts_with_a_reason(env: SynthEnv) -> None:
    bad = call("list_accounts", limit=0)
    out = _run(env, Scripted([bad] * 5, alt=None))
    assert out.example is None and out.reason == "unrecovered_error"
    _legal(out.transitions)
    assert out.transitions[-1][1] == "abort"


@pytest.mark.parametrize("garbage", [
    Action(calls=[{"name": 42, "arguments": "not json"}]),
    Action(calls=[{"name": "get_balance", "arguments": None}]),
    Action(calls=["not a call"]),
    Action(calls=[{"arguments": {"x": 1}}]),
    Action(text=None),
    Action(give_up=True),
])
def test_bad_teacher_output_is_rejected_or_recovered_never_raised(env: SynthEnv, garbage: Action) -> None:
    out = _run(env, Scripted([garbage] * 6), ("get_balance",))
    _legal(out.transitions)
    assert out.example is None and out.reason


def test_text_only_on_an_act_turn_is_rejected(env: SynthEnv) -> None:
    out = _run(env, Scripted([Action(text="Sure, your balance is fine.")]), ("get_balance",))
    assert out.reason == "no_tool_call"


def test_calling_a_tool_on_a_clarification_turn_is_rejected(env: SynthEnv) -> None:
    turns = [TurnSpec("clarify", (0,)), TurnSpec("act", (0,), supplies=True)]
    out = _run(env, Scripted([call("get_balance", account_id="ACC-0001")]), ("get_balance",), turns)
    assert out.reason == "tool_call_on_clarify"
    _legal(out.transitions)


def test_transition_table_is_closed() -> None:
    for state, nxt in TRANSITIONS.items():
        assert nxt <= set(State), state
    assert not TRANSITIONS[State.FINISH] and not TRANSITIONS[State.ABORT]


def test_generated_and_rejected_examples_log_legal_transitions(small_run: tuple[Any, Path]) -> None:
    _, out = small_run
    for name in ("examples.jsonl", "rejected.jsonl"):
        for line in (out / name).read_text().splitlines():
            _legal(json.loads(line)["transitions"])
