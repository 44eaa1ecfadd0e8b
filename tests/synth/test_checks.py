"""The checks of issue 28 reject what they should and keep what is right: provenance by meaning
(a person's id the user never stated), abstentions an offered tool serves, one person per
conversation, reads nothing uses, the card's offered-tool counts, conversations quoted by a seed.

    .venv/bin/python -m pytest tests/synth/test_checks.py -q
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from prove.env import Hub, load_registry
from prove.synth import phrasing as P
from prove.synth.abstain import AbstentionCheck, content_words
from prove.synth.evidence import provenance
from prove.synth.export import dataset_card, example_summary
from prove.synth.pipeline import SynthResult
from prove.synth.quality import (
    Linker,
    acting_ids,
    main,
    one_person,
    quality_report,
    quote_conversation,
    quote_sample,
    turn_summary,
    unused_reads,
)
from prove.synth.validate import check_example

REG = load_registry()


class Talk:
    """A conversation on live servers: user turns and ground-truth calls, as synthesis writes them."""

    def __init__(self, servers: list[str], seed: int = 7, system: str = "You help the user.") -> None:
        self.hub = Hub(REG.subset(servers))
        self.servers, self.seed = servers, seed
        self.hub.open("checks", seed)
        self.messages: list[dict] = [{"role": "system", "content": system}]
        self.turns: list[dict] = []

    def user(self, text: str) -> Talk:
        self.messages.append({"role": "user", "content": text})
        self.turns.append({"calls": [], "depends_on": []})
        return self

    def call(self, name: str, **arguments: object) -> dict:
        got = self.hub.call(name, arguments, episode_id="checks")
        assert got["ok"], got
        cid = f"call_{len(self.messages)}"
        self.messages += [{"role": "assistant", "content": "", "tool_calls": [
                              {"id": cid, "type": "function",
                               "function": {"name": name, "arguments": json.dumps(arguments)}}]},
                          {"role": "tool", "tool_call_id": cid, "name": name,
                           "content": json.dumps(got["result"])}]
        self.turns[-1]["calls"].append({"name": name, "arguments": arguments})
        return got["result"]

    def reply(self, text: str) -> Talk:
        self.messages.append({"role": "assistant", "content": text})
        return self

    def example(self, kind: str = "multi_turn") -> dict:
        """The conversation so far as an example (a copy: later turns do not change it)."""
        return copy.deepcopy({"id": "checks", "kind": kind, "seed": self.seed, "servers": self.servers,
                              "tools": [t.openai_schema() for s in self.servers for t in REG.server(s).tools],
                              "messages": self.messages, "turns": self.turns, "perturbations": []})


def _a_chat(talk: Talk) -> tuple[str, str, str]:
    """(conversation id, a member who did not create it, its creator) of a chat with no pins."""
    listed = talk.hub.call("list_chat_conversations", {"user_id": "USR-0003"}, episode_id="checks")
    for conv in listed["result"]["conversations"]:
        detail = talk.hub.call("get_chat_conversation", {"conversation_id": conv["conversation_id"]},
                               episode_id="checks")["result"]
        others = [m for m in detail["members"] if m != detail["created_by"]]
        if others and not detail["pinned_messages"]:
            return detail["conversation_id"], others[0], detail["created_by"]
    raise AssertionError("no chat with a member besides its creator")


def test_an_identity_the_user_never_stated_is_rejected() -> None:
    """The issue's case: "Open CNV-… Any new activity in my conversations?" acted as a member the
    chat's members list holds; the user never said who they are."""
    talk = Talk(["messaging"])
    conv, member, _ = _a_chat(talk)
    talk.user(f"Open {conv} and tell me who has it muted.")
    talk.call("get_chat_conversation", conversation_id=conv)
    talk.user("Any new activity in my conversations?")
    talk.call("list_chat_conversations", user_id=member)
    records, missing = provenance(talk.example(), REG)
    assert [(m["param"], m["value"], m.get("person")) for m in missing] == [("user_id", member, True)]
    assert "never stated" in missing[0]["reason"]
    assert [r["value"] for r in records] == [conv]  # the chat the user named is grounded


