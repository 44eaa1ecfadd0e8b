"""Calendar server state: people, calendars, meeting rooms, events with attendees, reminders."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import entity_id, entity_ids, moment, naming
from prove.env.world import COMPANIES, email, iso, person

Department = Literal["engineering", "design", "sales", "marketing", "finance", "people", "legal"]
CalendarKind = Literal["personal", "team"]
Response = Literal["accepted", "declined", "tentative", "needs_action"]
Visibility = Literal["default", "public", "private", "confidential"]
Recurrence = Literal["none", "daily", "weekly", "monthly"]
EventStatus = Literal["confirmed", "cancelled"]
Equipment = Literal["projector", "video_conferencing", "whiteboard", "speakerphone", "display_screen"]
ReminderMethod = Literal["popup", "email"]

DOMAIN = "northwind.example"
"""Every person's email is at this company domain."""

PersonEmail = entity_id("person", "A person's work email, e.g. 'amara.chen@northwind.example'.", example="amara.chen@northwind.example")
"""People are named by their email in every tool; `person_id` is only the directory's key."""
PersonEmails = entity_ids("person", "People's work emails.")
CalendarId = entity_id("calendar", "Calendar id, e.g. 'CAL-0004'.", example="CAL-0004")
RoomId = entity_id("meeting_room", "Meeting room id, e.g. 'RM-0003'.", example="RM-0003")
EventId = entity_id("event", "Event id, e.g. 'EVT-0012'.", example="EVT-0012")
ReminderId = entity_id("reminder", "Reminder id, e.g. 'REM-0005'.", example="REM-0005")


class Person(Record):
    person_id: str = Field(description="Directory key; tools name people by email.")
    name: str = Field(json_schema_extra=naming("alone"))
    email: PersonEmail
    department: Department
    title: str
    timezone: str = Field(description="IANA time zone the person works in; all event times are UTC.")
    office: str


class Calendar(Record):
    calendar_id: CalendarId
    name: str = Field(json_schema_extra=naming("name"))
    kind: CalendarKind
    owner_email: PersonEmail
    member_emails: PersonEmails = Field(description="Who may add events (sorted); the owner for personal ones.")
    description: str


class MeetingRoom(Record):
    room_id: RoomId
    name: str = Field(json_schema_extra=naming("name"))
    building: str
    floor: int
    capacity: int
    equipment: list[Equipment] = Field(description="Sorted list of installed equipment.")


class Attendee(Record):
    email: PersonEmail
    response: Response


class Event(Record):
    event_id: EventId
    calendar_id: CalendarId
    title: str = Field(json_schema_extra=naming("title"))
    description: str
    start: moment("Start of the (first) occurrence, UTC.")
    end: moment("End of the (first) occurrence, UTC.")
    location: str
    room_id: RoomId | None = None
    organizer_email: PersonEmail
    attendees: list[Attendee] = Field(description="Invited people other than the organizer.")
    visibility: Visibility
    recurrence: Recurrence
    status: EventStatus
    updated_at: moment("Last change, UTC.")


class Reminder(Record):
    reminder_id: ReminderId
    event_id: EventId
    person_email: PersonEmail
    minutes_before: int
    method: ReminderMethod


class CalendarState(ServerState):
    people: dict[str, Person] = Field(default_factory=dict)
    calendars: dict[str, Calendar] = Field(default_factory=dict)
    rooms: dict[str, MeetingRoom] = Field(default_factory=dict)
    events: dict[str, Event] = Field(default_factory=dict)
    reminders: dict[str, Reminder] = Field(default_factory=dict)


