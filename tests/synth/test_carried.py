"""Ids people carry (issue 28 follow-up): an order number, a booking reference, a ticket number may
be written as they are; a thing of any other kind is named and looked up (`plan_lookup.CARRIED_KINDS`),
and the card counts raw ids by kind.

    .venv/bin/python -m pytest tests/synth/test_carried.py -q
"""

from __future__ import annotations

import asyncio
import random

from prove.env.hub import Hub
from prove.env.registry import load_registry
from prove.graph.chains import Chain, ToolGraph
from prove.synth.machine import Script, SynthEnv, TurnSpec, run_conversation
from prove.synth.perturb import offered_tools
from prove.synth.plan_lookup import CARRIED_KINDS, carried
from prove.synth.programmatic import ProgrammaticTeacher
from prove.synth.quality import (
    ACTING_PARAMS,
    Linker,
    quality_markdown,
    quality_report,
    turn_summary,
)
from prove.synth.sampling import LiveSampler, param_kind


def test_the_carried_kinds_are_declared_kinds_and_no_person_is_one() -> None:
    registry = load_registry()
    declared = {param_kind(t, p) for t in registry.tools.values() for p in t.input_schema.get("properties", {})}
    assert CARRIED_KINDS <= declared, CARRIED_KINDS - declared
    acting = {param_kind(t, p) for t in registry.tools.values() for p in t.sensitive if p in ACTING_PARAMS}
    assert not {k for k in acting if carried(k)}  # the user is named, never their own id
    assert carried("order") and not carried("account") and not carried(None)


def test_a_ticket_number_is_sometimes_written_and_an_account_always_named() -> None:
    registry = load_registry().subset(["support"])
    hub = Hub(registry)
    env = SynthEnv(hub, ToolGraph.build(registry), LiveSampler(hub), max_retries=2)
    tools = ("get_support_ticket",)
    written = named = 0
    for index in range(12):
        chain = Chain(tools, ("support",), env.graph.chain_edges(tools, ("support",)))
        script = Script(f"carried-{index:06d}", "multi_turn", index, 1 + index % 3, chain,
                        [TurnSpec("act", (0,))], [], offered_tools(["support"], registry, [], random.Random(0)))
        out = asyncio.run(run_conversation(script, ProgrammaticTeacher(lookup_rate=1.0), env))
        assert out.example is not None, out.reason
        calls = out.example["turns"][0]["calls"]
        user = next(m["content"] for m in out.example["messages"] if m["role"] == "user")
        if calls[-1]["arguments"]["ticket_id"] in user:
            written += 1
            assert [c["name"] for c in calls] == ["get_support_ticket"]
        else:
            named += 1
            assert [c["name"] for c in calls] == ["search_support_tickets", "get_support_ticket"]
    assert written and named  # a ticket number is carried: given as written about half the time


def test_the_card_counts_raw_ids_by_kind_and_those_people_do_not_carry() -> None:
    registry = load_registry().subset(["shop"])
    example = {"kind": "multi_turn", "tools": [], "servers": ["shop"], "seed": 1,
               "turns": [{"calls": [{"name": "get_shop_order", "arguments": {"order_id": "ORD-0001"}},
                                    {"name": "get_product", "arguments": {"sku": "SKU-1001"}}]}],
               "messages": [{"role": "user", "content": "Where is ORD-0001?"},
                            {"role": "user", "content": "And what is SKU-1001? CUS-0009 here."}]}
    summary = turn_summary(example, Linker(registry))
    assert sorted(summary["raw_id_kinds"]) == ["?", "order", "product"]
    report = quality_report([summary])
    assert report["uncarried_raw_id_share"] == 0.5  # the second turn: a product and an unknown id
    assert any("order* (1)" in line for line in quality_markdown(report, None))


def test_an_error_that_lists_valid_ids_still_lets_the_user_name_one() -> None:
    """A mailbox named at first may be one the user cannot read; the error lists the valid ids and
    the user names one of those (looked up) rather than writing its id."""
    registry = load_registry().subset(["email"])
    hub = Hub(registry)
    env = SynthEnv(hub, ToolGraph.build(registry), LiveSampler(hub), max_retries=2)
    tools = ("list_emails",)
    for index in range(4):
        chain = Chain(tools, ("email",), env.graph.chain_edges(tools, ("email",)))
        script = Script(f"pinned-{index:06d}", "multi_turn", index, 1 + index % 3, chain,
                        [TurnSpec("act", (0,))], [], offered_tools(["email"], registry, [], random.Random(0)))
        out = asyncio.run(run_conversation(script, ProgrammaticTeacher(lookup_rate=1.0), env))
        assert out.example is not None, out.reason
        calls = out.example["turns"][0]["calls"]
        user = next(m["content"] for m in out.example["messages"] if m["role"] == "user")
        names = [c["name"] for c in calls]
        assert names[0] == "list_mailboxes" and names[-1] == "list_emails", (user, calls)
        assert calls[-1]["arguments"]["mailbox_id"] not in user