def test_a_stated_identity_and_a_person_the_user_named_pass_with_their_messages() -> None:
    talk = Talk(["messaging"])
    conv, member, creator = _a_chat(talk)
    talk.user(f"Open {conv} and tell me who started it.")
    talk.call("get_chat_conversation", conversation_id=conv)
    talk.user(f"I'm {member}. Thank whoever created that chat for me, directly.")
    talk.call("send_chat_message", sender_id=member, recipient_id=creator, text="Thanks for setting it up!")
    records, missing = provenance(talk.example(), REG)
    assert missing == []
    by = {r["param"]: r for r in records}
    assert by["sender_id"]["source"] == "user" and by["sender_id"]["message"] == 4 and by["sender_id"]["ref"] == 1
    # the creator's id comes from the chat record the user named by its id (tool message 3)
    assert (by["recipient_id"]["source"], by["recipient_id"]["message"], by["recipient_id"]["named_by"]) == (
        "result", 3, conv)


def test_a_value_only_the_system_message_holds_is_not_grounded() -> None:
    talk = Talk(["messaging"], system="You help USR-0003, who is signed in.")
    talk.user("Show my vehicles. I'm signed in as my user.")
    talk.call("list_chat_conversations", user_id="USR-0003")
    _, missing = provenance(talk.example(), REG)
    assert [m["value"] for m in missing] == ["USR-0003"] and "person" not in missing[0]


def _abstention(server: str, request: str) -> dict:
    return {"id": "a", "kind": "abstention", "servers": [server],
            "tools": [t.openai_schema() for t in REG.server(server).tools],
            "messages": [{"role": "system", "content": "x"}, {"role": "user", "content": request}]}


@pytest.mark.parametrize(("server", "request_text", "tool"), [
    ("email", "Empty the trash.", "delete_email"),
    ("messaging", "Forward that message to my sister.", "send_chat_message"),
    ("banking", "Please transfer funds between my accounts.", "transfer_funds"),
])
def test_an_abstention_an_offered_tool_serves_is_rejected(server: str, request_text: str, tool: str) -> None:
    why = AbstentionCheck.load().example(_abstention(server, request_text))
    assert why is not None and tool in why, why


def test_clean_abstentions_pass() -> None:
    check = AbstentionCheck.load()
    every = [t.openai_schema() for t in REG.tools.values()]
    assert [t for t in P.GENERIC_OFF_TOPIC if check.served(t, every)] == []
    for server, text in [("email", "Give Julia delegate access to my mailbox."),
                         ("messaging", "Turn off read receipts for me."),
                         ("shop", "Change the email address on my account."),   # update_shipping_address: not this
                         ("wiki", "Delete my comment on the roadmap page.")]:   # there is no comment deletion
        assert check.example(_abstention(server, text)) is None, text
    # reads are judged by near-misses only: "show the diff of a commit" is not list_commits
    assert check.served("Show me the diff of the last commit on main.", every) == []
    assert content_words("Forward the messages", check.synonyms) == ["send", "message"]


def test_the_abstention_data_file_is_checked(tmp_path: Path) -> None:
    bad = tmp_path / "a.yaml"
    bad.write_text("synonyms: {}\nnear_miss: []\n")
    with pytest.raises(ValueError, match="unknown keys"):
        AbstentionCheck.load(bad)
    bad.write_text("near_misses:\n  - {tool: delete_email}\n")
    with pytest.raises(ValueError, match="needs words"):
        AbstentionCheck.load(bad)


