"""The user's voice (issue 28): one persona per conversation, items named as people name them,
assistant replies that show what later turns refer to, requests joined by how they relate.

    .venv/bin/python -m pytest tests/synth/test_voice.py -q
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from prove.env.hub import Hub
from prove.env.registry import load_registry
from prove.synth import phrasing as P
from prove.synth.quality import IDENTITY, STYLE_MARKS
from prove.synth.records import derived_rng

_RAW_ID = re.compile(r"\b[A-Z]{2,6}-\d{3,}\b")


def _examples(small_run: tuple[Any, Path]) -> list[dict[str, Any]]:
    _, out = small_run
    return [json.loads(line) for line in (out / "examples.jsonl").read_text().splitlines()]


def _users(example: dict[str, Any]) -> list[str]:
    return [m["content"] for m in example["messages"] if m["role"] == "user"]


# -- one person per conversation -------------------------------------------------------------
def test_each_conversation_has_one_persona_drawn_from_its_seed(small_run: tuple[Any, Path]) -> None:
    """The persona is recorded, drawn from the example's own stream (the same id and seed give the
    same one), never restated: no follow-up says who the user is, the name is said at most once."""
    examples = [e for e in _examples(small_run) if e["kind"] != "abstention" or e.get("persona")]
    assert examples and all("persona" in e for e in examples)
    styles = set()
    for ex in examples:
        persona = ex["persona"]
        drawn = P.draw_persona(derived_rng("persona", ex["id"], ex["seed"]), persona["name"])
        assert drawn.to_dict() == persona
        styles.add((persona["brief"], persona["polite"]))
        users = _users(ex)
        assert sum(bool(IDENTITY.search(u)) for u in users) <= 1, users
        if persona["name"]:
            first = persona["name"].split()[0]
            assert sum(f"this is {first}" in u for u in users) <= 1
    assert len(styles) >= 3  # people differ from one conversation to the next


def test_who_the_user_is_is_said_once_and_the_same_person_acts_throughout() -> None:
    """"I'm {customer_id}" states who they are once; a later request for the same person leaves
    the clause out (the value is in an earlier turn), a different value would be said."""
    entities = {"customer_id": "customer", "sku": "product"}
    introduced: dict[str, Any] = {}
    me = ("customer_id", "id", "SHC-0019", {})
    first = P.fill_request("Take {sku} out of my cart. I'm {customer_id}.", [("sku", "id", "SKU-0001", {}), me],
                           entities, random.Random(0), introduced=introduced)
    assert "SHC-0019" in first and introduced == {"customer_id": "SHC-0019"}
    for template in ("Take {sku} out of my cart. I'm {customer_id}.", "I'm {customer_id}, put {sku} back.",
                     "Check out {sku}; I'm {customer_id}.", "I'm {customer_id} and I want {sku} gone."):
        later = P.fill_request(template, [("sku", "id", "SKU-0002", {}), me], entities, random.Random(1),
                               introduced=introduced)
        assert "SHC-0019" not in later and not IDENTITY.search(later) and "same customer" not in later, later
        assert "SKU-0002" in later and later[0].isupper() and ".." not in later and " ." not in later
    other = P.fill_request("Take {sku} out. I'm {customer_id}.", [("sku", "id", "SKU-0002", {}),
                           ("customer_id", "id", "SHC-0001", {})], entities, random.Random(1), introduced=introduced)
    assert "SHC-0001" in other  # a different value is never dropped silently


def test_every_way_a_request_says_who_the_user_is_is_one_identity_clause() -> None:
    """"This is {user_id}", "As {user_id}, ..." and "{user_id} here" say who the user is as "I'm
    {user_id}" does: said the way people say it, and left out when the value came from a result
    (the user is not "the first user you listed") or was said before. The wiki's "Nest {page_id}
    beneath {new_parent_id}, {user_id} here." read "..., the first user you listed here." when the
    chain fed the user id from a listing."""
    entities = {"user_id": "user", "page_id": "page", "new_parent_id": "page"}
    page, parent = ("page_id", "id", "PG-0004", {}), ("new_parent_id", "id", "PG-0016", {})
    listed = ("user_id", "result-ordinal", "USR-0022", {})
    for template in ("Nest {page_id} beneath {new_parent_id}, {user_id} here.",
                     "{user_id} here. Nest {page_id} beneath {new_parent_id}.",
                     "This is {user_id}. Nest {page_id} beneath {new_parent_id}.",
                     "As {user_id}, nest {page_id} beneath {new_parent_id}."):
        assert [P.speaker(m) for m in P.SPEAKER.finditer(template)] == ["user_id"], template
        fed = P.fill_request(template, [page, parent, listed], entities, random.Random(0))
        assert "USR-0022" not in fed and "listed" not in fed and " here" not in fed, fed
        assert fed.startswith("Nest") and "PG-0004" in fed and "PG-0016" in fed, fed
        introduced: dict[str, Any] = {}
        said = P.fill_request(template, [page, parent, ("user_id", "id", "USR-0022", {})], entities,
                              random.Random(0), introduced=introduced)
        assert "user USR-0022" in said.replace("User", "user") and introduced == {"user_id": "USR-0022"}, said
        again = P.fill_request(template, [page, parent, ("user_id", "id", "USR-0022", {})], entities,
                               random.Random(0), introduced=introduced)
        assert "USR-0022" not in again and " here" not in again, again
    named = P.fill_request("Nest {page_id} beneath {new_parent_id}, {user_id} here.",
                           [page, parent, ("user_id", "named", "USR-0022",
                                           {"descr_field": "name", "descr": "Tara Evans", "descr_how": "alone"})],
                           entities, random.Random(0))
    assert named.endswith(", Tara Evans here."), named
    # "as {status}" (what a thing becomes) and "It's {order_id}" are no identity
    assert not list(P.SPEAKER.finditer("Mark {task_id} as {status}. It's {order_id}."))


def test_a_persona_speaks_in_its_own_style_and_typos_spare_the_values() -> None:
    polite = P.Persona("Ana Silva", brief=False, polite=True, typos=False)
    curt = P.Persona(None, brief=True, polite=False, typos=False)
    said = [P.speak(polite, "Show my accounts.", random.Random(s), first=True) for s in range(40)]
    assert sum(bool(STYLE_MARKS["polite"].search(t)) for t in said) >= 20
    assert all(P.speak(curt, "Show my accounts.", random.Random(s), first=True) == "Show my accounts."
               for s in range(40))
    with_reason = P.speak(curt, "Show my accounts.", random.Random(0), first=True, motive="Rent is due.")
    assert "Rent is due." in with_reason and "Show my accounts." in with_reason
    for seed in range(60):
        slip = P.typo('Move {amount} from "Holiday savings" into {to_account_id} tomorrow.', random.Random(seed))
        assert "{amount}" in slip and "{to_account_id}" in slip and '"Holiday savings"' in slip


# -- people's names for things ---------------------------------------------------------------
@pytest.mark.parametrize(("field", "descr", "how", "expect"), [
    ("name", "Everyday", "name", "Everyday"), ("title", "Set up onboarding", "title", '"Set up onboarding"'),
    ("arg0", "Set up onboarding", "title", '"Set up onboarding"'),  # the declaration, not the name
    ("opened_on", "2026-01-03", None, "opened on January 3"), ("zone", "downtown", None, "downtown"),
    ("city", "Lisbon", None, "Lisbon"),
    ("notes", "Leave it at the door please", None, "Leave it at the door please"),
])
def test_an_item_is_picked_out_as_a_person_would_never_by_its_field(field: str, descr: str, how: str | None,
                                                                  expect: str) -> None:
    """`how` is the field's declared `naming` kind (None: it names nothing)."""
    for seed in range(12):
        rng = random.Random(seed)
        for text in (P.pick_out("account", field, descr, rng, how),
                     P.mention("account_id", "ACC-0001", "result-item", rng, descr_field=field, descr=descr,
                               descr_how=how),
                     P.mention("account_id", "ACC-0001", "named", rng, descr_field=field, descr=descr,
                               descr_how=how)):
            assert expect in text and "ACC-0001" not in text, text
            assert not STYLE_MARKS["field_phrase"].search(text) and not STYLE_MARKS["back_reference"].search(text)


