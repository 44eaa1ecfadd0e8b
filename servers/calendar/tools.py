"""Calendar tools: people, calendars, events, invitations, free-time search, rooms, reminders."""

from __future__ import annotations

import difflib
from datetime import datetime, time, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, require, shown
from prove.env.tool import ToolError, tool
from prove.env.types import (
    DEFAULT_LIMIT,
    EXAMPLE,
    Limit,
    Offset,
    Page,
    day,
    entity_id,
    entity_ids,
    moment,
    naming,
    parse_day,
    parse_moment,
    text,
)
from prove.env.world import iso
from prove_servers.calendar.state import (
    Attendee,
    Calendar,
    CalendarId,
    CalendarKind,
    CalendarState,
    Department,
    Equipment,
    Event,
    EventId,
    EventStatus,
    MeetingRoom,
    Person,
    PersonEmail,
    Recurrence,
    Reminder,
    ReminderMethod,
    RoomId,
    Visibility,
    occurrences,
)

Start = moment("UTC date and time.", listed="start")
End = moment("UTC date and time.", listed="end", role="end")
Date = day("The day to show.", listed="date")

_HORIZON = timedelta(weeks=8)
"""How far ahead a recurring series is checked for clashes."""
_MAX_RANGE_DAYS = 92


class PersonList(Page):
    people: list[Person]


class CalendarList(Page):
    calendars: list[Calendar]


class EventSummary(BaseModel):
    event_id: EventId
    calendar_id: CalendarId
    title: str = Field(json_schema_extra=naming("title"))
    occurrence_start: str = Field(description="Start of the occurrence shown (= start for one-off events).")
    occurrence_end: str
    recurrence: Recurrence
    location: str
    room_id: RoomId | None
    organizer_email: PersonEmail
    attendee_count: int
    visibility: Visibility
    status: EventStatus


class EventList(Page):
    events: list[EventSummary]


class EventDetails(BaseModel):
    event: Event
    room: MeetingRoom | None
    reminders: list[Reminder]


class TimeSlot(BaseModel):
    start: moment("Start of the free window, UTC.")
    end: moment("End of the free window, UTC.")


class FreeSlots(Page):
    date: str
    duration_minutes: int
    slots: list[TimeSlot] = Field(description="Free windows at least duration_minutes long; any start "
                                              "from a window's start to its end minus the duration works.")


class RoomList(Page):
    rooms: list[MeetingRoom]


class RoomBooking(BaseModel):
    event_id: EventId
    title: str = Field(json_schema_extra=naming("title"))
    start: str
    end: str
    organizer_email: PersonEmail


class RoomSchedule(BaseModel):
    room: MeetingRoom
    date: str
    bookings: list[RoomBooking]


def _person(state: CalendarState, email: str, param: str) -> Person:
    wanted = email.strip().lower()
    found = next((p for p in state.people.values() if p.email == wanted), None)
    if found is None:
        emails = sorted(p.email for p in state.people.values())
        close = difflib.get_close_matches(wanted, emails, n=3, cutoff=0.6)
        raise ToolError(f"unknown person email '{email}' (parameter '{param}'); "
                        + (f"did you mean {', '.join(close)}? " if close else "")
                        + "search_employee_directory finds people by name",
                        reason='not_found', params=(param,), rejected=(email,), choices=tuple(close))
    return found


def _event(state: CalendarState, event_id: str) -> Event:
    return find(state.events, event_id)


def _room(state: CalendarState, room_id: str) -> MeetingRoom:
    return find(state.rooms, room_id)


def _live(event: Event) -> None:
    require(event.status != "cancelled",
            f"event '{event.event_id}' ('{event.title}') is cancelled and cannot be changed",
            reason='state', rejected=(event.event_id, event.title))


def _not_over(state: CalendarState, event: Event) -> None:
    require(event.recurrence != "none" or event.end > state.now,
            f"event '{event.event_id}' ('{event.title}') already took place ({event.start} to {event.end})",
            reason='conflict', rejected=(event.event_id, event.title, event.end))


def _organizer_only(event: Event, requester: Person, action: str) -> None:
    require(requester.email == event.organizer_email,
            f"only the organizer ({event.organizer_email}) can {action} event '{event.event_id}'; "
            f"'{requester.email}' is not the organizer",
            reason='state', rejected=(action, event.event_id, requester.email))


def _invited(event: Event, email: str) -> Attendee | None:
    return next((a for a in event.attendees if a.email == email), None)


