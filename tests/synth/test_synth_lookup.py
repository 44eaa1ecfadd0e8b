"""Ids the user gives by name are looked up in the ground truth, and new ids belong with the
conversation's (prove.synth.planner: `Planner._lookup`, `Planner._belongs`, `StateLinks`).

    .venv/bin/python -m pytest tests/synth/test_synth_lookup.py -q
"""

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
from prove.synth.machine import Outcome, Script, SynthEnv, TurnSpec, run_conversation
from prove.synth.perturb import offered_tools
from prove.synth.programmatic import ProgrammaticTeacher
from prove.synth.quality import Linker
from prove.synth.sampling import LiveSampler, StateLinks

SERVERS = ["banking", "hotels"]


@pytest.fixture(scope="module")
def env() -> SynthEnv:
    registry = load_registry().subset(SERVERS)
    hub = Hub(registry)
    return SynthEnv(hub, ToolGraph.build(registry), LiveSampler(hub), max_retries=2)


def _run(env: SynthEnv, tools: tuple[str, ...], index: int, lookup_rate: float) -> Outcome:
    server = env.registry.tool(tools[0]).server
    chain = Chain(tools, (server,) * len(tools), env.graph.chain_edges(tools, (server,) * len(tools)))
    turns = [TurnSpec("act", (i,)) for i in range(len(tools))]
    script = Script(f"lookup-{index:06d}", "multi_turn", index, 1 + index % 3, chain, turns, [],
                    offered_tools([server], env.registry, [], random.Random(0)))
    return asyncio.run(run_conversation(script, ProgrammaticTeacher(lookup_rate=lookup_rate), env))


def _users(example: dict[str, Any]) -> list[str]:
    return [m["content"] for m in example["messages"] if m["role"] == "user"]


def test_a_named_account_is_looked_up_before_the_call_that_needs_it(env: SynthEnv) -> None:
    """With every user-given id named, the first turn's ground truth lists the accounts, then asks
    for the balance of one of them; the user never writes its id, and the dependency edge says the
    id came from the listing."""
    out = _run(env, ("get_balance", "list_bank_transactions"), 0, lookup_rate=1.0)
    assert out.example is not None, out.reason
    first = out.example["turns"][0]
    names = [c["name"] for c in first["calls"]]
    assert names == ["list_accounts", "get_balance"]
    account = first["calls"][1]["arguments"]["account_id"]
    shown = next(m["content"] for m in out.example["messages"]
                 if m["role"] == "tool" and m["name"] == "list_accounts")
    listed = [a["account_id"] for a in json.loads(shown)["accounts"]]
    assert account in listed
    assert account not in " ".join(_users(out.example))
    assert [0, 1] in first["depends_on"]


def test_without_lookups_the_user_writes_the_id_and_the_turn_is_the_chain(env: SynthEnv) -> None:
    out = _run(env, ("get_balance", "list_bank_transactions"), 0, lookup_rate=0.0)
    assert out.example is not None, out.reason
    first = out.example["turns"][0]
    assert [c["name"] for c in first["calls"]] == ["get_balance"]
    assert first["calls"][0]["arguments"]["account_id"] in _users(out.example)[0]


def test_a_repeated_listing_is_read_again_not_called_twice(env: SynthEnv) -> None:
    """Two parameters of one kind named in one turn (from and to account) need one listing."""
    both = 0
    for index in range(8):
        out = _run(env, ("transfer_funds", "get_balance"), index, lookup_rate=1.0)
        if out.example is None:  # a seed whose customer cannot make the transfer
            continue
        first = out.example["turns"][0]["calls"]
        assert [c["name"] for c in first] == ["list_accounts", "transfer_funds"]
        transfer = first[-1]["arguments"]
        users = " ".join(_users(out.example))
        both += transfer["from_account_id"] not in users and transfer["to_account_id"] not in users
    assert both >= 2


def test_lookups_in_a_synthesis_run_feed_a_later_call(small_run: tuple[Any, Path]) -> None:
    """Every call of a kept example that is neither the chain's nor a planned alternative is a
    lookup: a read whose result holds an id a later call of the same turn uses (a depends_on edge
    from it), an id the user never wrote; or the turn's last call, when the read it resolved the id
    for was dropped because the listing already showed that record (minimal ground truth: a
    transaction the account's listing shows is not read again)."""
    _, out = small_run
    registry = load_registry()
    seen = 0
    for line in (out / "examples.jsonl").read_text().splitlines():
        example = json.loads(line)
        alternatives = {row[3]["alternative"] for row in example["transitions"]
                        if row[2] == "planned_alternative"}
        users = " ".join(_users(example))
        for turn in example["turns"]:
            for i, call in enumerate(turn["calls"]):
                if call["name"] in example["chain"]["tools"] or call["name"] in alternatives:
                    continue
                seen += 1
                assert not registry.tool(call["name"]).write, call
                fed = [j for a, j in turn["depends_on"] if a == i]
                if not fed and i == len(turn["calls"]) - 1:
                    continue  # the turn's answer: the get after it read what it already showed
                assert fed, (example["id"], call)
                used = [v for j in fed for v in turn["calls"][j]["arguments"].values()
                        if isinstance(v, str) and v not in users]
                assert used, (example["id"], call)
    assert seen > 0


def test_state_links_join_ids_one_record_holds() -> None:
    registry = load_registry()
    links = StateLinks(registry)
    state = registry.server("hotels").initial_state(5).model_dump(mode="json")
    res = next(iter(state["reservations"].values()))
    held = links.records("hotels", 5)
    assert held[f"guest:{res['guest_id']}"] & held[f"reservation:{res['reservation_id']}"]
    stranger = next(g for g in state["guests"] if g != res["guest_id"]
                    and not any(r["guest_id"] == g for r in state["reservations"].values()
                                if r["reservation_id"] == res["reservation_id"]))
    assert not held.get(f"guest:{stranger}", frozenset()) & held[f"reservation:{res['reservation_id']}"]


def test_a_guests_reservation_is_the_guests_own(env: SynthEnv) -> None:
    """The user names a guest, then a reservation: the planner draws one of that guest's
    reservations where the state has any (the coherence measure agrees)."""
    linker = Linker(load_registry())
    judged = 0
    for index in range(10):
        out = _run(env, ("get_hotel_guest", "get_hotel_reservation"), index, lookup_rate=0.0)
        if out.example is None:  # infeasible on this seed (guest_id and email both drawn)
            continue
        example = out.example
        guest = example["turns"][0]["calls"][-1]["arguments"]["guest_id"]
        state = env.registry.server("hotels").initial_state(example["seed"]).model_dump(mode="json")
        own = {r["reservation_id"] for r in state["reservations"].values() if r["guest_id"] == guest}
        if own:
            judged += 1
            assert example["turns"][1]["calls"][-1]["arguments"]["reservation_id"] in own
            assert linker.coherent(example) is True
    assert judged >= 3