def test_user_turns_name_no_item_by_a_field_and_give_no_raw_id_where_they_named_it(
        small_run: tuple[Any, Path]) -> None:
    """No "whose <field> is", no "from before"; an id a read of the same turn found for a later call
    (the user named the thing; the listing resolved it) is never also written in the user's words."""
    reg = load_registry()
    named = 0
    for ex in _examples(small_run):
        users = _users(ex)
        for u in users:
            assert not STYLE_MARKS["field_phrase"].search(u) and not STYLE_MARKS["back_reference"].search(u), u
        if ex["kind"] != "multi_turn":
            continue
        tool_msgs = [m for m in ex["messages"] if m["role"] == "tool" and not m["content"].startswith("Error")]
        at = 0
        for k, turn in enumerate(ex["turns"]):
            results = tool_msgs[at:at + len(turn["calls"])]
            at += len(turn["calls"])
            for i, call in enumerate(turn["calls"]):
                lookups = [j for j in range(i) if turn["calls"][j]["name"] not in ex["chain"]["tools"]
                           and not reg.tool(turn["calls"][j]["name"]).write]  # reads off the chain
                found = " ".join(results[j]["content"] for j in lookups)
                scope = {json.dumps(v) for j in lookups for v in (turn["calls"][j]["arguments"] or {}).values()}
                for param, value in (call["arguments"] or {}).items():  # listed under its own key
                    if isinstance(value, str) and _RAW_ID.fullmatch(value) and f'"{param}":"{value}"' in found \
                            and json.dumps(value) not in scope \
                            and value not in " ".join(users[:k]):
                        named += 1
                        assert value not in users[k], (ex["id"], value, users[k])
    assert named > 0  # lookups happen, and the ids they find stay unsaid


