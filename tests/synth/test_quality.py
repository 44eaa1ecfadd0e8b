"""The data-quality measures (prove.synth.quality) count what they say, on PROVE data and BFCL's.

    .venv/bin/python -m pytest tests/synth/test_quality.py -q
"""

from __future__ import annotations

import json
from pathlib import Path

from prove.env import Hub, load_registry
from prove.synth.evidence import redundant_reads
from prove.synth.quality import (
    Linker,
    acknowledges,
    bfcl_reference,
    lexical_variety,
    opener,
    quality_report,
    style_marks,
    turn_summary,
    unshown_references,
)

REG = load_registry()


def _example(calls: list[dict], seed: int = 5, servers: tuple[str, ...] = ("hotels",)) -> dict:
    return {"kind": "multi_turn", "seed": seed, "servers": list(servers), "tools": [],
            "messages": [{"role": "user", "content": "x"}], "turns": [{"calls": calls, "depends_on": []}]}


def test_ids_are_coherent_only_when_one_record_links_them() -> None:
    hub = Hub(REG.subset(["hotels"]))
    hub.open("q", 5)
    state = hub.state("q", "hotels")
    res = next(iter(state["reservations"].values()))
    stranger = next(g for g in state["guests"] if g != res["guest_id"])
    linker = Linker(REG)
    own = [{"name": "get_hotel_guest", "arguments": {"guest_id": res["guest_id"]}},
           {"name": "get_hotel_reservation", "arguments": {"reservation_id": res["reservation_id"]}}]
    assert linker.coherent(_example(own)) is True
    other = [own[0] | {"arguments": {"guest_id": stranger}}, own[1]]
    assert linker.coherent(_example(other)) is False
    assert linker.coherent(_example(own[:1])) is None  # one id says nothing


def test_copied_description_turns_and_openers_are_counted() -> None:
    example = {"kind": "abstention", "messages": [
        {"role": "user", "content": "Great. Next, get the current and available balance of an account please"},
        {"role": "user", "content": "Great. Next, what do I have left on ACC-0003?"}],
        "tools": [{"type": "function", "function": {"name": "get_balance", "description":
                   "Get the current and available balance of an account and its transfer limit left today."}}]}
    summary = turn_summary(example)
    assert summary["copied"] == [True, False] and summary["coherent"] is None
    report = quality_report([summary])
    assert report["description_overlap"] == 0.5 and report["top10_opener_share"] == 1.0
    assert report["top_openers"][0] == ["great next", 2] and opener("Hi, there you") == "hi there"


def test_lexical_variety_reads_a_fixed_number_of_words_in_a_seeded_order() -> None:
    texts = [f"alpha beta {i}" for i in range(100)]
    a, b = lexical_variety(texts, words=30, seed=1), lexical_variety(texts, words=30, seed=1)
    assert a == b and a["words"] == 30
    assert lexical_variety(["a a a a"], words=4)["distinct_1"] == 0.25
    assert lexical_variety(["a b a b"], words=4)["distinct_2"] == round(2 / 3, 4)
    # 4-grams stay within a turn: "a b c d" twice is one 4-gram over 8 words
    assert lexical_variety(["a b c d", "a b c d"], words=8)["distinct_4_per_100"] == 12.5
    assert lexical_variety(["a b c d e"], words=5)["distinct_4_per_100"] == 40.0


def test_style_marks_count_what_a_reader_trips_on() -> None:
    texts = ["Move 20 from ACC-0001 to savings, please.",
             "Review for the order whose zone is 'downtown'.",
             "Cancel the booking from before.",
             "I need a room in Lisbon because my flight lands late.",
             "Book it."]
    marks = style_marks(texts)
    assert marks == {"raw_id": 0.2, "field_phrase": 0.2, "back_reference": 0.2, "polite": 0.2, "broken_text": 0.0,
                     "template_slip": 0.0, "motive": 0.2}
    broken = ["Please What's holding up my task?.", "Go ahead and Open CNV-0003 and tell me who has it muted..",
              "Then What's the balance?", "Wait... what's the balance? Then check the other one."]
    assert [bool(style_marks([t])["broken_text"]) for t in broken] == [True, True, True, False]
    assert style_marks(["whose delivered on is '2026-04-12'"])["field_phrase"] == 1.0
    assert acknowledges("Great. Next, cancel it") and acknowledges("thanks! and the other one")
    assert not acknowledges("Great Barrier Reef trips, please") and not acknowledges("Okayama hotels")


