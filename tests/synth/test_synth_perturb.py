"""Perturbations are seeded, recorded on the example, and correct: distractors from other servers,
enum values stripped from the offered schema, irrelevant queries with empty ground truth, withheld
information that the assistant asks for and the next user turn supplies."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from prove.env.registry import load_registry
from prove.graph.chains import Edge, ToolGraph, graph_chains
from prove.synth.evidence import text_has_value
from prove.synth.intents import load_intents
from prove.synth.perturb import (
    ChainPool,
    PerturbationRates,
    build_script,
    offered_tools,
    strip_enum,
)
from prove.synth.pipeline import SynthResult
from prove.synth.sampling import schema_enum
from prove.synth.validate import offered_problems


@pytest.fixture(scope="module")
def chains() -> list:
    _, found = graph_chains(60, 0, servers=("banking", "shop", "flights", "calendar"))
    return found


def _examples(out: Path, kind: str) -> list[dict]:
    rows = [json.loads(line) for line in (out / "examples.jsonl").read_text().splitlines()]
    return [e for e in rows if e["kind"] == kind]


def test_scripts_are_seeded(chains: list) -> None:
    reg = load_registry()
    a = build_script("multi_turn", 5, ChainPool(chains, reg), seed=1, n_worlds=4)
    b = build_script("multi_turn", 5, ChainPool(chains, reg), seed=1, n_worlds=4)  # a fresh pool
    assert (a.chain, a.seed, a.turns, a.perturbations, a.tools) == (b.chain, b.seed, b.turns,
                                                                    b.perturbations, b.tools)
    assert len(a.turns) >= 2 and all(t.kind == "act" for t in a.turns)


def test_distractors_come_from_other_servers_and_are_offered(chains: list) -> None:
    reg = load_registry()
    rates = PerturbationRates(distractors=1.0, enum_removed=1.0)
    seen_enum = 0
    pool = ChainPool(chains, reg)
    for i in range(20):
        s = build_script("multi_turn", i, pool, seed=0, n_worlds=2, rates=rates)
        kinds = {p["type"]: p for p in s.perturbations}
        names = [t["function"]["name"] for t in s.tools]
        own = [t.name for srv in s.servers for t in reg.server(srv).tools]
        d = kinds["distractor_tools"]
        assert 2 <= len(d["tools"]) <= 4
        assert all(reg.tool(n).server not in s.servers for n in d["tools"])
        assert sorted(names) == sorted(own + d["tools"])
        if "enum_removed" in kinds:
            seen_enum += 1
            e = kinds["enum_removed"]
            schema = next(t for t in s.tools if t["function"]["name"] == e["tool"])
            assert schema_enum(schema["function"]["parameters"]["properties"][e["param"]]) is None
            assert e["values"] == schema_enum(reg.tool(e["tool"]).input_schema["properties"][e["param"]])
    assert seen_enum


def test_a_cut_chain_stops_offering_the_server_it_no_longer_uses(chains: list) -> None:
    """A two-server chain cut before its second server offers only the first server's tools and
    the recorded distractors (an enum removal on a tool no longer offered goes too)."""
    reg = load_registry()
    rates = PerturbationRates(distractors=1.0, enum_removed=1.0)
    pool = ChainPool(chains, reg)
    script = next(s for s in (build_script("multi_turn", i, pool, seed=0, n_worlds=2, rates=rates)
                              for i in range(200)) if len(s.servers) == 2)
    assert offered_problems({"tools": script.tools, "servers": script.servers,
                             "perturbations": script.perturbations}, reg) == []
    second = script.chain.servers.index(script.chain.servers[-1])
    script.truncate(second, server_of=lambda name: reg.tool(name).server)
    kept = script.servers
    assert len(kept) == 1
    recorded = next(p["tools"] for p in script.perturbations if p["type"] == "distractor_tools")
    names = sorted(t["function"]["name"] for t in script.tools)
    assert names == sorted([t.name for t in reg.server(kept[0]).tools] + recorded)
    assert all(reg.tool(p["tool"]).server in kept for p in script.perturbations
               if p["type"] == "enum_removed")
    example = {"tools": script.tools, "servers": kept, "perturbations": script.perturbations}
    assert offered_problems(example, reg) == []
    extra = reg.tool(next(n for n in reg.tools if reg.tool(n).server not in kept
                          and n not in recorded)).openai_schema()
    problems = offered_problems({**example, "tools": [*script.tools, extra]}, reg)
    assert len(problems) == 1 and "neither of servers" in problems[0]
    problems = offered_problems({**example, "tools": script.tools[1:]}, reg)
    assert problems and problems[0].startswith("not offered: ")


def test_strip_enum_handles_optional_and_arrays() -> None:
    reg = load_registry()
    schema = reg.tool("list_accounts").openai_schema()
    stripped = strip_enum(schema, "account_type")
    assert "enum" not in json.dumps(stripped["function"]["parameters"]["properties"]["account_type"])
    assert "enum" in json.dumps(schema)  # the original is untouched
    tools = offered_tools(["banking"], reg, [], random.Random(0))
    assert [t["function"]["name"] for t in tools] == reg.server("banking").tool_names()


def test_abstention_has_empty_ground_truth_and_no_call(small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    found = _examples(out, "abstention")
    assert found
    for ex in found:
        pert = [p for p in ex["perturbations"] if p["type"] == "irrelevant_query"]
        assert pert and pert[0]["source"] in ("app", "generic", "tool")
        assert ex["turns"][-1] == {"calls": [], "depends_on": []}
        last = ex["messages"][-1]
        assert last["role"] == "assistant" and not last.get("tool_calls") and last["content"]
        if pert[0]["source"] == "tool":
            offered = {t["function"]["name"] for t in ex["tools"]}
            assert pert[0]["tool"] not in offered
        if pert[0]["source"] == "app":  # something a user of the conversation's own app asks
            assert pert[0]["server"] in ex["servers"]
            assert pert[0]["text"] in load_intents(pert[0]["server"]).off_tool
            assert [m["content"] for m in ex["messages"] if m["role"] == "user"][-1] == pert[0]["text"]


def test_clarification_asks_and_the_next_turn_supplies(small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    found = _examples(out, "clarification")
    assert found
    for ex in found:
        w = next(p for p in ex["perturbations"] if p["type"] == "withheld_information")
        users = [i for i, m in enumerate(ex["messages"]) if m["role"] == "user"]
        first, second = ex["messages"][users[0]], ex["messages"][users[1]]
        ask = ex["messages"][users[0] + 1]
        assert ask["role"] == "assistant" and not ask.get("tool_calls") and ask["content"].endswith("?")
        assert ex["turns"][0]["calls"] == []
        assert not text_has_value(first["content"], w["value"]), first["content"]
        assert text_has_value(second["content"], w["value"]) or w.get("words", "") in second["content"]
        assert any(c["name"] == w["tool"] and c["arguments"].get(w["param"]) == w["value"]
                   for c in ex["turns"][1]["calls"])


def test_graph_adapter_keeps_explicit_edges_and_their_declared_join() -> None:
    reg = load_registry().subset(["banking"])
    g = ToolGraph.from_edges([("list_accounts", "get_balance", "implicit", None),
                              ("list_accounts", "get_balance", "explicit", "account_id")], reg)
    assert g.edge("list_accounts", "get_balance") == Edge(
        0, 1, "explicit", "account_id", "accounts[].account_id", "account")