def test_validation_rejects_a_served_abstention(small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    examples = [json.loads(line) for line in (out / "examples.jsonl").read_text().splitlines()]
    ex = copy.deepcopy(next(e for e in examples if e["kind"] == "abstention"))
    hub = Hub()
    assert check_example(ex, hub) == (None, "")
    names = [t["function"]["name"].split("_") for t in ex["tools"]]
    act, *rest = next(n for n in names if n[0] in ("create", "cancel", "delete", "send", "book", "transfer",
                                                   "update", "add") and len(n) >= 2)
    last = max(i for i, m in enumerate(ex["messages"]) if m["role"] == "user")
    ex["messages"][last]["content"] = f"Please {act} the {' '.join(rest)} for me."
    reason, detail = check_example(ex, hub)
    assert reason == "abstention_served", detail


def _calls(*pairs: tuple[str, dict]) -> dict:
    return {"kind": "multi_turn", "seed": 7, "servers": ["messaging"], "tools": [], "messages": [],
            "turns": [{"calls": [{"name": n, "arguments": a} for n, a in pairs]}]}


def test_one_person_per_conversation() -> None:
    """The issue's "reacts as USR-0003 then deletes as USR-0020" is two people; messaging someone
    else (a recipient) is not."""
    two = _calls(("list_chat_conversations", {"user_id": "USR-0003"}),
                 ("search_chat_messages", {"user_id": "USR-0020", "query": "x"}))
    assert acting_ids(two, REG) == {"messaging:user_id": {'"USR-0003"', '"USR-0020"'}}
    assert one_person(two, REG) is False
    one = _calls(("list_chat_conversations", {"user_id": "USR-0003"}),
                 ("send_chat_message", {"sender_id": "USR-0003", "recipient_id": "USR-0020", "text": "hi"}))
    assert one_person(one, REG) is True
    assert one_person(_calls(("get_chat_conversation", {"conversation_id": "CNV-0001"})), REG) is None


def test_a_read_nothing_uses_is_a_non_minimal_step() -> None:
    talk = Talk(["messaging"])
    conv, member, _ = _a_chat(talk)
    talk.user(f"I'm {member}. Open {conv}, then list my chats.")
    talk.call("get_chat_conversation", conversation_id=conv)        # nothing below uses it
    listed = talk.call("list_chat_conversations", user_id=member)
    talk.reply(f"You have {listed['total']} chats; the latest message came at "
               f"{listed['conversations'][0]['last_message_at']}.")   # small counts say nothing
    ex = talk.example()
    assert unused_reads(ex, REG) == [{"turn": 0, "call": 0, "name": "get_chat_conversation"}]
    report = quality_report([turn_summary(ex, Linker(REG))])
    assert report["unused_read_share"] == 0.5 and report["one_person_share"] == 1.0
    detail = json.loads(ex["messages"][3]["content"])
    talk.reply(f"The chat {conv} was started on {detail['created_at']}.")
    assert unused_reads(talk.example(), REG) == []  # a later reply shows what it read


def test_the_card_counts_what_was_offered() -> None:
    talk = Talk(["messaging"])
    talk.user("x")
    ex = talk.example()
    ex["tools"].append(REG.tool("send_email").openai_schema())
    ex["perturbations"] = [{"type": "distractor_tools", "tools": ["send_email"]}]
    ex.update(split="train", chain={"tools": []}, teacher={"name": "t"}, replay={"n_errors": 0})
    summary = example_summary(ex, REG)
    assert (summary["offered_servers"], summary["distractor_tools"]) == (2, 1)
    card = dataset_card([summary], {}, {}, {"train": 1})
    assert card["counts"]["offered_servers_per_example"] == {"2": 1}
    assert card["counts"]["distractor_tools"] == {"1": 1}
    report = quality_report([turn_summary(ex, Linker(REG))])
    assert report["offered_multi_server_share"] == 1.0 and report["distractors_per_example"] == 1.0


def test_conversations_are_quoted_by_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    talk = Talk(["messaging"])
    conv, member, _ = _a_chat(talk)
    talk.user(f"I'm {member}; open {conv}.")
    talk.call("get_chat_conversation", conversation_id=conv)
    talk.reply("Here it is.")
    text = quote_conversation(talk.example(), result_chars=40)
    assert f"USER: I'm {member}; open {conv}." in text
    assert f'CALL get_chat_conversation({{"conversation_id": "{conv}"}})' in text
    assert "ASSISTANT: Here it is." in text and "You help the user" not in text
    assert max(len(line) for line in text.splitlines() if line.lstrip().startswith("->")) <= 40 + 7
    examples = [{**talk.example(), "id": f"ex-{i}"} for i in range(30)]
    path = tmp_path / "examples.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in examples))
    picked = [e["id"] for e in quote_sample(examples, 10, seed=0)]
    assert picked == [e["id"] for e in quote_sample(examples, 10, seed=0)] != [
        e["id"] for e in quote_sample(examples, 10, seed=1)]
    assert picked == sorted(picked, key=lambda i: int(i.split("-")[1])) and len(set(picked)) == 10
    assert main(["--quote", "10", "--seed", "0", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("### ex-") == 10 and all(f"### {i} " in out for i in picked)
    with pytest.raises(SystemExit):
        main(["--quote", "3", str(tmp_path / "missing.jsonl")])
