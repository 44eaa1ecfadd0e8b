"""Calendar server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.calendar import SERVER
from prove_servers.calendar.state import (
    Attendee,
    Calendar,
    CalendarState,
    Event,
    MeetingRoom,
    Person,
    Reminder,
    initial_state,
)

ADA, BO, CY, DI = (f"{n}@northwind.example" for n in ("ada.chen", "bo.silva", "cy.okafor", "di.rossi"))


def _event(eid: str, cal: str, title: str, start: str, end: str, organizer: str,
           attendees: dict[str, str], **extra) -> Event:
    fields = dict(description="", location="Video call", visibility="default", recurrence="none",
                  status="confirmed", updated_at="2026-03-01T09:00")
    fields.update(extra)
    return Event(event_id=eid, calendar_id=cal, title=title, start=start, end=end, organizer_email=organizer,
                 attendees=[Attendee(email=e, response=r) for e, r in attendees.items()], **fields)


def tiny() -> CalendarState:
    s = CalendarState(now="2026-03-16T09:00")  # Monday
    for i, (name, mail, dept) in enumerate((("Ada Chen", ADA, "engineering"), ("Bo Silva", BO, "design"),
                                            ("Cy Okafor", CY, "engineering"), ("Di Rossi", DI, "sales")), 1):
        s.people[f"PER-000{i}"] = Person(person_id=f"PER-000{i}", name=name, email=mail, department=dept,
                                         title="Staff Engineer" if mail == CY else "Manager",
                                         timezone="Europe/Berlin", office="Berlin")
    for cid, mail in (("CAL-0001", ADA), ("CAL-0002", BO), ("CAL-0004", DI)):
        s.calendars[cid] = Calendar(calendar_id=cid, name=mail, kind="personal", owner_email=mail,
                                    member_emails=[mail], description="personal")
    s.calendars["CAL-0003"] = Calendar(calendar_id="CAL-0003", name="Engineering team", kind="team",
                                       owner_email=ADA, member_emails=[ADA, CY], description="team")
    s.rooms["RM-0001"] = MeetingRoom(room_id="RM-0001", name="Aurora", building="HQ North", floor=2,
                                     capacity=2, equipment=["whiteboard"])
    s.rooms["RM-0002"] = MeetingRoom(room_id="RM-0002", name="Birch", building="HQ South", floor=1,
                                     capacity=8, equipment=["projector", "video_conferencing"])
    for ev in (
        _event("EVT-0001", "CAL-0003", "Eng weekly sync", "2026-03-02T14:00", "2026-03-02T14:45", ADA,
               {CY: "accepted"}, recurrence="weekly", room_id="RM-0002", location="Birch, HQ South"),
        _event("EVT-0002", "CAL-0002", "Design critique", "2026-03-17T10:00", "2026-03-17T11:00", BO,
               {ADA: "accepted"}, room_id="RM-0001", location="Aurora, HQ North"),
        _event("EVT-0003", "CAL-0001", "Old retro", "2026-03-10T10:00", "2026-03-10T11:00", ADA,
               {BO: "accepted"}),
        _event("EVT-0004", "CAL-0001", "Team lunch", "2026-03-18T12:00", "2026-03-18T13:00", ADA,
               {BO: "needs_action"}, status="cancelled"),
        _event("EVT-0005", "CAL-0004", "Pipeline review", "2026-03-18T15:00", "2026-03-18T16:00", DI,
               {ADA: "tentative", CY: "needs_action"}, visibility="private"),
        _event("EVT-0006", "CAL-0003", "Vendor call", "2026-03-17T10:30", "2026-03-17T11:30", CY, {},
               room_id="RM-0002", location="Birch, HQ South"),
    ):
        s.events[ev.event_id] = ev
    s.reminders["REM-0001"] = Reminder(reminder_id="REM-0001", event_id="EVT-0002", person_email=BO,
                                       minutes_before=15, method="popup")
    return s


hub = hub_fixture(SERVER, tiny)


def ids(result: dict) -> list[str]:
    return [e["event_id"] for e in result["events"]]


def test_seeded_world_is_deterministic_and_consistent() -> None:
    a, b = initial_state(7), initial_state(7)
    assert a == b and a != initial_state(8)
    assert len(a.people) >= 28 and len(a.rooms) == 12 and len(a.events) >= 60
    assert not a.counters and a.model_copy(deep=True).new_id("EVT") == f"EVT-{len(a.events) + 1:04d}"
    assert a.model_copy(deep=True).new_id("REM") == f"REM-{len(a.reminders) + 1:04d}"
    for ev in a.events.values():
        assert ev.organizer_email in a.calendars[ev.calendar_id].member_emails
        assert ev.room_id is None or a.rooms[ev.room_id].capacity >= 1 + len(ev.attendees)


def test_directory(hub: Hub) -> None:
    assert [p["email"] for p in ok(hub, "search_employee_directory", query="ada")["people"]] == [ADA]
    assert ok(hub, "search_employee_directory", query="staff engineer")["people"][0]["email"] == CY
    assert ok(hub, "search_employee_directory", department="engineering")["total"] == 2
    page = ok(hub, "search_employee_directory", limit=3)
    assert len(page["people"]) == 3 and page["next_offset"] == 3
    fails(hub, "search_employee_directory", "department", "'engineering'", department="robotics")


def test_calendars(hub: Hub) -> None:
    res = ok(hub, "list_calendars", member_email=ADA)
    assert [c["calendar_id"] for c in res["calendars"]] == ["CAL-0001", "CAL-0003"]
    assert ok(hub, "list_calendars", kind="team")["total"] == 1
    fails(hub, "list_calendars", "unknown person email 'ada.chen@northwind.exampl'", "member_email",
          f"did you mean {ADA}", member_email="ada.chen@northwind.exampl")


def test_list_calendar_events(hub: Hub) -> None:
    week = ok(hub, "list_calendar_events")  # default: today and the next 6 days
    assert ids(week) == ["EVT-0001", "EVT-0002", "EVT-0006", "EVT-0005"]
    assert week["events"][0]["occurrence_start"] == "2026-03-16T14:00"
    assert "EVT-0004" in ids(ok(hub, "list_calendar_events", include_cancelled=True))
    series = ok(hub, "list_calendar_events", start_date="2026-03-02", end_date="2026-03-29", calendar_id="CAL-0003")
    weekly = [e["occurrence_start"] for e in series["events"] if e["event_id"] == "EVT-0001"]
    assert weekly == ["2026-03-02T14:00", "2026-03-09T14:00", "2026-03-16T14:00", "2026-03-23T14:00"]
    bo = ok(hub, "list_calendar_events", start_date="2026-03-01", end_date="2026-03-22", attendee_email=BO)
    assert ids(bo) == ["EVT-0003", "EVT-0002"]
    page = ok(hub, "list_calendar_events", limit=2)
    assert ids(page) == ["EVT-0001", "EVT-0002"] and page["next_offset"] == 2 and page["total"] == 4
    fails(hub, "list_calendar_events", "must not be before start_date", start_date="2026-03-20", end_date="2026-03-19")
    fails(hub, "list_calendar_events", "start_date must be a date YYYY-MM-DD", start_date="next week")
    fails(hub, "list_calendar_events", "end_date must be a date YYYY-MM-DD between 2000 and 2100", end_date="9999-12-31")
    fails(hub, "list_calendar_events", "at most 92 days", start_date="2026-01-01", end_date="2026-06-30")
    fails(hub, "list_calendar_events", "calendar 'CAL-0009' not found", "CAL-0003", calendar_id="CAL-0009")


def test_search_and_get(hub: Hub) -> None:
    assert ids(ok(hub, "search_calendar_events", query="PIPELINE")) == ["EVT-0005"]
    mine = ok(hub, "search_calendar_events", organizer_email=ADA)
    assert ids(mine) == ["EVT-0003", "EVT-0001"]  # the weekly series shows its next occurrence
    assert mine["events"][1]["occurrence_start"] == "2026-03-16T14:00"
    assert "EVT-0004" in ids(ok(hub, "search_calendar_events", organizer_email=ADA, include_cancelled=True))
    fails(hub, "search_calendar_events", "unknown person email", organizer_email="nobody@northwind.example")
    got = ok(hub, "get_calendar_event", event_id="EVT-0002")
    assert got["room"]["name"] == "Aurora" and got["event"]["attendees"] == [{"email": ADA, "response": "accepted"}]
    assert [r["reminder_id"] for r in got["reminders"]] == ["REM-0001"]
    fails(hub, "get_calendar_event", "event 'EVT-0099' not found", "EVT-0001", event_id="EVT-0099")


def test_pending_invitations(hub: Hub) -> None:
    assert ids(ok(hub, "list_pending_event_invitations", attendee_email=CY)) == ["EVT-0005"]
    assert ok(hub, "list_pending_event_invitations", attendee_email=BO)["total"] == 0  # EVT-0004 is cancelled
    fails(hub, "list_pending_event_invitations", "unknown person email 'x@y.z'", attendee_email="x@y.z")


def test_find_meeting_times(hub: Hub) -> None:
    res = ok(hub, "find_meeting_times", attendee_emails=[ADA, CY], date="2026-03-16", duration_minutes=60)
    assert res["slots"] == [{"start": "2026-03-16T09:00", "end": "2026-03-16T14:00"},
                            {"start": "2026-03-16T14:45", "end": "2026-03-16T17:00"}]
    # ADA's tentative EVT-0005 blocks 15-16; her cancelled lunch does not; CY's Vendor call is on the 17th.
    res = ok(hub, "find_meeting_times", attendee_emails=[ADA], date="2026-03-18", earliest_hour=11, latest_hour=18)
    assert [(s["start"][11:], s["end"][11:]) for s in res["slots"]] == [("11:00", "15:00"), ("16:00", "18:00")]
    res = ok(hub, "find_meeting_times", attendee_emails=[BO, CY], date="2026-03-17", duration_minutes=120,
             earliest_hour=9, latest_hour=13)
    assert res["slots"] == []  # only 09:00-10:00 and 11:30-13:00 are free
    fails(hub, "find_meeting_times", "already past", attendee_emails=[ADA], date="2026-03-13")
    fails(hub, "find_meeting_times", "unknown person email 'zed@northwind.example'", "attendee_emails",
          attendee_emails=[ADA, "zed@northwind.example"], date="2026-03-17")
    fails(hub, "find_meeting_times", "latest_hour (9) must be after earliest_hour (10)",
          attendee_emails=[ADA], date="2026-03-17", earliest_hour=10, latest_hour=9)
    fails(hub, "find_meeting_times", "attendee_emails", attendee_emails=[], date="2026-03-17")


def test_find_meeting_times_pages(hub: Hub) -> None:
    args = dict(attendee_emails=[BO, CY], date="2026-03-17", duration_minutes=30, earliest_hour=9, latest_hour=13)
    every = ok(hub, "find_meeting_times", **args)
    assert (every["total"], every["next_offset"], len(every["slots"])) == (2, None, 2)
    first = ok(hub, "find_meeting_times", **args, limit=1)
    assert (first["total"], first["next_offset"]) == (2, 1)
    second = ok(hub, "find_meeting_times", **args, offset=first["next_offset"], limit=1)
    assert (second["total"], second["next_offset"]) == (2, None)
    assert first["slots"] + second["slots"] == every["slots"]
    assert [s["start"][11:] for s in every["slots"]] == ["09:00", "11:30"]


def test_rooms(hub: Hub) -> None:
    def rooms(**args) -> list[str]:
        return [r["room_id"] for r in ok(hub, "list_meeting_rooms", **args)["rooms"]]

    assert rooms(building="HQ North") == ["RM-0001"]
    assert rooms(min_capacity=4) == rooms(equipment="projector") == ["RM-0002"]
    assert rooms(free_from="2026-03-23T14:00", free_until="2026-03-23T15:00") == ["RM-0001"]  # weekly sync
    assert rooms(free_from="2026-03-17T10:45", free_until="2026-03-17T11:15") == []
    fails(hub, "list_meeting_rooms", "unknown building 'HQ East'", "HQ North, HQ South", building="HQ East")
    fails(hub, "list_meeting_rooms", "give both free_from and free_until", free_from="2026-03-17T10:00")
    fails(hub, "list_meeting_rooms", "free_until (2026-03-17T09:00) must be after",
          free_from="2026-03-17T10:00", free_until="2026-03-17T09:00")
    fails(hub, "list_meeting_rooms", "at most 24 hours", free_from="2026-03-17T10:00", free_until="2026-04-17T10:00")
    fails(hub, "list_meeting_rooms", "equipment", "'projector'", equipment="jacuzzi")
    sched = ok(hub, "get_meeting_room_schedule", room_id="RM-0002", date="2026-03-17")
    assert [(b["event_id"], b["start"]) for b in sched["bookings"]] == [("EVT-0006", "2026-03-17T10:30")]
    assert ok(hub, "get_meeting_room_schedule", room_id="RM-0002", date="2026-03-30")["bookings"][0]["title"] == "Eng weekly sync"
    fails(hub, "get_meeting_room_schedule", "meeting room 'RM-0003' not found", "RM-0001", room_id="RM-0003", date="2026-03-17")
    fails(hub, "get_meeting_room_schedule", "date must be a date YYYY-MM-DD", room_id="RM-0001", date="17/03/2026")


def test_create_event_is_visible_everywhere(hub: Hub) -> None:
    ev = ok(hub, "create_calendar_event", calendar_id="CAL-0003", organizer_email=ADA, title="Roadmap",
            start="2026-03-17T13:00", end="2026-03-17T14:00", attendee_emails=[CY, BO], room_id="RM-0002")
    assert ev["event_id"] == "EVT-0007" and ev["location"] == "Birch, HQ South"
    assert [a["response"] for a in ev["attendees"]] == ["needs_action", "needs_action"]
    assert ev["updated_at"] == "2026-03-16T09:01"
    assert "EVT-0007" in ids(ok(hub, "list_calendar_events", calendar_id="CAL-0003"))
    assert "EVT-0007" in ids(ok(hub, "list_pending_event_invitations", attendee_email=BO))
    sched = ok(hub, "get_meeting_room_schedule", room_id="RM-0002", date="2026-03-17")
    assert [b["event_id"] for b in sched["bookings"]] == ["EVT-0006", "EVT-0007"]
    slots = ok(hub, "find_meeting_times", attendee_emails=[ADA], date="2026-03-17", earliest_hour=12, latest_hour=15)
    assert [(s["start"][11:], s["end"][11:]) for s in slots["slots"]] == [("12:00", "13:00"), ("14:00", "15:00")]
    daily = ok(hub, "create_calendar_event", calendar_id="CAL-0001", organizer_email=ADA, title="Focus",
               start="2026-03-19T08:00", end="2026-03-19T08:30", recurrence="daily", visibility="private")
    assert daily["event_id"] == "EVT-0008" and daily["location"] == ""
    fails(hub, "create_calendar_event", "overlaps 'Focus' (EVT-0008, 2026-03-20T08:00 to 2026-03-20T08:30)",
          calendar_id="CAL-0001", organizer_email=ADA, title="X", start="2026-03-20T08:15", end="2026-03-20T09:00")


_NEW = {"calendar_id": "CAL-0001", "organizer_email": ADA, "title": "Sync", "start": "2026-03-17T12:00",
        "end": "2026-03-17T13:00"}


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"organizer_email": BO}, ("cannot add events to calendar 'CAL-0001'", ADA)),
        ({"calendar_id": "CAL-0042"}, ("calendar 'CAL-0042' not found", "CAL-0001")),
        ({"organizer_email": "ada@northwind.example"}, ("unknown person email", "organizer_email")),
        ({"end": "2026-03-17T11:00"}, ("end (2026-03-17T11:00) must be after start (2026-03-17T12:00)",)),
        ({"start": "2026-03-16T08:00"}, ("start 2026-03-16T08:00 is in the past (now is 2026-03-16T09:00)",)),
        ({"start": "tomorrow noon"}, ("start must be a date and time YYYY-MM-DDTHH:MM",)),
        ({"end": "2026-03-19T12:00"}, ("at most 24 hours",)),
        ({"attendee_emails": ["zed@northwind.example"]}, ("unknown person email 'zed@northwind.example'",)),
        ({"attendee_emails": [BO, BO]}, (f"{BO} more than once",)),
        ({"attendee_emails": [ADA]}, ("attends automatically",)),
        ({"start": "2026-03-16T14:30", "end": "2026-03-16T15:00"},
         ("overlaps 'Eng weekly sync' (EVT-0001, 2026-03-16T14:00 to 2026-03-16T14:45)", ADA)),
        ({"start": "2026-03-24T14:30", "end": "2026-03-24T15:00", "recurrence": "daily"},  # hits Monday 30th
         ("overlaps 'Eng weekly sync' (EVT-0001, 2026-03-30T14:00 to 2026-03-30T14:45)",)),
        ({"start": "2026-03-18T15:30", "end": "2026-03-18T16:00"}, ("overlaps 'Pipeline review'",)),  # tentative
        ({"start": "2026-03-17T10:30", "end": "2026-03-17T11:00", "room_id": "RM-0001"},
         ("overlaps 'Design critique'",)),  # ADA accepted it
        ({"start": "2026-03-17T11:00", "end": "2026-03-17T12:00", "room_id": "RM-0002"},
         ("room 'RM-0002' (Birch) is already booked by 'Vendor call' (EVT-0006", "free_from")),
        ({"attendee_emails": [BO, CY], "room_id": "RM-0001"}, ("seats 2 but the event has 3",)),
        ({"room_id": "RM-0099"}, ("meeting room 'RM-0099' not found", "RM-0001, RM-0002")),
        ({"recurrence": "yearly"}, ("recurrence", "'weekly'")),
        ({"title": ""}, ("title",)),
        ({"title": "   "}, ("title must not be blank",)),
        ({"start": "2026-03-17"}, ("start must be a date and time YYYY-MM-DDTHH:MM",)),
        ({"start": "9999-12-31T23:00", "end": "9999-12-31T23:30"}, ("start must be a date and time YYYY-MM-DDTHH:MM[:SS] between 2000 and 2100",)),
    ],
)
def test_create_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "create_calendar_event", *fragments, **{**_NEW, **args})


def test_reschedule(hub: Hub) -> None:
    ev = ok(hub, "reschedule_calendar_event", event_id="EVT-0002", requester_email=BO, new_start="2026-03-19T10:00")
    assert (ev["start"], ev["end"]) == ("2026-03-19T10:00", "2026-03-19T11:00")
    assert ev["attendees"] == [{"email": ADA, "response": "needs_action"}]  # must answer again
    assert ids(ok(hub, "list_pending_event_invitations", attendee_email=ADA)) == ["EVT-0002"]
    assert ok(hub, "get_meeting_room_schedule", room_id="RM-0001", date="2026-03-17")["bookings"] == []
    moved = ok(hub, "reschedule_calendar_event", event_id="EVT-0001", requester_email=ADA,
               new_start="2026-03-17T15:00", new_end="2026-03-17T16:00")
    assert moved["recurrence"] == "weekly"
    week = ok(hub, "list_calendar_events", calendar_id="CAL-0003")
    assert [e["occurrence_start"] for e in week["events"] if e["event_id"] == "EVT-0001"] == ["2026-03-17T15:00"]
    r = dict(event_id="EVT-0001", requester_email=ADA)
    fails(hub, "reschedule_calendar_event", "is already at 2026-03-17T15:00 to 2026-03-17T16:00",
          new_start="2026-03-17T15:00", **r)
    fails(hub, "reschedule_calendar_event", "overlaps 'Pipeline review' (EVT-0005", new_start="2026-03-18T15:30", **r)
    fails(hub, "reschedule_calendar_event", "room 'RM-0002' (Birch) is already booked by 'Vendor call'",
          new_start="2026-03-17T11:00", **r)
    fails(hub, "reschedule_calendar_event", "new_start 2026-03-16T08:00 is in the past", new_start="2026-03-16T08:00", **r)
    fails(hub, "reschedule_calendar_event", "new_end (2026-03-20T09:00) must be after new_start",
          new_start="2026-03-20T10:00", new_end="2026-03-20T09:00", **r)
    fails(hub, "reschedule_calendar_event", f"only the organizer ({ADA}) can reschedule", event_id="EVT-0001",
          requester_email=CY, new_start="2026-03-20T10:00")
    fails(hub, "reschedule_calendar_event", "'Team lunch') is cancelled", event_id="EVT-0004",
          requester_email=ADA, new_start="2026-03-20T10:00")
    fails(hub, "reschedule_calendar_event", "already took place", event_id="EVT-0003",
          requester_email=ADA, new_start="2026-03-20T10:00")
    fails(hub, "reschedule_calendar_event", "unknown person email", "requester_email", event_id="EVT-0001",
          requester_email="boss@northwind.example", new_start="2026-03-20T10:00")


def test_cancel_frees_the_room(hub: Hub) -> None:
    free = {"free_from": "2026-03-17T10:00", "free_until": "2026-03-17T10:45"}
    assert ok(hub, "list_meeting_rooms", **free)["rooms"] == []
    fails(hub, "cancel_calendar_event", f"only the organizer ({BO}) can cancel", event_id="EVT-0002", requester_email=ADA)
    assert ok(hub, "cancel_calendar_event", event_id="EVT-0002", requester_email=BO)["status"] == "cancelled"
    assert [r["room_id"] for r in ok(hub, "list_meeting_rooms", **free)["rooms"]] == ["RM-0001"]
    assert "EVT-0002" not in ids(ok(hub, "list_calendar_events"))
    assert ok(hub, "get_calendar_event", event_id="EVT-0002")["event"]["status"] == "cancelled"
    fails(hub, "cancel_calendar_event", "already cancelled", event_id="EVT-0002", requester_email=BO)
    fails(hub, "cancel_calendar_event", "already took place", event_id="EVT-0003", requester_email=ADA)
    fails(hub, "cancel_calendar_event", "event 'EVT-0010' not found", event_id="EVT-0010", requester_email=ADA)
    fails(hub, "add_event_attendee", "is cancelled and cannot be changed", event_id="EVT-0002", attendee_email=CY)


def test_attendees(hub: Hub) -> None:
    ev = ok(hub, "add_event_attendee", event_id="EVT-0001", attendee_email=BO)
    assert ev["attendees"][-1] == {"email": BO, "response": "needs_action"}
    assert ids(ok(hub, "list_pending_event_invitations", attendee_email=BO)) == ["EVT-0001"]
    fails(hub, "add_event_attendee", "already invited to 'EVT-0001' (response: accepted)", event_id="EVT-0001", attendee_email=CY)
    fails(hub, "add_event_attendee", "organizes event 'EVT-0001'", event_id="EVT-0001", attendee_email=ADA)
    fails(hub, "add_event_attendee", "room 'RM-0001' (Aurora) seats 2 but the event has 3",
          event_id="EVT-0002", attendee_email=CY)
    fails(hub, "add_event_attendee", "already took place", event_id="EVT-0003", attendee_email=CY)
    fails(hub, "add_event_attendee", "unknown person email 'cy@northwind.example'", event_id="EVT-0001",
          attendee_email="cy@northwind.example")

    ok(hub, "set_event_reminder", event_id="EVT-0002", person_email=ADA, minutes_before=30)
    ev = ok(hub, "remove_event_attendee", event_id="EVT-0002", attendee_email=ADA)
    assert ev["attendees"] == []
    got = ok(hub, "get_calendar_event", event_id="EVT-0002")
    assert [r["person_email"] for r in got["reminders"]] == [BO]  # ADA's reminder went with her
    fails(hub, "remove_event_attendee", f"{DI} is not invited to 'EVT-0001'; attendees: {CY}, {BO}",
          event_id="EVT-0001", attendee_email=DI)
    fails(hub, "remove_event_attendee", "cannot be removed; cancel the event instead", event_id="EVT-0002", attendee_email=BO)
    fails(hub, "remove_event_attendee", "is cancelled", event_id="EVT-0004", attendee_email=BO)


def test_respond_to_invitation(hub: Hub) -> None:
    ev = ok(hub, "respond_to_event_invitation", event_id="EVT-0005", attendee_email=CY, response="accepted")
    assert {"email": CY, "response": "accepted"} in ev["attendees"]
    assert ok(hub, "list_pending_event_invitations", attendee_email=CY)["total"] == 0
    slots = ok(hub, "find_meeting_times", attendee_emails=[CY], date="2026-03-18", earliest_hour=14, latest_hour=17)
    assert [(s["start"][11:], s["end"][11:]) for s in slots["slots"]] == [("14:00", "15:00"), ("16:00", "17:00")]
    ok(hub, "respond_to_event_invitation", event_id="EVT-0005", attendee_email=ADA, response="declined")
    assert len(ok(hub, "find_meeting_times", attendee_emails=[ADA], date="2026-03-18")["slots"]) == 1
    fails(hub, "respond_to_event_invitation", "response to 'EVT-0005' is already accepted",
          event_id="EVT-0005", attendee_email=CY, response="accepted")
    fails(hub, "respond_to_event_invitation", f"{BO} is not invited to 'EVT-0005'; attendees: {ADA}, {CY}",
          event_id="EVT-0005", attendee_email=BO, response="accepted")
    fails(hub, "respond_to_event_invitation", "organizers do not respond", event_id="EVT-0005", attendee_email=DI,
          response="declined")
    fails(hub, "respond_to_event_invitation", "is cancelled", event_id="EVT-0004", attendee_email=BO, response="accepted")
    fails(hub, "respond_to_event_invitation", "already took place", event_id="EVT-0003", attendee_email=BO,
          response="declined")
    fails(hub, "respond_to_event_invitation", "response", "'accepted', 'declined' or 'tentative'",
          event_id="EVT-0005", attendee_email=CY, response="needs_action")


def test_book_meeting_room(hub: Hub) -> None:
    ev = ok(hub, "book_meeting_room", event_id="EVT-0005", room_id="RM-0002")
    assert (ev["room_id"], ev["location"]) == ("RM-0002", "Birch, HQ South")
    sched = ok(hub, "get_meeting_room_schedule", room_id="RM-0002", date="2026-03-18")
    assert [b["event_id"] for b in sched["bookings"]] == ["EVT-0005"]
    ev = ok(hub, "book_meeting_room", event_id="EVT-0001", room_id="RM-0001")  # moves the weekly series
    assert ok(hub, "get_meeting_room_schedule", room_id="RM-0002", date="2026-03-23")["bookings"] == []
    assert ok(hub, "get_meeting_room_schedule", room_id="RM-0001", date="2026-03-23")["bookings"][0]["event_id"] == "EVT-0001"
    fails(hub, "book_meeting_room", "already in room 'RM-0001' (Aurora)", event_id="EVT-0002", room_id="RM-0001")
    fails(hub, "book_meeting_room", "room 'RM-0002' (Birch) is already booked by 'Vendor call' "
          "(EVT-0006, 2026-03-17T10:30 to 2026-03-17T11:30)", event_id="EVT-0002", room_id="RM-0002")
    fails(hub, "book_meeting_room", "room 'RM-0001' (Aurora) seats 2 but the event has 3", event_id="EVT-0005",
          room_id="RM-0001")
    fails(hub, "book_meeting_room", "is cancelled", event_id="EVT-0004", room_id="RM-0002")
    fails(hub, "book_meeting_room", "already took place", event_id="EVT-0003", room_id="RM-0002")
    fails(hub, "book_meeting_room", "meeting room 'RM-7' not found", room_id="RM-7", event_id="EVT-0005")


def test_reminders(hub: Hub) -> None:
    fails(hub, "set_event_reminder", "minutes_before can be at most 1500", event_id="EVT-0002", person_email=ADA,
          minutes_before=2000)
    fails(hub, "set_event_reminder", "before 2026-03-16T14:00", "at most 300", event_id="EVT-0001",
          person_email=CY, minutes_before=600)  # next weekly occurrence is today at 14:00
    rem = ok(hub, "set_event_reminder", event_id="EVT-0001", person_email=CY, minutes_before=30, method="email")
    assert rem["reminder_id"] == "REM-0002"
    got = ok(hub, "get_calendar_event", event_id="EVT-0001")
    assert got["reminders"] == [rem]
    fails(hub, "set_event_reminder", "already has this reminder for 'EVT-0001' (REM-0002)", event_id="EVT-0001",
          person_email=CY, minutes_before=30, method="email")
    fails(hub, "set_event_reminder", "neither the organizer nor invited", event_id="EVT-0001", person_email=BO,
          minutes_before=10)
    fails(hub, "set_event_reminder", "has no upcoming occurrence", event_id="EVT-0003", person_email=ADA,
          minutes_before=10)
    fails(hub, "set_event_reminder", "is cancelled", event_id="EVT-0004", person_email=ADA, minutes_before=10)
    fails(hub, "set_event_reminder", "minutes_before", "greater than or equal to 0", event_id="EVT-0001",
          person_email=CY, minutes_before=-5)
    fails(hub, "set_event_reminder", "method", "'popup' or 'email'", event_id="EVT-0001", person_email=CY,
          minutes_before=5, method="sms")


def test_seeded_world_through_the_hub() -> None:
    hub = Hub.for_state(SERVER, initial_state(3))
    hub.open("t", seed=0)
    people = ok(hub, "search_employee_directory", limit=50)["people"]
    assert len(people) >= 28
    week = ok(hub, "list_calendar_events", limit=50)
    assert week["total"] > 10
    ev = next(e for e in week["events"] if e["status"] == "confirmed" and e["occurrence_start"] > "2026-03-16T09:00")
    fails(hub, "cancel_calendar_event", "only the organizer",
          event_id=ev["event_id"], requester_email=next(p["email"] for p in people if p["email"] != ev["organizer_email"]))
    assert ok(hub, "cancel_calendar_event", event_id=ev["event_id"], requester_email=ev["organizer_email"])["status"] == "cancelled"