# -- replies show what later turns refer to ---------------------------------------------------
def test_a_reply_names_the_listed_items_and_every_item_a_later_turn_picks_out() -> None:
    registry = load_registry().subset(["banking"])
    hub = Hub(registry)
    hub.open("voice", 1)
    try:
        listed = hub.call("search_bank_customers", {"limit": 20}, episode_id="voice")
        assert listed["ok"]
    finally:
        hub.close("voice")
    customers = listed["result"]["customers"]
    assert len(customers) > 6
    spec = registry.tool("search_bank_customers")
    far = customers[6]
    show = {repr(far["customer_id"]): ["city"]}
    text = P.describe_result(spec, listed["result"], random.Random(0), show)
    for c in customers[:5]:
        assert c["name"] in text
    assert far["name"] in text and far["city"] in text  # beyond the first five, shown for the later turn
    assert str(len(customers)) in text and ":" in text and not re.search(r"\w+: \w+;", text)
    assert "customer_id" not in text and "{" not in text


def test_every_reference_to_an_earlier_result_has_an_antecedent_the_reader_saw(
        small_run: tuple[Any, Path]) -> None:
    """A value a later turn's call takes from an earlier turn's result (the user never wrote it) is
    an item an earlier message showed: some field of its object (its name, title, date, or the id
    itself) appears in an assistant reply or the user's own words before that turn."""
    checked = 0
    for ex in _examples(small_run):
        msgs = ex["messages"]
        user_at = [i for i, m in enumerate(msgs) if m["role"] == "user"]
        if ex["kind"] != "multi_turn":
            continue
        for k, turn in enumerate(ex["turns"][1:], 1):
            start = user_at[k]
            seen = " ".join(str(m.get("content") or "") for m in msgs[:start + 1]
                            if m["role"] in ("assistant", "user")).lower()
            results = [json.loads(m["content"]) for m in msgs[:start] if m["role"] == "tool"
                       and not m["content"].startswith("Error")]
            for call in turn["calls"]:
                speaker = _speaking(call["name"])  # who the user is needs no antecedent
                for param, value in (call["arguments"] or {}).items():
                    if not isinstance(value, str) or not _RAW_ID.fullmatch(value) or value.lower() in seen \
                            or param in speaker:
                        continue
                    holders = [o for r in results for o in _objects(r) if value in o.values()]
                    if not holders:
                        continue  # found in this turn (a lookup), not taken from an earlier one
                    checked += 1
                    shown = {str(v).lower() for o in holders for v in o.values()
                             if isinstance(v, str) and len(v) > 2 and v != value}
                    shown |= {P.say_date(str(v)).lower() for o in holders for v in o.values()
                              if isinstance(v, str)}
                    assert any(s in seen for s in shown), (ex["id"], k, value)
    assert checked > 0


