"""Raw ids people would not write (issue 28): a user answers a clarifying question with the
thing's name and the answering turn's calls hold the lookup that resolves it; an off-topic request
names things rather than writing their ids.

    .venv/bin/python -m pytest tests/synth/test_ids_people_use.py -q
"""

from __future__ import annotations

import asyncio
import random

from prove.env.hub import Hub
from prove.env.registry import load_registry
from prove.graph.chains import Chain, ToolGraph
from prove.synth.machine import Script, SynthEnv, TurnSpec, run_conversation
from prove.synth.perturb import offered_tools
from prove.synth.programmatic import ProgrammaticTeacher
from prove.synth.quality import STYLE_MARKS
from prove.synth.sampling import LiveSampler
from prove.synth.validate import check_example

RAW_ID = STYLE_MARKS["raw_id"]


def _env(servers: list[str]) -> SynthEnv:
    registry = load_registry().subset(servers)
    hub = Hub(registry)
    return SynthEnv(hub, ToolGraph.build(registry), LiveSampler(hub), max_retries=2)


def test_a_clarifying_question_is_answered_by_name_and_the_answering_turn_looks_it_up() -> None:
    """"Which home should I check?" -> "Zielinski Loft, please.": the home's id is in no user turn;
    the answering turn calls the listing that resolves the name, then the asked-about call, and the
    example passes every check (replay, provenance) as it is."""
    env = _env(["smarthome"])
    tools = ("get_home_status",)
    for index in range(4):
        chain = Chain(tools, ("smarthome",), env.graph.chain_edges(tools, ("smarthome",)))
        script = Script(f"answer-{index:06d}", "clarification", index, 1 + index % 3, chain,
                        [TurnSpec("clarify", (0,)), TurnSpec("act", (0,), supplies=True)],
                        [{"type": "withheld_information", "turn": 0, "supplied_in_turn": 1}],
                        offered_tools(["smarthome"], env.registry, [], random.Random(0)))
        out = asyncio.run(run_conversation(script, ProgrammaticTeacher(slip_rate=0.0, lookup_rate=1.0), env))
        assert out.example is not None, out.reason
        ex = out.example
        users = [m["content"] for m in ex["messages"] if m["role"] == "user"]
        home = ex["turns"][1]["calls"][-1]["arguments"]["home_id"]
        assert [c["name"] for c in ex["turns"][1]["calls"]] == ["list_homes", "get_home_status"], ex["turns"]
        assert not any(RAW_ID.search(u) for u in users), users
        assert home not in users[1]
        assert check_example(ex, env.hub) == (None, ""), users


def test_an_off_topic_request_names_the_project_it_is_about() -> None:
    """A to-do for a project on a server the example does not offer: the user says the project's
    name ("New to-do in my SEO Refresh project"), the one the sampler drew, not PRJ-0007; a project
    no listing shows apart would keep its id."""
    env = _env(["banking", "tasks"])
    tools = ("list_accounts",)
    env.hub.open("projects", 1)
    listed = env.hub.call("list_task_projects", {}, episode_id="projects")["result"]["projects"]
    projects = {p["project_id"]: p["name"] for p in listed}
    named = 0
    for index in range(6):
        chain = Chain(tools, ("banking",), env.graph.chain_edges(tools, ("banking",)))
        topic = {"source": "tool", "tool": "create_task", "server": "tasks"}
        script = Script(f"topic-{index:06d}", "abstention", index, 1, chain,
                        [TurnSpec("abstain", (), off_topic=topic)], [{"type": "irrelevant_query", **topic}],
                        offered_tools(["banking"], env.registry, [], random.Random(0)))
        out = asyncio.run(run_conversation(script, ProgrammaticTeacher(lookup_rate=1.0), env))
        assert out.example is not None, out.reason
        user = next(m["content"] for m in out.example["messages"] if m["role"] == "user")
        assert not any(p in user for p in projects), user
        named += any(name in user for name in projects.values())
    assert named >= 3


