"""Template slips in the user's words (issue 28 follow-up): values agree with the words around them
("1 guest"), a flag reads as words ("just the unread ones", never "Unread only? yes"), an enum is
said in lower case mid-sentence and never as "None", a message is not "the message on the ... email".

    .venv/bin/python -m pytest tests/synth/test_wording.py -q
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from prove.env.registry import load_registry
from prove.synth import phrasing as P
from prove.synth.intents import check_intents, load_intents
from prove.synth.quality import STYLE_MARKS

SLIP = STYLE_MARKS["template_slip"]


@pytest.mark.parametrize(("text", "slip"), [
    ("How much would Family Suite be for 1 guests, arriving May 2?", True),
    ("Open Inbox of that mailbox. Unread only? no Based on that, show it.", True),
    ("Put up a None post on Amara Evans.", True),
    ("Get rid of the message on the March 29 at 02:59 email.", True),
    ("I need the full text of the message on the one from March 13.", True),
    ("I need a room for at least 1 people equipped with speakerphone.", True),
    ("A table for 11 people, or 1 person.", False),
    ("Book it for 1 guest; 1 bus and 1 glass. Unfortunately none of them fit.", False),
    ("Is it paid? No idea. None of them.", False),
])
def test_the_card_finds_template_slips(text: str, slip: bool) -> None:
    assert bool(SLIP.search(text)) is slip


def test_a_filled_request_agrees_with_its_values() -> None:
    rng = random.Random(0)
    one = P.fill_request("How much would {room_type_id} be for {guests} guests?",
                         [("room_type_id", "id", "RT-0001", {}), ("guests", "number", 1, {})], {}, rng)
    assert "for 1 guest?" in one and not SLIP.search(one), one
    two = P.fill_request("Add {hours} hours.", [("hours", "number", 2, {})], {}, rng)
    assert two == "Add 2 hours."
    assert P.agree('Post a image, 1 categories, 1 boxes: "1 items left"') == \
        'Post an image, 1 category, 1 box: "1 items left"'  # the user's quoted words stay as written
    assert P.agree("a one-off and a user") == "a one-off and a user"
    assert P.agree("a room for at least 1 people, not 11 people") == "a room for at least 1 person, not 11 people"


def test_a_flag_is_said_in_words_never_as_a_question_and_its_answer() -> None:
    rng = random.Random(1)
    for value, said in ((True, "just the unread ones"), (False, "all of them, unread or not")):
        text = P.fill_request("Open {folder} of {mailbox_id}, {unread_only}.",
                              [("folder", "value", "Inbox", {}), ("mailbox_id", "id", "MBX-0001", {}),
                               ("unread_only", "bool", value, {})], {}, rng)
        assert said in text and not SLIP.search(text), text
    flags = {"pay_now": ("I'll pay now.", "I'll pay at the hotel.")}
    text = P.fill_request("Book {room_type_id}. {pay_now}", [("room_type_id", "id", "RT-1", {}),
                                                              ("pay_now", "bool", False, {})], {}, rng, flags=flags)
    assert text.endswith("I'll pay at the hotel."), text
    assert P.mention("starred_only", True, "bool", rng) == "just the starred ones"


def test_every_boolean_a_request_mentions_has_words_for_true_and_false() -> None:
    registry = load_registry()
    problems = [p for name in registry.servers for p in check_intents(registry.server(name), load_intents(name))
                if "needs flags" in p or "not a boolean" in p]
    assert problems == []


def test_an_enum_is_said_in_lower_case_and_none_is_not_said() -> None:
    rng = random.Random(2)
    said = {P.enum_words(v, rng) for v in ("Balanced",) * 20}
    assert said == {"balanced"}
    assert P.enum_words("in_progress", rng) == "in progress" and P.enum_words("USD", rng) == "USD"
    assert P.enum_words("none", rng) == "plain"


def test_a_message_of_an_email_is_the_email() -> None:
    rng = random.Random(3)
    for _ in range(10):
        text = P.fill_request("Get rid of {message_id}.", [("message_id", "result-item", "MSG-0001",
                              {"item": "email", "descr_field": "received_at", "descr": "2026-03-29T02:59:00"})],
                              {"message_id": "message"}, rng)
        assert not SLIP.search(text) and "March 29" in text, text


def test_no_user_turn_of_the_small_run_has_a_template_slip(small_run: tuple[Any, Path]) -> None:
    _, out = small_run
    examples = [json.loads(line) for line in (out / "examples.jsonl").read_text().splitlines()]
    turns = [m["content"] for e in examples for m in e["messages"] if m["role"] == "user"]
    assert turns and [t for t in turns if SLIP.search(t)] == []


def test_a_reply_says_written_and_never_the_my() -> None:
    registry = load_registry()
    review = registry.tool("write_product_review")
    for seed in range(12):
        text = P.describe_result(review, {"review": {"title": "Excellent!", "rating": 4}}, random.Random(seed))
        assert "wrote the" not in text.replace("I wrote the", "") and "is wrote" not in text and "'ve wrote" not in text, text
    mine = registry.tool("list_my_vehicles")
    for seed in range(6):
        text = P.describe_result(mine, {"user_id": "USR-1", "vehicles": [{"nickname": "Sparky", "city": "Milan"}]},
                                 random.Random(seed))
        assert "the my " not in text, text