def _speaking(tool: str) -> set[str]:
    """The parameters that are the user themself in the tool's requests ("I'm {user_id}")."""
    from prove.synth.intents import tool_intents

    written = tool_intents(load_registry().tool(tool).server, tool)
    return {P.speaker(m) for a in (written.ask if written else ()) for m in P.SPEAKER.finditer(a)}


def _objects(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [node] + [o for v in node.values() for o in _objects(v)]
    if isinstance(node, list):
        return [o for v in node for o in _objects(v)]
    return []


# -- intents that belong together -------------------------------------------------------------
def test_requests_are_joined_by_how_they_relate_and_acknowledgements_are_rare() -> None:
    reqs = ["Find my Lisbon booking.", "Cancel it."]
    fed = [P.join_requests(reqs, random.Random(s), True, ["apart", "fed"]) for s in range(200)]
    leads = {lead.strip() for lead in P.LINKS["fed"]}
    assert sum(any(lead in t for lead in leads) for t in fed) > 150
    assert sum(P.join_requests(reqs, random.Random(s), True).startswith(P._ACKS) for s in range(400)) < 40
    for seed in range(20):
        after = P.join_requests(reqs, random.Random(seed), False, ["apart", "after_write"])
        rest = after.removeprefix("Find my Lisbon booking. ")
        assert rest == "Cancel it." or any(rest == lead + "cancel it." for lead in P.LINKS["after_write"]), after


# -- the served teacher gets the same rules ---------------------------------------------------
def test_the_served_teacher_is_one_persona_in_every_turn_and_writes_replies_in_sentences() -> None:
    from test_synth_openai import FakeClient, _message, _script

    from prove.env.hub import Hub as _Hub
    from prove.graph.chains import ToolGraph
    from prove.synth.machine import SynthEnv, TurnSpec, run_conversation
    from prove.synth.openai_teacher import OpenAITeacher
    from prove.synth.sampling import LiveSampler

    registry = load_registry().subset(["banking"])
    hub = _Hub(registry)
    env = SynthEnv(hub, ToolGraph.build(registry), LiveSampler(hub), max_retries=1, max_steps_per_turn=3)
    client = FakeClient([_message("Show my accounts."), _message(None, [("list_accounts", "{}")]),
                         _message("You have three accounts."), _message("How much is in the first?"),
                         _message(None, [("get_balance", '{"account_id": "ACC-0001"}')]),
                         _message("It holds $40.")])
    script = _script(env, turns=[TurnSpec("act", (0,)), TurnSpec("act", (1,))])
    out = asyncio.run(run_conversation(script, OpenAITeacher("http://unused/v1", "fake", client=client), env))
    users = [r for r in client.requests if "tools" not in r]
    assistants = [r for r in client.requests if "tools" in r]
    assert len(users) == 2 and assistants
    who = [next(line for line in r["messages"][-1]["content"].splitlines() if line.startswith("You are "))
           for r in users]
    assert who[0] == who[1]  # the same person, said the same way, in every turn
    assert all("name the items" in r["messages"][0]["content"] for r in assistants)
    if out.example is not None:  # the data's system message is the plain one
        assert "name the items" not in out.example["messages"][0]["content"]