def _busy(event: Event, email: str) -> bool:
    """Whether the event blocks `email`'s time: they organize it or accepted/tentatively accepted."""
    if event.organizer_email == email:
        return True
    att = _invited(event, email)
    return att is not None and att.response in ("accepted", "tentative")


def _span(a: datetime, b: datetime) -> str:
    return f"{iso(a)} to {iso(b)}"


def _clash(state: CalendarState, start: datetime, end: datetime, recurrence: Recurrence, *,
           email: str | None = None, room_id: str | None = None, skip: str | None = None,
           ) -> tuple[Event, datetime, datetime] | None:
    """The first live event that overlaps the (series') slot for a person or a room."""
    cand = occurrences(iso(start), iso(end), recurrence, start, start + _HORIZON)
    lo, hi = cand[0][0], cand[-1][1]
    for ev in state.events.values():
        if ev.status == "cancelled" or ev.event_id == skip:
            continue
        if (email is not None and not _busy(ev, email)) or (room_id is not None and ev.room_id != room_id):
            continue
        for c, d in occurrences(ev.start, ev.end, ev.recurrence, lo, hi):
            if any(a < d and c < b for a, b in cand):
                return ev, c, d
    return None


def _check_slot(state: CalendarState, start: datetime, end: datetime, recurrence: Recurrence,
                organizer: str, room: MeetingRoom | None, headcount: int, skip: str | None = None) -> None:
    """Fail unless the organizer is free and the room (if any) is big enough and free."""
    hit = _clash(state, start, end, recurrence, email=organizer, skip=skip)
    if hit is not None:
        raise ToolError(f"the time overlaps '{hit[0].title}' ({hit[0].event_id}, {_span(hit[1], hit[2])}) "
                        f"on the organizer {organizer}'s calendar; find_meeting_times lists free slots",
                        reason='conflict', rejected=(hit[0].title, organizer))
    if room is not None:
        _fits(room, headcount)
        _room_free(state, room, start, end, recurrence, skip)


def _room_free(state: CalendarState, room: MeetingRoom, start: datetime, end: datetime,
               recurrence: Recurrence, skip: str | None) -> None:
    hit = _clash(state, start, end, recurrence, room_id=room.room_id, skip=skip)
    if hit is not None:
        raise ToolError(f"room '{room.room_id}' ({room.name}) is already booked by '{hit[0].title}' "
                        f"({hit[0].event_id}, {_span(hit[1], hit[2])}); list_meeting_rooms with "
                        "free_from/free_until shows free rooms",
                        reason='conflict', params=('free_from', 'free_until'),
                        rejected=(room.room_id, hit[0].title))


def _fits(room: MeetingRoom, headcount: int) -> None:
    require(headcount <= room.capacity,
            f"room '{room.room_id}' ({room.name}) seats {room.capacity} but the event has {headcount} "
            "people (organizer + attendees)", rejected=(room.room_id, room.capacity, headcount))


def _slot(state: CalendarState, start: str, end: str, start_param: str, end_param: str,
          ) -> tuple[datetime, datetime]:
    s = parse_moment(start, start_param).replace(second=0)
    e = parse_moment(end, end_param).replace(second=0)
    require(e > s, f"{end_param} ({iso(e)}) must be after {start_param} ({iso(s)})",
            params=(end_param, start_param))
    require(s >= state.now_dt(), f"{start_param} {iso(s)} is in the past (now is {state.now})",
            reason='past', params=(start_param,), rejected=(state.now,))
    require(e - s <= timedelta(hours=24), f"an event may last at most 24 hours; got {e - s}",
            reason='limit')
    return s, e


def _summary(ev: Event, occ: tuple[datetime, datetime] | None = None) -> EventSummary:
    start, end = (iso(occ[0]), iso(occ[1])) if occ else (ev.start, ev.end)
    return EventSummary(
        event_id=ev.event_id, calendar_id=ev.calendar_id, title=ev.title, occurrence_start=start,
        occurrence_end=end, recurrence=ev.recurrence, location=ev.location, room_id=ev.room_id,
        organizer_email=ev.organizer_email, attendee_count=len(ev.attendees),
        visibility=ev.visibility, status=ev.status,
    )


