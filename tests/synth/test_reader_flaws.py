"""What a reader of the synthesized data still tripped on (issue 28): a booking of a slot the
search did not return, replies repeating one label, motives that do not fit the request, and
the card measures that count each.

    .venv/bin/python -m pytest tests/synth/test_reader_flaws.py -q
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from prove.env.registry import Registry, load_registry
from prove.graph.chains import Edge
from prove.synth import phrasing as P
from prove.synth.intents import check_intents, load_intents
from prove.synth.plan_results import fed_from, find_key
from prove.synth.planner import Attempt, Draft, Mention, Planned, Planner, _one_of_many
from prove.synth.quality import (
    ambiguous_references,
    quality_markdown,
    quality_report,
    repeated_labels,
    self_names,
    turn_summary,
    unfit_motives,
    unoffered_picks,
)

SLOTS = {"city": "Copenhagen", "next_offset": None, "slots": [
    {"center_id": "CTR-0002", "center_name": "Voltara Service Copenhagen", "start": f"2026-05-{d}T{h}"}
    for d in ("20", "21") for h in ("08:00", "10:00", "13:00")]}


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry().subset(["vehicle"])


def _planner(registry: Registry, searched: Planned) -> Planner:
    planner = Planner.__new__(Planner)  # only what _picked_with reads: the registry, the steps, a stream
    planner.reg, planner.rng, planner.by_step = registry, random.Random(0), {0: searched}
    return planner


def _search() -> Planned:
    return Planned(0, "find_vehicle_service_slots",
                   {"city": "Copenhagen", "service_type": "wheel_alignment", "start_date": "2026-05-20"},
                   [Mention("city", "value", "Copenhagen", {}),
                    Mention("service_type", "enum", "wheel_alignment", {"words": "wheel alignment"}),
                    Mention("start_date", "value", "2026-05-20", {})], result=SLOTS)


def _booking(start: str, service: str) -> Draft:
    draft = Draft()
    for m in (Mention("vehicle_id", "id", "VEH-0018", {}), Mention("user_id", "id", "USR-0013", {}),
              Mention("center_id", "result-single", "CTR-0002", {"source_entity": "service center"}),
              Mention("start", "value", start, {}),
              Mention("service_type", "enum", service, {"words": service.replace("_", " ")})):
        draft.add(m)
    return draft


def test_a_booking_takes_a_slot_the_search_returned_and_what_it_searched_for(registry: Registry) -> None:
    planner = _planner(registry, _search())
    at = Attempt(registry.tool("book_vehicle_service"), 1, "book_vehicle_service",
                 {"center_id": Edge(0, 1, "explicit", argument="center_id", field="slots[].center_id")})
    draft = _booking("2026-05-19T13:00", "annual_inspection")
    planner._picked_with(at, draft)
    assert draft.args["start"] in {s["start"] for s in SLOTS["slots"]}
    assert draft.args["service_type"] == "wheel_alignment"
    assert draft.words["service_type"] == "wheel alignment"
    assert {m.param: m.value for m in draft.mentions} == draft.args
    assert draft.args["vehicle_id"] == "VEH-0018" and draft.args["user_id"] == "USR-0013"  # ids stay
    start = next(m for m in draft.mentions if m.param == "start")
    said = P.fill_request("I'll take the {start} slot.", [("start", start.kind, start.value, start.info)],
                          {}, random.Random(0))
    assert said == f"I'll take the {P.say_date(start.value)} slot."  # as the reply showed it


def test_a_slot_the_search_returned_is_kept_and_a_rejected_one_is_not_drawn(registry: Registry) -> None:
    planner = _planner(registry, _search())
    edge = {"center_id": Edge(0, 1, "explicit", argument="center_id", field="slots[].center_id")}
    kept = _booking("2026-05-21T10:00", "wheel_alignment")
    planner._picked_with(Attempt(registry.tool("book_vehicle_service"), 1, "b", edge), kept)
    assert kept.args["start"] == "2026-05-21T10:00"
    at = Attempt(registry.tool("book_vehicle_service"), 1, "b", edge)
    at.lessons.tried["start"] = {repr(s["start"]) for s in SLOTS["slots"][1:]}  # the fork said no to these
    redrawn = _booking("2026-05-19T13:00", "wheel_alignment")
    planner._picked_with(at, redrawn)
    assert redrawn.args["start"] == SLOTS["slots"][0]["start"]


def test_a_read_is_not_a_booking(registry: Registry) -> None:
    planner = _planner(registry, _search())
    draft = Draft()
    draft.add(Mention("start", "value", "2026-05-19T13:00", {}))
    planner._picked_with(Attempt(registry.tool("find_vehicle_service_slots"), 1, "f", {}), draft)
    assert draft.args["start"] == "2026-05-19T13:00"


def _example(start: str, service: str) -> dict[str, Any]:
    search = {"name": "find_vehicle_service_slots",
              "arguments": {"city": "Copenhagen", "service_type": "wheel_alignment", "start_date": "2026-05-20"}}
    book = {"name": "book_vehicle_service",
            "arguments": {"center_id": "CTR-0002", "start": start, "service_type": service,
                          "user_id": "USR-0013", "vehicle_id": "VEH-0018"}}
    return {"turns": [{"calls": [search]}, {"calls": [book]}],
            "messages": [{"role": "tool", "content": json.dumps(SLOTS)},
                         {"role": "tool", "content": json.dumps({"appointment_id": "SVC-0018"})}]}


@pytest.mark.parametrize(("start", "service", "unoffered"), [
    ("2026-05-20T10:00", "wheel_alignment", 0),
    ("2026-05-19T13:00", "wheel_alignment", 1),  # a slot the search did not return
    ("2026-05-20T10:00", "annual_inspection", 1),  # not what the search asked for
])
def test_the_card_counts_bookings_of_what_a_search_did_not_offer(start: str, service: str, unoffered: int) -> None:
    assert unoffered_picks(_example(start, service)) == (1, unoffered)


def test_an_id_a_booking_points_elsewhere_is_no_unoffered_pick() -> None:
    events = {"events": [{"event_id": "EVT-0006", "room_id": "RM-0001", "title": "Sync"}]}
    example = {"turns": [{"calls": [{"name": "list_calendar_events", "arguments": {}}]},
                         {"calls": [{"name": "book_meeting_room",
                                     "arguments": {"event_id": "EVT-0006", "room_id": "RM-0011"}}]}],
               "messages": [{"role": "tool", "content": json.dumps(events)},
                            {"role": "tool", "content": json.dumps({"event_id": "EVT-0006"})}]}
    assert unoffered_picks(example) == (1, 0)


def test_a_reply_listing_objects_of_one_label_writes_the_label_once(registry: Registry) -> None:
    spec = registry.tool("find_vehicle_service_slots")
    text = P.describe_result(spec, SLOTS, random.Random(0))
    assert repeated_labels(text) is None
    label = P.describe_item(SLOTS["slots"][0]).split(" (")[0]
    assert text.count(label) == 1
    for slot in SLOTS["slots"][:5]:  # each shown one still told apart by what differs
        assert P.say_date(slot["start"]) in text


def test_a_reply_listing_distinct_labels_keeps_each_with_its_details(registry: Registry) -> None:
    spec = registry.tool("find_vehicle_service_slots")
    mixed = {"slots": [{**s, "center_id": f"CTR-000{n}", "center_name": f"Center {n}"}
                       for n, s in enumerate(SLOTS["slots"][:3])], "next_offset": None}
    text = P.describe_result(spec, mixed, random.Random(0))
    assert ";" not in text
    assert all(P.say_date(s["start"]) in text for s in mixed["slots"])


@pytest.mark.parametrize(("reply", "label"), [
    ("I found 3 slots: center CTR-0002 (start May 20 at 08:00), center CTR-0002 (start May 20 at 10:00)"
     " and center CTR-0002 (start May 20 at 13:00).", "center CTR-0002"),
    ("I found 3 slots: center CTR-0002 (start May 20 at 08:00; May 20 at 10:00; May 20 at 13:00).", None),
    ("Done: booking BKG-0008 (confirmed). Done: booking BKG-0008 (paid). Here: booking BKG-0008 (open).",
     None),  # three results that each name one booking: no listing repeats itself
])
def test_the_card_finds_replies_that_repeat_a_label(reply: str, label: str | None) -> None:
    assert repeated_labels(reply) == label


def test_a_motive_is_declared_with_the_requests_it_fits(tmp_path: Path) -> None:
    (tmp_path / "vehicle.yaml").write_text(
        'off_tool: []\nmotives:\n  - say: "I want to make sure the car is locked for the night."\n'
        "    fits: [lock_vehicle, get_vehicle_status]\n  - say: \"The car makes a noise.\"\n"
        "    fits: [book_vehicle_service, find_vehicle_service_slots, nope]\n")
    found = load_intents("vehicle", str(tmp_path))
    assert found.motives_for(["lock_vehicle"]) == ("I want to make sure the car is locked for the night.",)
    assert found.motives_for(["find_vehicle_service_slots", "book_vehicle_service"]) == ("The car makes a noise.",)
    assert found.motives_for(["lock_vehicle", "book_vehicle_service"]) == ()  # none fits both
    assert found.motives_for([]) == ()
    problems = check_intents(load_registry().server("vehicle"), found)
    assert any("fits 'nope', which is not a tool of vehicle" in p for p in problems)


def test_a_motive_without_the_requests_it_fits_is_refused(tmp_path: Path) -> None:
    (tmp_path / "vehicle.yaml").write_text('off_tool: []\nmotives:\n  - "I\'m planning a long drive."\n')
    with pytest.raises(ValueError, match=r"motives\[0\] must be a mapping with keys say .* and fits"):
        load_intents("vehicle", str(tmp_path))


def test_every_app_declares_what_its_motives_fit() -> None:
    registry = load_registry()
    for server in registry.servers.values():
        found = load_intents(server.name)
        names = {t.name for t in server.tools}
        assert found.motives and all(found.fits[m] and found.fits[m] <= names for m in found.motives)


def _motive_example(calls: list[str]) -> dict[str, Any]:
    return {"servers": ["vehicle"], "chain": {"tools": calls},
            "messages": [{"role": "user", "content": "Book the slot. I want to make sure the car is locked for the night."}],
            "turns": [{"calls": [{"name": c, "arguments": {}} for c in calls]}]}


def test_the_card_counts_motives_given_with_a_request_they_do_not_fit() -> None:
    assert unfit_motives(_motive_example(["book_vehicle_service"])) == (1, 1)
    assert unfit_motives(_motive_example(["lock_vehicle"])) == (1, 0)
    assert unfit_motives({**_motive_example(["lock_vehicle"]), "messages": [{"role": "user", "content": "Lock it."}]}) == (0, 0)


LEADS = {"leads": [{"lead_id": f"LEAD-00{20 + n}", "name": name, "status": status, "company": "Vertex"}
                   for n, (name, status) in enumerate([("Ines Bauer", "contacted"), ("Greta Costa", "qualified"),
                                                       ("Elena Yilmaz", "contacted"), ("Ines Moreau", "new")])],
         "next_offset": None}


def test_one_lead_left_of_four_is_picked_out_by_what_tells_it_apart() -> None:
    shown = find_key(LEADS, "lead_id")
    left = [shown[2]]  # the errors and the world left one: fed_from calls it "this lead"
    fed = fed_from(left, "lead_id", random.Random(0))
    assert fed.kind == "result-single"
    told = _one_of_many(fed, left[0], shown, {"name": "name"})
    assert (told.kind, told.value, told.info["descr"]) == ("result-item", "LEAD-0022", "Elena Yilmaz")
    assert "Elena Yilmaz" in P.mention("lead_id", told.value, told.kind, random.Random(0), **told.info)
    nameless = {"leads": [{"lead_id": x["lead_id"], "company": "Vertex"} for x in LEADS["leads"]]}
    shown = find_key(nameless, "lead_id")
    assert _one_of_many(fed_from([shown[0]], "lead_id", random.Random(0)), shown[0], shown, {}).kind \
        == "result-ordinal"  # nothing tells it apart but being the first


def _lead_example(said: str, lead: str, acted: str | None = None) -> dict[str, Any]:
    calls = [{"name": "list_leads", "arguments": {}}]
    if acted:
        calls.append({"name": "convert_lead", "arguments": {"lead_id": acted}})
    msgs = [{"role": "user", "content": "Show me my leads" + (", and convert Greta Costa." if acted else ".")},
            {"role": "tool", "content": json.dumps(LEADS)}]
    if acted:
        msgs.append({"role": "tool", "content": json.dumps({"lead_id": acted, "status": "converted"})})
    msgs += [{"role": "user", "content": said},
             {"role": "tool", "content": json.dumps({"lead_id": lead, "status": "qualified"})}]
    return {"turns": [{"calls": calls}, {"calls": [{"name": "qualify_lead", "arguments": {"lead_id": lead}}]}],
            "messages": msgs}


@pytest.mark.parametrize(("said", "lead", "acted", "counts"), [
    ("I spoke to this lead; they're qualified.", "LEAD-0020", None, (1, 1)),
    ("I spoke to Ines Bauer; she's qualified.", "LEAD-0020", None, (1, 0)),
    ("I spoke to the first one; qualified.", "LEAD-0020", None, (1, 0)),
    ("I spoke to the new one; qualified.", "LEAD-0023", None, (1, 0)),  # only Ines Moreau is new
    ("I spoke to this lead; they're qualified.", "LEAD-0021", "LEAD-0021", (1, 0)),  # in focus
    ("I spoke to this lead; they're qualified.", "LEAD-0020", "LEAD-0021", (2, 1)),  # another one
])
def test_the_card_counts_references_into_a_listing_that_do_not_say_which(
        said: str, lead: str, acted: str | None, counts: tuple[int, int]) -> None:
    assert ambiguous_references(_lead_example(said, lead, acted)) == counts


def test_the_name_a_user_gave_on_one_app_is_the_name_looked_up_on_another() -> None:
    registry = load_registry().subset(["messaging", "socialfeed"])
    said = Planned(0, "list_chat_conversations", {"user_id": "USR-0002"},
                   [Mention("user_id", "named", "USR-0002",
                            {"descr_field": "display_name", "descr": "Noah Garcia", "lookup": "search_chat_users"})])
    planner = _planner(registry, said)
    assert planner._names_elsewhere("socialfeed") == {"Noah Garcia"}
    assert planner._names_elsewhere("messaging") == frozenset()  # on its own app it is no constraint
    planner.by_step[0] = Planned(0, "list_chat_conversations", {"user_id": "USR-0002"},
                                 [Mention("user_id", "named", "USR-0002",
                                          {"descr_field": "handle", "descr": "noah_garcia"})])
    assert planner._names_elsewhere("socialfeed") == frozenset()  # a handle is not a name


def test_the_card_reports_every_new_measure_beside_its_count() -> None:
    one = _lead_example("I'm Noah Garcia. I spoke to this lead.", "LEAD-0020")
    one["kind"], one["servers"] = "multi_turn", ["crm"]
    two = {**one, "messages": [*one["messages"], {"role": "user", "content": "This is Hiro Varga."}]}
    assert self_names(two) == {"Noah Garcia", "Hiro Varga"}
    report = quality_report([turn_summary(one), turn_summary(two)])
    assert report["two_names_share"] == 0.5 and report["named_self"] == 2
    assert report["vague_reference_share"] == 1.0 and report["listed_references"] == 2
    assert report["repeated_label_share"] is None and report["unoffered_pick_share"] is None
    table = "\n".join(quality_markdown(report, None))
    assert "50.0% of 2" in table and "100.0% of 2" in table


@pytest.mark.parametrize(("brief", "polite"), [(True, False), (False, True), (False, False)])
def test_a_persona_opens_a_request_its_own_way_and_keeps_it_grammatical(brief: bool, polite: bool) -> None:
    persona = P.Persona(None, brief=brief, polite=polite, typos=False)
    rng = random.Random(0)
    thing = {P.vary_opener("Show me the bookings for May. Thanks.", persona, rng) for _ in range(60)}
    assert len(thing) >= 2 and "Show me the bookings for May. Thanks." in thing  # kept now and then
    for said in thing:
        assert said.endswith(" Thanks.") and "the bookings for May" in said
        assert said.startswith(P._ASKING) == ("May? Thanks." in said)  # a question asks
    clause = {P.vary_opener("Show me how much I spent.", persona, rng) for _ in range(60)}
    assert all(t.endswith("how much I spent?" if t.startswith(P._ASKING) else "how much I spent.") for t in clause)
    assert not any(t.startswith(("Pull up", "Bring up", "Get me", "List", "Look up", "Can I get")) for t in clause)  # "Pull up how" is no English
    assert P.vary_opener("How much did I spend?", persona, rng) == "How much did I spend?"


def test_openers_vary_over_many_requests() -> None:
    rng = random.Random(1)
    people = [P.draw_persona(rng) for _ in range(200)]
    said = [P.speak(p, "Show me the open tickets.", rng, first=False) for p in people]
    share = sum(s.startswith("Show me") for s in said) / len(said)
    assert 0.2 < share < 0.6  # one opening in every request was 100%


def test_a_thing_picked_out_by_its_owner_is_the_owners() -> None:
    rng = random.Random(0)
    assert {P.pick_out("mailbox", "owner", "Amara Haddad", rng) for _ in range(10)} == {"Amara Haddad's mailbox"}
    assert "the Amara Haddad one" not in {P.pick_out("mailbox", "display_name", "Amara Haddad", rng) for _ in range(20)}
    assert P.pick_out("user", "display_name", "Amara Haddad", rng) != "Amara Haddad's user"  # a person is themself


def test_the_openai_teachers_motive_fits_the_first_turns_requests() -> None:
    """The openai teacher drew its one reason from all of an app's motives, not from those declared
    for the requests of the turn it is given with (the programmatic teacher's rule)."""
    import asyncio
    from types import SimpleNamespace

    from prove.synth.intents import intents_of
    from prove.synth.machine import TurnSpec
    from prove.synth.openai_teacher import OpenAITeacher

    teacher = OpenAITeacher("http://127.0.0.1:9/v1", "unused", client=object())
    found = intents_of("vehicle")
    seen = set()
    for i in range(40):
        for tools, steps, kind in (["lock_vehicle"], (0,), "act"), (["book_vehicle_service"], (0,), "act"), (
                ["lock_vehicle", "set_valet_mode"], (0, 1), "act"), (["lock_vehicle"], (), "abstain"):
            script = SimpleNamespace(example_id=f"prove-multi_turn-{i:06d}", seed=7, servers=["vehicle"],
                                     chain=SimpleNamespace(tools=tools), turns=[TurnSpec(kind=kind, steps=steps)])
            convo = SimpleNamespace(script=script, scratch={})
            asyncio.run(teacher.prepare(convo))
            fitting = found.motives_for([tools[s] for s in steps])
            assert convo.scratch["motive"] in fitting or (not fitting and convo.scratch["motive"] is None)
            seen.add(convo.scratch["motive"])
    assert len(seen - {None}) > 2  # drawn among the fitting ones, not always the same


def test_every_raw_id_a_user_turn_gives_has_the_kind_its_tool_declares(small_run: tuple[Any, Path]) -> None:
    """The card's raw ids by kind had a '?' row: the ids an off-topic request (an abstention) says,
    which no call passes. The request's record keeps them with the kinds its tool declares, so
    every raw id in a user turn has one."""
    from prove.synth.quality import STYLE_MARKS, id_kinds
    from prove.synth.sampling import param_kind

    _, out = small_run
    examples = [json.loads(x) for x in (out / "examples.jsonl").read_text().splitlines()]
    registry = load_registry()  # every server the run's examples use
    said = 0
    for ex in examples:
        kinds = id_kinds(ex, registry)
        for m in ex["messages"]:
            if m["role"] == "user":
                for raw in STYLE_MARKS["raw_id"].finditer(m.get("content") or ""):
                    said += 1
                    assert raw.group(0) in kinds, (ex["id"], raw.group(0), m["content"])
        for p in ex["perturbations"]:
            if p.get("ids"):
                spec = registry.tool(p["tool"])
                declared = {param_kind(spec, q) for q in spec.input_schema.get("properties", {})}
                assert p["type"] == "irrelevant_query" and set(p["ids"].values()) <= declared, p
    assert said
    # the abstention of the smoke run whose card showed '?': "Move BKG-0011 to FLT-0008." (the
    # flights tool change_booking_flight, not offered; no call passes either id)
    from prove.synth.machine import _with_off_topic_ids

    topic = {"server": "flights", "source": "tool", "tool": "change_booking_flight", "type": "irrelevant_query"}
    example = {"turns": [{"calls": [], "depends_on": []}], "messages": [
        {"role": "user", "content": "Move BKG-0011 to FLT-0008."}], "perturbations": [topic]}
    assert id_kinds(example, registry) == {}
    example["perturbations"] = _with_off_topic_ids([topic], {"FLT-0008": "flight", "BKG-0011": "booking"})
    assert id_kinds(example, registry) == {"BKG-0011": "booking", "FLT-0008": "flight"}
    assert _with_off_topic_ids([topic], {}) == [topic]