def test_a_transaction_is_named_within_the_account_the_user_names_too() -> None:
    """A bank lists transactions per account, and the conversation has no account yet: the user
    names both ("the salary one ... on my account opened on July 10"), the accounts listing then
    the account's transactions resolve them, in that order; replay and provenance pass as they are."""
    env = _env(["banking"])
    tools = ("get_transaction",)
    for index in range(4):
        chain = Chain(tools, ("banking",), env.graph.chain_edges(tools, ("banking",)))
        script = Script(f"hop-{index:06d}", "multi_turn", index, 1 + index % 3, chain,
                        [TurnSpec("act", (0,))], [], offered_tools(["banking"], env.registry, [], random.Random(0)))
        out = asyncio.run(run_conversation(script, ProgrammaticTeacher(slip_rate=0.0, lookup_rate=1.0), env))
        assert out.example is not None, out.reason
        calls = out.example["turns"][0]["calls"]
        user = next(m["content"] for m in out.example["messages"] if m["role"] == "user")
        # get_transaction follows unless the listing already showed the transaction (minimal ground truth)
        assert [c["name"] for c in calls][:2] == ["list_accounts", "list_bank_transactions"], calls
        assert {c["name"] for c in calls} <= {"list_accounts", "list_bank_transactions", "get_transaction"}
        assert calls[1]["arguments"]["account_id"] not in user and not RAW_ID.search(user), user
        assert check_example(out.example, env.hub) == (None, ""), user


def test_whose_conversations_they_are_is_the_user_saying_who_they_are() -> None:
    """A chat conversation is listed per user: the one hop names the user themself, said as "I'm
    Rosa Okafor." (never "Go with Rosa Okafor"), and that name is the persona's."""
    env = _env(["messaging"])
    tools = ("get_chat_conversation",)
    for index in range(4):
        chain = Chain(tools, ("messaging",), env.graph.chain_edges(tools, ("messaging",)))
        script = Script(f"me-{index:06d}", "multi_turn", index, 1 + index % 3, chain,
                        [TurnSpec("act", (0,))], [], offered_tools(["messaging"], env.registry, [], random.Random(0)))
        out = asyncio.run(run_conversation(script, ProgrammaticTeacher(slip_rate=0.0, lookup_rate=1.0), env))
        assert out.example is not None, out.reason
        calls = out.example["turns"][0]["calls"]
        user = next(m["content"] for m in out.example["messages"] if m["role"] == "user")
        assert [c["name"] for c in calls] == ["search_chat_users", "list_chat_conversations",
                                              "get_chat_conversation"], calls
        name = out.example["persona"]["name"]
        assert name and f"I'm {name}." in user and not RAW_ID.search(user), (name, user)
        assert check_example(out.example, env.hub) == (None, ""), user


def test_a_chat_message_is_named_two_hops_away_without_saying_who_twice() -> None:
    """A message is listed per conversation and a conversation per user: the user names all three
    ('the message that says "See you all Sunday!" ... the conversation "Family" ... I'm Rosa
    Okafor.'), the user listing, their conversations and that conversation's messages resolve them
    in that order; the user's name is said once even where the request already says who asks."""
    env = _env(["messaging"])
    tools = ("react_to_chat_message",)
    made = 0
    for index in range(8):
        chain = Chain(tools, ("messaging",), env.graph.chain_edges(tools, ("messaging",)))
        script = Script(f"pin-{index:06d}", "multi_turn", index, 1 + index % 3, chain,
                        [TurnSpec("act", (0,))], [], offered_tools(["messaging"], env.registry, [], random.Random(0)))
        out = asyncio.run(run_conversation(script, ProgrammaticTeacher(slip_rate=0.0, lookup_rate=1.0), env))
        if out.example is None:  # a seed whose pinning fails whatever is named (not a member)
            assert out.reason == "infeasible", out.reason
            continue
        calls = out.example["turns"][0]["calls"]
        user = next(m["content"] for m in out.example["messages"] if m["role"] == "user")
        if len(calls) == 2 and calls[1]["arguments"]["message_id"] in user:
            continue  # a message of a conversation the user is not in: none of their listings names it
        made += 1
        assert [c["name"] for c in calls] == ["search_chat_users", "list_chat_conversations",
                                              "list_chat_messages", "react_to_chat_message"], calls
        name = out.example["persona"]["name"]
        assert user.count(name) == 1 and not RAW_ID.search(user), (name, user)
        assert check_example(out.example, env.hub) == (None, ""), user
    assert made >= 3