def test_a_reference_is_unshown_when_only_a_tool_result_held_its_value() -> None:
    messages = [{"role": "user", "content": "Find my orders from 'Pizza Roma'."},  # a first turn: not counted
                {"role": "assistant", "content": "", "tool_calls": []},
                {"role": "tool", "content": '{"orders": [{"zone": "downtown", "restaurant": "Pizza Roma", '
                                            '"note": "Leave it at the door"}], "total": 1}'},
                {"role": "assistant", "content": "You have one order from Pizza Roma, 31.50 in total."},
                {"role": "user", "content": "Review the one whose zone is 'downtown' and the 'Pizza Roma' one."},
                {"role": "user", "content": "I'm Ines Garcia. What's the 'Leave it at the door' order? "
                                            "Send \"see you soon\" to 'Pizza Roma'."}]
    # 'downtown' and 'Leave it at the door' only a tool result held; 'Pizza Roma' the user said first
    # (and a reply showed); "I'm ... What's" is two contractions; "see you soon" is the user's own text
    assert unshown_references(messages) == (2, 2)
    shown = [*messages[:3], {"role": "assistant", "content": "One order, downtown."}, *messages[4:5]]
    assert unshown_references(shown) == (1, 0)
    report = quality_report([turn_summary({"kind": "multi_turn", "messages": messages[:5], "tools": []})])
    assert report["result_references"] == 1 and report["unshown_result_share"] == 1.0
    assert report["followup_turns"] == 1 and report["acknowledgement_opener_share"] == 0.0
    assert report["words_per_turn"] == 9.0
    assert report["identity_restated_share"] == 0.0


def test_a_user_who_says_who_they_are_twice_is_counted_once_per_conversation() -> None:
    def convo(*texts: str) -> dict:
        return {"kind": "multi_turn", "tools": [], "messages": [{"role": "user", "content": t} for t in texts]}

    summaries = [turn_summary(convo("I'm the user whose emoji is 'sad'.", "After that, I'm the user from before.")),
                 turn_summary(convo("I'm signed in as Ana. Show my trips.", "Cancel the Lisbon one.")),
                 turn_summary({**convo("Who am I? I'm still the same employee.", "I'm still the same."), "kind": "abstention"})]
    assert [s.get("identity_restated") for s in summaries] == [True, False, None]
    assert quality_report(summaries)["identity_restated_share"] == 0.5


def test_bfcl_reference_reads_the_installed_questions(tmp_path: Path) -> None:
    ref = bfcl_reference()
    assert ref is not None and ref["user_turns"] > 1000 and ref["entity_coherence"] is None
    (tmp_path / "multi_turn_func_doc").mkdir()
    (tmp_path / "multi_turn_func_doc" / "math_api.json").write_text(
        json.dumps({"name": "add", "description": "Add two numbers together and return the sum."}) + "\n")
    (tmp_path / "BFCL_v4_multi_turn_base.json").write_text(json.dumps(
        {"involved_classes": ["MathAPI"], "question": [[{"role": "user", "content":
         "please add two numbers together and return the sum"}], [{"role": "user", "content": "thanks"}]]}) + "\n")
    tiny = bfcl_reference(tmp_path)
    assert tiny is not None and tiny["user_turns"] == 2 and tiny["description_overlap"] == 0.5


def test_the_dataset_card_reports_quality_beside_bfcl(small_run) -> None:
    result, out = small_run
    card = json.loads((out / "card.json").read_text())
    assert card["quality"]["user_turns"] > 0 and card["quality_reference"]["user_turns"] > 1000
    assert card["quality_reference"]["unshown_result_share"] is None  # BFCL shows no replies
    md = (out / "card.md").read_text()
    assert "BFCL v4 multi-turn" in md and "4-grams per 100 words" in md and "raw id" in md


def test_written_requests_replace_description_wording(small_run) -> None:
    """Every server has intents, so no user turn repeats an offered tool's description and the
    turns do not share a handful of openers (the old phrasing: 30% and 67% on a 60-example run)."""
    _, out = small_run
    quality = json.loads((out / "card.json").read_text())["quality"]
    assert quality["description_overlap"] == 0.0
    assert quality["top10_opener_share"] < 0.5