def _upcoming(state: CalendarState, ev: Event) -> tuple[datetime, datetime] | None:
    """A recurring series' current or next occurrence; None for one-off events (show them as is)."""
    if ev.recurrence == "none":
        return None
    now = state.now_dt()
    occs = occurrences(ev.start, ev.end, ev.recurrence, now, now + timedelta(days=70))
    return occs[0] if occs else None


def _touch(state: CalendarState, event: Event) -> None:
    event.updated_at = state.advance()


@tool()
def search_employee_directory(
    state: CalendarState,
    query: text("query", "Case-insensitive substring of name, email or job title.", max_length=100, listed="name") = "",
    department: Annotated[Department | None, Field(description="Only people in this department.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> PersonList:
    """Find colleagues by name, email or job title, optionally in one department, with their emails."""
    q = query.strip().lower()
    found = [p for p in state.people.values()
             if (q in p.name.lower() or q in p.email or q in p.title.lower())
             and (department is None or p.department == department)]
    return PersonList.of(found, offset, limit)


@tool(sensitive=("member_email",))
def list_calendars(
    state: CalendarState,
    member_email: Annotated[PersonEmail | None, Field(description="Only calendars this person may add events to.")] = None,
    kind: Annotated[CalendarKind | None, Field(description="Only personal or only team calendars.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> CalendarList:
    """List calendars (personal and team), optionally those a person belongs to."""
    email = _person(state, member_email, "member_email").email if member_email is not None else None
    found = [c for c in state.calendars.values()
             if (email is None or email in c.member_emails) and (kind is None or c.kind == kind)]
    return CalendarList.of(found, offset, limit)


@tool(sensitive=("calendar_id", "attendee_email"))
def list_calendar_events(
    state: CalendarState,
    start_date: Annotated[day("First day.", listed="date") | None, Field(description="First day (default: today).")] = None,
    end_date: Annotated[day("Last day, inclusive.", listed="date", role="end") | None,
                        Field(description="Last day, inclusive (default: 6 days after start_date).")] = None,
    calendar_id: Annotated[CalendarId | None, Field(description="Only events on this calendar, e.g. 'CAL-0004'.", json_schema_extra={EXAMPLE: "CAL-0004"})] = None,
    attendee_email: Annotated[PersonEmail | None, Field(description="Only events this person organizes or is invited to.")] = None,
    include_cancelled: Annotated[bool, Field(description="Also list cancelled events.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> EventList:
    """List event occurrences in a date range (at most 92 days), in time order; recurring events repeat."""
    lo = (datetime.combine(parse_day(start_date, "start_date"), time()) if start_date
          else state.now_dt().replace(hour=0, minute=0))
    hi = (datetime.combine(parse_day(end_date, "end_date"), time()) if end_date
          else lo + timedelta(days=6)) + timedelta(days=1)
    require(hi > lo, f"end_date ({end_date}) must not be before start_date ({iso(lo)[:10]})",
            params=('end_date', 'start_date'))
    require(hi - lo <= timedelta(days=_MAX_RANGE_DAYS), f"the range may span at most {_MAX_RANGE_DAYS} days",
            reason='limit', rejected=(_MAX_RANGE_DAYS,))
    if calendar_id is not None:
        find(state.calendars, calendar_id)
    email = _person(state, attendee_email, "attendee_email").email if attendee_email is not None else None
    found = [
        (occ, ev) for ev in state.events.values()
        if (include_cancelled or ev.status != "cancelled")
        and (calendar_id is None or ev.calendar_id == calendar_id)
        and (email is None or ev.organizer_email == email or _invited(ev, email) is not None)
        for occ in occurrences(ev.start, ev.end, ev.recurrence, lo, hi)
    ]
    found.sort(key=lambda pair: (pair[0][0], pair[1].event_id))
    return EventList.of(found, offset, limit, view=lambda pair: _summary(pair[1], pair[0]))


@tool(sensitive=("organizer_email",))
def search_calendar_events(
    state: CalendarState,
    query: text("query", "Case-insensitive substring of title, description or location.", max_length=100, listed="title") = "",
    organizer_email: Annotated[PersonEmail | None, Field(description="Only events organized by this person.")] = None,
    include_cancelled: Annotated[bool, Field(description="Also return cancelled events.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> EventList:
    """Search all events, past and future, by text and organizer; recurring ones show their next occurrence."""
    q = query.strip().lower()
    email = _person(state, organizer_email, "organizer_email").email if organizer_email is not None else None
    found = sorted(
        (_summary(ev, _upcoming(state, ev)) for ev in state.events.values()
         if (q in ev.title.lower() or q in ev.description.lower() or q in ev.location.lower())
         and (email is None or ev.organizer_email == email)
         and (include_cancelled or ev.status != "cancelled")),
        key=lambda ev: (ev.occurrence_start, ev.event_id),
    )
    return EventList.of(found, offset, limit)


@tool(sensitive=("event_id",))
def get_calendar_event(state: CalendarState, event_id: EventId) -> EventDetails:
    """Get one event with its attendees and their responses, its meeting room and reminders."""
    ev = _event(state, event_id)
    return EventDetails(
        event=ev, room=state.rooms.get(ev.room_id) if ev.room_id else None,
        reminders=[r for r in state.reminders.values() if r.event_id == event_id],
    )


@tool(sensitive=("attendee_email",))
def list_pending_event_invitations(
    state: CalendarState,
    attendee_email: PersonEmail,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> EventList:
    """List upcoming events a person is invited to but has not answered yet (needs_action)."""
    email = _person(state, attendee_email, "attendee_email").email
    found = sorted(
        (_summary(ev, _upcoming(state, ev)) for ev in state.events.values()
         if ev.status != "cancelled" and (ev.recurrence != "none" or ev.end > state.now)
         and (att := _invited(ev, email)) is not None and att.response == "needs_action"),
        key=lambda ev: (ev.occurrence_start, ev.event_id),
    )
    return EventList.of(found, offset, limit)


@tool(sensitive=("attendee_emails",))
def find_meeting_times(
    state: CalendarState,
    attendee_emails: entity_ids("person", "Everyone who must be free (organizer included).", min_length=1,
                                max_length=10),
    date: day("The day to search.", listed="date"),
    duration_minutes: Annotated[int, Field(ge=15, le=480, description="Meeting length in minutes.")] = 30,
    earliest_hour: Annotated[int, Field(ge=0, le=23, description="Start of the search window, UTC hour.")] = 9,
    latest_hour: Annotated[int, Field(ge=1, le=24, description="End of the search window, UTC hour.")] = 17,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> FreeSlots:
    """Find windows on one day when all the given people are free (accepted/tentative events block time), a page at a time."""
    emails = list(dict.fromkeys(_person(state, e, "attendee_emails").email for e in attendee_emails))
    on = datetime.combine(parse_day(date, "date"), time())
    require(latest_hour > earliest_hour, f"latest_hour ({latest_hour}) must be after earliest_hour ({earliest_hour})",
            params=('earliest_hour', 'latest_hour'))
    lo, hi = on + timedelta(hours=earliest_hour), on + timedelta(hours=latest_hour)
    now = state.now_dt()
    require(hi > now, f"the window {_span(lo, hi)} is already past (now is {state.now})",
            reason='conflict', rejected=(state.now,))
    if lo < now:
        lo = now + timedelta(minutes=-now.minute % 15)
    blocks = sorted(
        occ for ev in state.events.values()
        if ev.status != "cancelled" and any(_busy(ev, e) for e in emails)
        for occ in occurrences(ev.start, ev.end, ev.recurrence, lo, hi)
    )
    slots, cursor, need = [], lo, timedelta(minutes=duration_minutes)
    for a, b in [*blocks, (hi, hi)]:
        if min(a, hi) - cursor >= need:
            slots.append(TimeSlot(start=iso(cursor), end=iso(min(a, hi))))
        cursor = max(cursor, b)
    return FreeSlots.of(slots, offset, limit, date=iso(on)[:10], duration_minutes=duration_minutes)


@tool()
def list_meeting_rooms(
    state: CalendarState,
    building: text("word", "Only rooms in this building, e.g. 'HQ North'.", listed="building", example="HQ North", optional=True) = None,
    min_capacity: Annotated[int | None, Field(ge=1, le=200, description="Only rooms seating at least this many.")] = None,
    equipment: Annotated[Equipment | None, Field(description="Only rooms with this equipment.")] = None,
    free_from: Annotated[moment("Start of the window, UTC.") | None,
                         Field(description="With free_until: only rooms free in this window (UTC).")] = None,
    free_until: Annotated[moment("End of the window, UTC.", role="end") | None,
                          Field(description="End of the window that must be free.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> RoomList:
    """List meeting rooms by building, capacity and equipment, optionally only those free in a window."""
    buildings = sorted({r.building for r in state.rooms.values()})
    require(building is None or building in buildings,
            f"unknown building '{building}' (parameter 'building'); buildings: {', '.join(buildings)}",
            reason='not_found', params=('building',), rejected=(building,), choices=tuple(buildings))
    require((free_from is None) == (free_until is None), "give both free_from and free_until, or neither",
            reason='missing', params=('free_from', 'free_until'))
    window = None
    if free_from is not None and free_until is not None:
        window = (parse_moment(free_from, "free_from").replace(second=0),
                  parse_moment(free_until, "free_until").replace(second=0))
        require(window[1] > window[0], f"free_until ({free_until}) must be after free_from ({free_from})",
                params=('free_from', 'free_until'))
        require(window[1] - window[0] <= timedelta(hours=24), "free_from to free_until may span at most 24 hours",
                reason='limit', params=('free_from', 'free_until'))
    found = [
        r for r in state.rooms.values()
        if (building is None or r.building == building)
        and (min_capacity is None or r.capacity >= min_capacity)
        and (equipment is None or equipment in r.equipment)
        and (window is None or _clash(state, *window, "none", room_id=r.room_id) is None)
    ]
    return RoomList.of(found, offset, limit)


@tool(sensitive=("room_id",))
def get_meeting_room_schedule(state: CalendarState, room_id: RoomId, date: Date) -> RoomSchedule:
    """Show a meeting room's bookings on one day, in time order."""
    room = _room(state, room_id)
    lo = datetime.combine(parse_day(date, "date"), time())
    bookings = sorted(
        (RoomBooking(event_id=ev.event_id, title=ev.title, start=iso(a), end=iso(b),
                     organizer_email=ev.organizer_email)
         for ev in state.events.values() if ev.room_id == room_id and ev.status != "cancelled"
         for a, b in occurrences(ev.start, ev.end, ev.recurrence, lo, lo + timedelta(days=1))),
        key=lambda b: b.start,
    )
    return RoomSchedule(room=room, date=iso(lo)[:10], bookings=bookings)


@tool(write=True, sensitive=("calendar_id", "organizer_email", "start", "end", "attendee_emails", "room_id"))
def create_calendar_event(
    state: CalendarState,
    calendar_id: entity_id("calendar", "Calendar to put the event on, e.g. 'CAL-0004'; the organizer must be a member.", example="CAL-0004"),
    organizer_email: PersonEmail,
    title: text("title", "Event title.", listed="title", min_length=1, max_length=120),
    start: Start,
    end: End,
    attendee_emails: entity_ids("person", "People to invite (not the organizer).", max_length=50) = [],  # noqa: B006
    description: text("body", "Agenda or notes.", listed="description", max_length=2000) = "",
    location: text("word", "Where; defaults to the room if one is booked.", listed="location", max_length=200) = "",
    room_id: Annotated[RoomId | None, Field(description="Meeting room to book, e.g. 'RM-0003'.", json_schema_extra={EXAMPLE: "RM-0003"})] = None,
    visibility: Annotated[Visibility, Field(description="Who can see the details.")] = "default",
    recurrence: Annotated[Recurrence, Field(description="Repeat the event daily, weekly or monthly.")] = "none",
) -> Event:
    """Create an event and invite people; fails if it overlaps the organizer's events or the room is taken."""
    cal = find(state.calendars, calendar_id)
    organizer = _person(state, organizer_email, "organizer_email")
    require(organizer.email in cal.member_emails,
            f"{organizer.email} cannot add events to calendar '{calendar_id}' ({cal.name}); its members: "
            f"{known(cal.member_emails)}",
            rejected=(organizer.email, calendar_id), choices=shown(cal.member_emails))
    require(bool(title.strip()), "title must not be blank", params=('title',))
    s, e = _slot(state, start, end, "start", "end")
    invited = [_person(state, x, "attendee_emails").email for x in attendee_emails]
    dups = sorted({x for x in invited if invited.count(x) > 1})
    require(not dups, f"attendee_emails lists {', '.join(dups)} more than once",
            reason='limit', params=('attendee_emails',), choices=tuple(dups))
    require(organizer.email not in invited,
            f"the organizer {organizer.email} attends automatically; remove them from attendee_emails",
            params=('attendee_emails',), rejected=(organizer.email,))
    room = _room(state, room_id) if room_id is not None else None
    _check_slot(state, s, e, recurrence, organizer.email, room, 1 + len(invited))
    event = Event(
        event_id=state.new_id("EVT"), calendar_id=cal.calendar_id, title=title.strip(),
        description=description.strip(), start=iso(s), end=iso(e),
        location=location.strip() or (f"{room.name}, {room.building}" if room else ""),
        room_id=room_id, organizer_email=organizer.email,
        attendees=[Attendee(email=x, response="needs_action") for x in invited],
        visibility=visibility, recurrence=recurrence, status="confirmed", updated_at=state.now,
    )
    _touch(state, event)
    state.events[event.event_id] = event
    return event


@tool(write=True, sensitive=("event_id", "requester_email", "new_start", "new_end"))
def reschedule_calendar_event(
    state: CalendarState,
    event_id: EventId,
    requester_email: entity_id("person", "Who asks; must be the event's organizer."),
    new_start: Start,
    new_end: Annotated[moment("New end, UTC.", listed="end", role="end") | None,
                       Field(description="New end, UTC (default: keep the duration).")] = None,
) -> Event:
    """Move an event (a whole series if recurring); attendees must answer again. Organizer only."""
    ev = _event(state, event_id)
    requester = _person(state, requester_email, "requester_email")
    _live(ev)
    _organizer_only(ev, requester, "reschedule")
    _not_over(state, ev)
    if new_end is None:
        dur = datetime.fromisoformat(ev.end) - datetime.fromisoformat(ev.start)
        new_end = iso(parse_moment(new_start, "new_start").replace(second=0) + dur)
    s, e = _slot(state, new_start, new_end, "new_start", "new_end")
    require((iso(s), iso(e)) != (ev.start, ev.end), f"event '{event_id}' is already at {_span(s, e)}",
            reason='conflict', rejected=(event_id,))
    room = state.rooms.get(ev.room_id) if ev.room_id else None
    _check_slot(state, s, e, ev.recurrence, ev.organizer_email, room, 1 + len(ev.attendees), skip=event_id)
    ev.start, ev.end = iso(s), iso(e)
    for att in ev.attendees:
        att.response = "needs_action"
    _touch(state, ev)
    return ev


@tool(write=True, sensitive=("event_id", "requester_email"))
def cancel_calendar_event(
    state: CalendarState,
    event_id: EventId,
    requester_email: entity_id("person", "Who asks; must be the event's organizer."),
) -> Event:
    """Cancel an upcoming event (its room is released). Organizer only; cannot be undone."""
    ev = _event(state, event_id)
    requester = _person(state, requester_email, "requester_email")
    require(ev.status != "cancelled", f"event '{event_id}' ('{ev.title}') is already cancelled",
            reason='conflict', rejected=(event_id, ev.title))
    _organizer_only(ev, requester, "cancel")
    _not_over(state, ev)
    ev.status = "cancelled"
    _touch(state, ev)
    return ev


@tool(write=True, sensitive=("event_id", "attendee_email"))
def add_event_attendee(state: CalendarState, event_id: EventId, attendee_email: PersonEmail) -> Event:
    """Invite one more person to an event; a booked room must have a seat for them."""
    ev = _event(state, event_id)
    person = _person(state, attendee_email, "attendee_email")
    _live(ev)
    _not_over(state, ev)
    require(person.email != ev.organizer_email, f"{person.email} organizes event '{event_id}' and attends already",
            reason='conflict', rejected=(person.email, event_id))
    att = _invited(ev, person.email)
    require(att is None, f"{person.email} is already invited to '{event_id}' (response: {att.response if att else ''})",
            reason='conflict', params=('response',), rejected=(person.email, event_id))
    if ev.room_id:
        _fits(state.rooms[ev.room_id], 2 + len(ev.attendees))
    ev.attendees.append(Attendee(email=person.email, response="needs_action"))
    _touch(state, ev)
    return ev


@tool(write=True, sensitive=("event_id", "attendee_email"))
def remove_event_attendee(state: CalendarState, event_id: EventId, attendee_email: PersonEmail) -> Event:
    """Uninvite a person from an event; their reminders for it are deleted too."""
    ev = _event(state, event_id)
    person = _person(state, attendee_email, "attendee_email")
    _live(ev)
    require(person.email != ev.organizer_email,
            f"{person.email} is the organizer of '{event_id}' and cannot be removed; cancel the event instead",
            rejected=(person.email, event_id))
    require(_invited(ev, person.email) is not None,
            f"{person.email} is not invited to '{event_id}'; attendees: {known(a.email for a in ev.attendees)}",
            rejected=(person.email, event_id), choices=shown(a.email for a in ev.attendees))
    ev.attendees = [a for a in ev.attendees if a.email != person.email]
    state.reminders = {k: r for k, r in state.reminders.items()
                       if not (r.event_id == event_id and r.person_email == person.email)}
    _touch(state, ev)
    return ev


@tool(write=True, sensitive=("event_id", "attendee_email"))
def respond_to_event_invitation(
    state: CalendarState,
    event_id: EventId,
    attendee_email: PersonEmail,
    response: Annotated[Literal["accepted", "declined", "tentative"], Field(description="The answer to the invitation.")],
) -> Event:
    """Accept, tentatively accept or decline an event invitation on behalf of an invited person."""
    ev = _event(state, event_id)
    person = _person(state, attendee_email, "attendee_email")
    _live(ev)
    _not_over(state, ev)
    require(person.email != ev.organizer_email, f"{person.email} organizes '{event_id}'; organizers do not respond",
            rejected=(person.email, event_id))
    att = _invited(ev, person.email)
    if att is None:
        raise ToolError(f"{person.email} is not invited to '{event_id}'; "
                        f"attendees: {known(a.email for a in ev.attendees)}",
                        rejected=(person.email, event_id),
                        choices=shown(a.email for a in ev.attendees))
    require(att.response != response, f"{person.email}'s response to '{event_id}' is already {response}",
            reason='conflict', params=('response',), rejected=(person.email, event_id, response))
    att.response = response
    _touch(state, ev)
    return ev


@tool(write=True, sensitive=("event_id", "room_id"))
def book_meeting_room(state: CalendarState, event_id: EventId, room_id: RoomId) -> Event:
    """Book a meeting room for an event (replacing its current room); the room must be free and big enough."""
    ev = _event(state, event_id)
    room = _room(state, room_id)
    _live(ev)
    _not_over(state, ev)
    require(ev.room_id != room_id, f"event '{event_id}' is already in room '{room_id}' ({room.name})",
            reason='conflict', rejected=(event_id, room_id))
    _fits(room, 1 + len(ev.attendees))
    _room_free(state, room, datetime.fromisoformat(ev.start), datetime.fromisoformat(ev.end),
               ev.recurrence, event_id)
    ev.room_id, ev.location = room_id, f"{room.name}, {room.building}"
    _touch(state, ev)
    return ev


@tool(write=True, sensitive=("event_id", "person_email"))
def set_event_reminder(
    state: CalendarState,
    event_id: EventId,
    person_email: entity_id("person", "Who gets reminded: the organizer or an invited person."),
    minutes_before: Annotated[int, Field(ge=0, le=10080, description="How long before the next occurrence (0-10080).")],
    method: Annotated[ReminderMethod, Field(description="How the reminder is delivered.")] = "popup",
) -> Reminder:
    """Add a reminder for a person before the event's next occurrence."""
    ev = _event(state, event_id)
    person = _person(state, person_email, "person_email")
    _live(ev)
    require(person.email == ev.organizer_email or _invited(ev, person.email) is not None,
            f"{person.email} is neither the organizer nor invited to '{event_id}'",
            rejected=(person.email, event_id))
    now = state.now_dt()
    nxt = next((a for a, _ in occurrences(ev.start, ev.end, ev.recurrence, now, now + timedelta(days=70))
                if a >= now), None)
    if nxt is None:
        raise ToolError(f"event '{event_id}' has no upcoming occurrence (it started {ev.start})",
                        rejected=(event_id, ev.start))
    lead = (nxt - now) // timedelta(minutes=1)
    require(minutes_before <= lead, f"a reminder {minutes_before} minutes before {iso(nxt)} would fire in "
            f"the past (now is {state.now}); minutes_before can be at most {lead}",
            reason='limit', params=('minutes_before',), rejected=(minutes_before, state.now, lead))
    dup = next((r for r in state.reminders.values() if r.event_id == event_id and r.person_email == person.email
                and r.minutes_before == minutes_before and r.method == method), None)
    require(dup is None, f"{person.email} already has this reminder for '{event_id}' "
            f"({dup.reminder_id if dup else ''})",
            reason='conflict', rejected=(person.email, event_id))
    reminder = Reminder(reminder_id=state.new_id("REM"), event_id=event_id, person_email=person.email,
                        minutes_before=minutes_before, method=method)
    state.reminders[reminder.reminder_id] = reminder
    state.advance()
    return reminder