def occurrences(start: str, end: str, recurrence: Recurrence, lo: datetime, hi: datetime,
                ) -> list[tuple[datetime, datetime]]:
    """(start, end) of every occurrence of a series that overlaps [lo, hi), in time order.

    A monthly series repeats on the same day of the month and skips months without that day.
    """
    s, e = datetime.fromisoformat(start), datetime.fromisoformat(end)
    dur = e - s
    if recurrence == "none":
        return [(s, e)] if s < hi and e > lo else []
    out: list[tuple[datetime, datetime]] = []
    if recurrence == "monthly":
        k = 0
        while True:
            m = s.month - 1 + k
            k += 1
            try:
                occ = s.replace(year=s.year + m // 12, month=m % 12 + 1)
            except ValueError:
                continue
            if occ >= hi:
                return out
            if occ + dur > lo:
                out.append((occ, occ + dur))
    step = timedelta(days=1 if recurrence == "daily" else 7)
    occ = s + step * max(0, (lo - e) // step)
    while occ < hi:
        if occ + dur > lo:
            out.append((occ, occ + dur))
        occ += step
    return out


_TITLES: dict[str, tuple[str, ...]] = {
    "engineering": ("Sprint planning", "Architecture review", "Incident retro", "API design sync",
                    "Code review pairing", "On-call handover"),
    "design": ("Design critique", "User research readout", "Prototype walkthrough", "Brand refresh sync"),
    "sales": ("Pipeline review", "Deal strategy", "Customer call: {co}", "Quarterly forecast"),
    "marketing": ("Campaign kickoff", "Content calendar", "Launch plan: {co}", "Webinar dry run"),
    "finance": ("Budget check-in", "Month-end close", "Vendor contract review", "Expense policy update"),
    "people": ("Interview: {name}", "Onboarding plan", "Benefits review", "Hiring sync"),
    "legal": ("Contract review: {co}", "Compliance training", "Privacy impact review"),
}
_JOBS: dict[str, tuple[str, ...]] = {
    "engineering": ("Software Engineer", "Senior Engineer", "Engineering Manager", "SRE"),
    "design": ("Product Designer", "UX Researcher", "Design Lead"),
    "sales": ("Account Executive", "Sales Manager", "Solutions Engineer"),
    "marketing": ("Marketing Manager", "Content Strategist", "Growth Analyst"),
    "finance": ("Financial Analyst", "Controller", "Accountant"),
    "people": ("Recruiter", "HR Business Partner", "People Ops Lead"),
    "legal": ("Counsel", "Paralegal", "Compliance Officer"),
}
_OFFICES = (("Berlin", "Europe/Berlin"), ("London", "Europe/London"), ("New York", "America/New_York"),
            ("Toronto", "America/Toronto"), ("Lisbon", "Europe/Lisbon"))
_BUILDINGS = ("HQ North", "HQ South", "Harbor Annex")
_ROOM_NAMES = ("Aurora", "Birch", "Cedar", "Delta", "Ember", "Fjord", "Granite", "Harbor", "Iris",
               "Juniper", "Kestrel", "Lagoon", "Meadow", "Nova")
_EQUIPMENT: tuple[Equipment, ...] = ("projector", "video_conferencing", "whiteboard", "speakerphone",
                                     "display_screen")
_OFFSITE = ("Video call", "Cafe Milano", "Client office", "Phone bridge")


Busy = dict[tuple[str, int], list[tuple[datetime, datetime]]]
"""Booked intervals per (person email or room id, day ordinal); builder events never cross midnight."""


def _overlaps(busy: Busy, key: str, s: datetime, e: datetime) -> bool:
    return any(a < e and s < b for a, b in busy.get((key, s.toordinal()), ()))


def initial_state(seed: int) -> CalendarState:
    """A company of ~30 people in 7 departments, ~45 calendars, 12 rooms, ~120 events."""
    rng = random.Random(seed)
    now = "2026-03-16T09:00"
    state = CalendarState(now=now)
    base = datetime.fromisoformat(now)
    per_id, cal_id, room_id = Counter("PER"), Counter("CAL"), Counter("RM")
    evt_id, rem_id = Counter("EVT"), Counter("REM")
    depts: list[Department] = ["engineering", "design", "sales", "marketing", "finance", "people", "legal"]
    by_dept: dict[str, list[str]] = {d: [] for d in depts}
    used: set[str] = set()
    for i in range(rng.randrange(28, 34)):
        name = person(rng)
        while name in used:
            name = person(rng)
        used.add(name)
        dept = depts[i] if i < len(depts) else rng.choice(depts)
        office, tz = rng.choice(_OFFICES)
        pid = per_id()
        state.people[pid] = Person(person_id=pid, name=name, email=email(name, DOMAIN), department=dept,
                                   title=rng.choice(_JOBS[dept]), timezone=tz, office=office)
        by_dept[dept].append(email(name, DOMAIN))
    emails = sorted(p.email for p in state.people.values())
    dept_of = {p.email: p.department for p in state.people.values()}
    personal: dict[str, str] = {}
    for p in state.people.values():
        cid = cal_id()
        personal[p.email] = cid
        state.calendars[cid] = Calendar(calendar_id=cid, name=p.name, kind="personal", owner_email=p.email,
                                        member_emails=[p.email], description=f"{p.name}'s calendar")
    team: dict[str, str] = {}
    for dept in depts:
        cid = cal_id()
        team[dept] = cid
        state.calendars[cid] = Calendar(
            calendar_id=cid, name=f"{dept.capitalize()} team", kind="team", owner_email=by_dept[dept][0],
            member_emails=sorted(by_dept[dept]), description=f"Shared calendar of the {dept} team",
        )
    company = cal_id()
    state.calendars[company] = Calendar(calendar_id=company, name="Company events", kind="team",
                                    owner_email=by_dept["people"][0], member_emails=emails,
                                    description="All-hands, socials and company-wide dates")
    for name in rng.sample(_ROOM_NAMES, 12):
        rid = room_id()
        state.rooms[rid] = MeetingRoom(
            room_id=rid, name=name, building=rng.choice(_BUILDINGS), floor=rng.randrange(1, 7),
            capacity=rng.choice([2, 4, 4, 6, 8, 8, 10, 12, 16, 30]),
            equipment=sorted(rng.sample(_EQUIPMENT, rng.randrange(1, 4))),
        )
    rooms = sorted(state.rooms.values(), key=lambda r: r.capacity)
    busy: Busy = {}
    lo, hi = base - timedelta(days=15), base + timedelta(days=29)

    def add(ev: Event) -> None:
        state.events[ev.event_id] = ev
        holders = [ev.organizer_email, *(a.email for a in ev.attendees if a.response != "declined")]
        for key in holders + ([ev.room_id] if ev.room_id else []):
            for occ in occurrences(ev.start, ev.end, ev.recurrence, lo, hi):
                busy.setdefault((key, occ[0].toordinal()), []).append(occ)

    # Recurring team rituals first (each in its own weekday/hour, so they never collide).
    for i, dept in enumerate(depts):
        members = by_dept[dept]
        room = next((r for r in rooms if r.capacity >= len(members)), rooms[-1])
        monday = base.replace(hour=0, minute=0) - timedelta(days=14)
        start = monday + timedelta(days=i % 5, hours=13 + i // 5 * 2)
        add(Event(event_id=evt_id(), calendar_id=team[dept], title=f"{dept.capitalize()} weekly sync",
                  description="Standing weekly sync: updates, blockers, decisions.",
                  start=iso(start), end=iso(start + timedelta(minutes=45)), location=f"{room.name}, {room.building}",
                  room_id=room.room_id, organizer_email=members[0],
                  attendees=[Attendee(email=m, response=rng.choice(["accepted", "accepted", "tentative"]))
                             for m in members[1:]],
                  visibility="default", recurrence="weekly", status="confirmed", updated_at=iso(start)))
    eng = by_dept["engineering"]
    start = base.replace(hour=8, minute=30) - timedelta(days=14)
    add(Event(event_id=evt_id(), calendar_id=team["engineering"], title="Engineering standup",
              description="Fifteen minutes, cameras optional.", start=iso(start),
              end=iso(start + timedelta(minutes=15)), location="Video call", organizer_email=eng[-1],
              attendees=[Attendee(email=m, response="accepted") for m in eng[:-1]],
              visibility="default", recurrence="daily", status="confirmed", updated_at=iso(start)))
    start = base.replace(day=1, hour=16, minute=0)
    add(Event(event_id=evt_id(), calendar_id=company, title="Company all-hands",
              description="Monthly all-hands with Q&A.", start=iso(start), end=iso(start + timedelta(hours=1)),
              location="Video call", organizer_email=by_dept["people"][0],
              attendees=[Attendee(email=m, response=rng.choice(["accepted", "tentative", "needs_action"]))
                         for m in emails if m != by_dept["people"][0]],
              visibility="public", recurrence="monthly", status="confirmed", updated_at=iso(start)))
    # One-off meetings over the last two weeks and the next four.
    for _ in range(rng.randrange(110, 130)):
        day = base.replace(hour=0, minute=0) + timedelta(days=rng.randrange(-14, 28))
        if day.weekday() >= 5:
            continue
        start = day + timedelta(minutes=rng.randrange(16, 36) * 30)
        end = start + timedelta(minutes=rng.choice([30, 30, 45, 60, 60, 90, 120]))
        organizer = rng.choice(emails)
        if _overlaps(busy, organizer, start, end):
            continue
        dept = dept_of[organizer]
        pool = [m for m in emails if m != organizer]
        mates = [m for m in by_dept[dept] if m != organizer]
        invited = sorted(set(rng.sample(mates, min(len(mates), rng.randrange(0, 4)))
                             + rng.sample(pool, rng.randrange(0, 3))))
        past = end <= base
        attendees = []
        for m in invited:
            if _overlaps(busy, m, start, end):
                response = rng.choice(["declined", "needs_action"])
            elif past:
                response = rng.choice(["accepted", "accepted", "accepted", "declined"])
            else:
                response = rng.choice(["accepted", "accepted", "tentative", "needs_action", "needs_action"])
            attendees.append(Attendee(email=m, response=response))
        room = next((r for r in rooms if r.capacity > len(attendees) and not _overlaps(busy, r.room_id, start, end)),
                    None) if rng.random() < 0.6 else None
        title = rng.choice(_TITLES[dept]).format(co=rng.choice(COMPANIES), name=person(rng))
        private = len(attendees) == 1 and rng.random() < 0.5
        if private:
            title = f"1:1 {organizer.split('@')[0].split('.')[0].capitalize()} / " \
                    f"{attendees[0].email.split('@')[0].split('.')[0].capitalize()}"
        visibility = ("confidential" if title.startswith(("Interview", "Contract")) else
                      "private" if private else rng.choice(["default", "default", "default", "public"]))
        status = "cancelled" if rng.random() < 0.06 else "confirmed"
        ev = Event(
            event_id=evt_id(), calendar_id=team[dept] if rng.random() < 0.35 else personal[organizer],
            title=title, description=rng.choice(["", "Agenda in the shared doc.", "Please come prepared.",
                                                 "Notes will be shared afterwards."]),
            start=iso(start), end=iso(end),
            location=f"{room.name}, {room.building}" if room else rng.choice(_OFFSITE),
            room_id=room.room_id if room else None, organizer_email=organizer, attendees=attendees,
            visibility=visibility, recurrence="none", status=status,
            updated_at=iso(min(base, start) - timedelta(days=rng.randrange(1, 10))),
        )
        if status == "cancelled":
            state.events[ev.event_id] = ev
        else:
            add(ev)
    state.events = dict(sorted(state.events.items(), key=lambda kv: (kv[1].start, kv[0])))
    upcoming = [e for e in state.events.values() if e.start > now and e.status == "confirmed"]
    for ev in rng.sample(upcoming, min(len(upcoming), rng.randrange(20, 30))):
        lead = (datetime.fromisoformat(ev.start) - base) // timedelta(minutes=1)
        who = rng.choice([ev.organizer_email, *(a.email for a in ev.attendees if a.response == "accepted")])
        rid = rem_id()
        state.reminders[rid] = Reminder(
            reminder_id=rid, event_id=ev.event_id, person_email=who,
            minutes_before=rng.choice([m for m in (5, 10, 15, 30, 60, 1440) if m <= lead] or [0]),
            method=rng.choice(["popup", "popup", "email"]),
        )
    return state