def test_a_written_request_is_filled_with_mentions() -> None:
    import random

    from prove.synth.phrasing import fill_request

    rng = random.Random(0)
    entities = {"from_account_id": "account", "to_account_id": "account", "amount": None, "memo": None}
    mentions = [("from_account_id", "id", "ACC-0001", {}), ("amount", "number", 25.0, {}),
                ("to_account_id", "result-single", "ACC-0002", {}), ("memo", "text", "rent", {})]
    text = fill_request("send {amount} from {from_account_id} to {to_account_id}", mentions, entities, rng)
    assert text.startswith("Send 25 from ") and "ACC-0001" in text and "ACC-0002" not in text
    assert any(w in text for w in ("that account", "this account", "the same account"))
    assert text.endswith('"rent".')  # a mention the request has no place for is still written
    hidden = fill_request("send {amount} from {from_account_id}", mentions[:2], entities, rng,
                          withheld="from_account_id")
    assert hidden == "Send 25 from my account" and "ACC-0001" not in hidden


def test_the_user_says_who_they_are_like_a_person() -> None:
    """"I'm {customer_id}" reads "my customer ID is SHC-0019" or "I'm customer SHC-0019", a named
    customer "I'm Beatriz Haddad", a withheld one "I'm a customer here"; never "I'm SHC-0019"."""
    import random

    from prove.synth.phrasing import fill_request

    entities = {"customer_id": "customer", "sku": "product"}
    template = "Take {sku} out of my cart. I'm {customer_id}."
    sku = ("sku", "id", "SKU-0001", {})
    for seed in range(6):
        text = fill_request(template, [sku, ("customer_id", "id", "SHC-0019", {})], entities,
                            random.Random(seed))
        assert "SHC-0019" in text and "I'm SHC-0019" not in text
        assert text.endswith(("My customer ID is SHC-0019.", "I'm customer SHC-0019."))
    named = ("customer_id", "named", "SHC-0019", {"descr_field": "name", "descr": "Beatriz Haddad",
                                                   "descr_how": "alone"})
    assert fill_request(template, [sku, named], entities, random.Random(0)).endswith("I'm Beatriz Haddad.")
    hidden = fill_request(template, [sku], entities, random.Random(0), withheld="customer_id")
    assert hidden.endswith("I'm a customer here.")


def test_a_written_request_beside_a_step_phrase_is_joined_as_a_sentence_not_framed() -> None:
    import random

    from prove.synth.phrasing import render_turn

    marks = []
    for seed in range(40):
        text = render_turn(["What's holding up my task?", "open CNV-0003"], random.Random(seed), follow_up=seed % 2 == 1)
        assert "What's holding up my task?" in text or "what's holding up my task?" in text
        assert "CNV-0003" in text
        marks.append(style_marks([text])["broken_text"])
    assert marks == [0.0] * 40
    plain = render_turn(["open CNV-0003", "list my chats"], random.Random(0), follow_up=False)
    assert plain.split()[0][0].isupper() and "CNV-0003" in plain and "list my chats" in plain  # phrases take frames


def test_a_read_whose_result_the_conversation_already_showed_is_redundant() -> None:
    """Live results: a get of an account the listing showed is redundant; the same get after a
    transfer changed its balance is not, nor is the transfer (a write)."""
    hub = Hub(load_registry().subset(["banking"]))
    hub.open("redundant", 7)

    def step(name: str, arguments: dict) -> tuple[dict, list[dict]]:
        result = hub.call(name, arguments, episode_id="redundant")
        assert result["ok"], result
        return {"name": name, "arguments": arguments}, [
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name}}]},
            {"role": "tool", "content": json.dumps(result["result"])}]

    listed = step("list_accounts", {})
    account = json.loads(listed[1][1]["content"])["accounts"][0]
    first = [listed, step("get_bank_account", {"account_id": account["account_id"]})]
    moved = step("transfer_funds", {"from_account_id": account["account_id"], "to_account_id": "ACC-0002",
                                    "amount": 1.0})
    second = [moved, step("get_bank_account", {"account_id": account["account_id"]})]
    hub.close("redundant")
    example = {"kind": "multi_turn", "seed": 7, "servers": ["banking"], "tools": [],
               "turns": [{"calls": [c for c, _ in first]}, {"calls": [c for c, _ in second]}],
               "messages": [{"role": "user", "content": "Show my first account."},
                            *(m for _, ms in first for m in ms),
                            {"role": "user", "content": "Move a dollar from it and show it again."},
                            *(m for _, ms in second for m in ms)]}
    assert redundant_reads(example, REG) == [
        {"turn": 0, "call": 1, "name": "get_bank_account", "shown_in": 2}]
    report = quality_report([turn_summary(example, Linker(REG))])
    assert report["ground_truth_calls"] == 4 and report["redundant_read_share"] == 0.25
