"""Flight booking tools: airports, flight search and status, seat maps, bookings, check-in, miles."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, lookup, require, shown
from prove.env.tool import ToolError, tool
from prove.env.types import (
    DEFAULT_LIMIT,
    MONEY,
    Limit,
    Offset,
    Page,
    day,
    entity_id,
    measure,
    parse_day,
    text,
)
from prove_servers.flights.state import (
    BAG_FEE,
    BAG_LIMIT,
    CABINS,
    CHANGE_FEE,
    CHECK_IN_CLOSES_MIN,
    CHECK_IN_OPENS_H,
    REFUND_RATE,
    UPGRADE_MILES,
    Airport,
    AirportCode,
    Booking,
    BookingId,
    BookingStatus,
    Cabin,
    CabinClass,
    Flight,
    FlightId,
    FlightNumber,
    FlightState,
    FlightStatus,
    LoyaltyTier,
    Passenger,
    PassengerId,
    SeatId,
    SeatIds,
    seat_key,
)

_SEAT = re.compile(r"^(\d{1,2})([A-K])$")
_PASSPORT = re.compile(r"^[A-Z0-9]{6,9}$")
_REBOOK = "change_booking_flight rebooks it, cancel_flight_booking refunds it in full"
_BOARDING_GROUP = {"first": 1, "business": 1, "premium_economy": 2, "economy": 3}


class AirportList(Page):
    airports: list[Airport]


class _FlightBase(BaseModel):
    flight_id: FlightId
    flight_number: FlightNumber
    airline: str
    origin: AirportCode
    destination: AirportCode
    departure: str
    arrival: str
    status: FlightStatus
    delay_minutes: int


class FlightSummary(_FlightBase):
    fares: dict[str, float] = Field(description="Fare in USD per cabin offered.")
    seats_left: dict[str, int] = Field(description="Free seats per cabin offered.")


class FlightSearchResult(Page):
    flights: list[FlightSummary]


class CabinSummary(BaseModel):
    cabin: CabinClass
    price: float = Field(json_schema_extra={MONEY: True})
    rows: str = Field(description="Row range of the cabin, e.g. '4-18'.")
    seats_total: int
    seats_left: int
    bag_limit: int = Field(description="Checked bags allowed per booking (gold/platinum: one more).")
    bag_fee: float = Field(json_schema_extra={MONEY: True}, description="Fee in USD per checked bag.")


class FlightDetails(_FlightBase):
    estimated_departure: str
    aircraft: str
    gate: str
    cabins: list[CabinSummary]


class FlightStatusInfo(_FlightBase):
    estimated_departure: str
    estimated_arrival: str
    gate: str


class SeatMap(BaseModel):
    flight_id: FlightId
    cabin: CabinClass
    rows: str
    letters: str
    price: float = Field(json_schema_extra={MONEY: True})
    seats_total: int
    seats_left: int
    free_seats: SeatIds
    taken_seats: SeatIds


class PassengerList(Page):
    passengers: list[Passenger]


class PassengerProfile(Passenger):
    active_bookings: int = Field(description="Confirmed or checked-in bookings.")
    extra_bag_allowance: int = Field(description="Extra checked bags per booking from loyalty tier.")


class BookingView(Booking):
    passenger_name: str
    flight_number: FlightNumber
    origin: AirportCode
    destination: AirportCode
    departure: str


class BookingList(Page):
    bookings: list[BookingView]


class FlightChangeReceipt(BaseModel):
    booking: BookingView
    previous_flight_id: FlightId
    fare_difference: float = Field(json_schema_extra={MONEY: True}, description="New fare minus old fare; only a positive one is charged.")
    change_fee: float = Field(json_schema_extra={MONEY: True})
    amount_charged: float = Field(json_schema_extra={MONEY: True})


class BagReceipt(BaseModel):
    booking_id: BookingId
    checked_bags: int
    bag_limit: int
    fee_charged: float = Field(json_schema_extra={MONEY: True})
    price_paid: float = Field(json_schema_extra={MONEY: True})


class BoardingPass(BaseModel):
    booking_id: BookingId
    passenger_name: str
    flight_number: FlightNumber
    origin: AirportCode
    destination: AirportCode
    departure: str = Field(description="Estimated departure, including any delay.")
    gate: str
    cabin: CabinClass
    seat: SeatId
    boarding_group: int


class UpgradeReceipt(BaseModel):
    booking: BookingView
    previous_cabin: CabinClass
    miles_used: int
    miles_left: int


# -- helpers -------------------------------------------------------------------------------


def _flight(state: FlightState, flight_id: str, param: str = "flight_id") -> Flight:
    return find(state.flights, flight_id)


def _booking(state: FlightState, booking_id: str) -> Booking:
    return find(state.bookings, booking_id)


def _passenger(state: FlightState, passenger_id: str) -> Passenger:
    return find(state.passengers, passenger_id)


def _airport(state: FlightState, code: str, param: str) -> Airport:
    return lookup(state.airports, code.strip().upper(), param, "airport")


def _est_departure(flight: Flight) -> datetime:
    return datetime.fromisoformat(flight.departure) + timedelta(minutes=flight.delay_minutes)


def _label(flight: Flight) -> str:
    return f"flight {flight.flight_id} ({flight.flight_number}, {flight.departure})"


def _departed(state: FlightState, flight: Flight) -> bool:
    return flight.status == "departed" or _est_departure(flight) <= state.now_dt()


def _flying(state: FlightState, flight: Flight, action: str, hint: str = _REBOOK) -> None:
    """Require a flight that has neither departed nor been cancelled by the airline."""
    require(not _departed(state, flight), f"{_label(flight)} has departed; {action} is no longer possible",
            rejected=(action,))
    require(flight.status != "cancelled", f"{_label(flight)} was cancelled by the airline; {hint}",
            rejected=(hint,))


def _cabin(flight: Flight, cabin: str, param: str | None = "cabin") -> Cabin:
    found = flight.cabins.get(cabin)  # type: ignore[call-overload]
    where = f" (parameter '{param}')" if param else ""
    require(found is not None, f"{_label(flight)} has no {cabin} cabin on its {flight.aircraft}"
            f"{where}; cabins offered: {', '.join(flight.cabins)}",
            params=('cabin',), rejected=(cabin, flight.aircraft, where),
            choices=tuple(flight.cabins))
    assert found is not None
    return found


def _seats_left(cabin: Cabin) -> int:
    return cabin.capacity() - len(cabin.taken)


def _has_room(flight: Flight, cabin: Cabin) -> None:
    others = [f"{c.cabin} ({_seats_left(c)} left)" for c in flight.cabins.values()
              if c.cabin != cabin.cabin and _seats_left(c) > 0]
    require(_seats_left(cabin) > 0, f"{cabin.cabin} on {_label(flight)} is sold out "
            f"({cabin.capacity()} of {cabin.capacity()} seats taken); cabins with seats: "
            f"{', '.join(others) or '(none)'}",
            reason='conflict', rejected=(cabin.cabin,), choices=tuple(others))


def _rows(cabin: Cabin) -> str:
    return f"{cabin.first_row}-{cabin.last_row}"


def _free_hint(cabin: Cabin) -> str:
    free = cabin.free()
    return f"free {cabin.cabin} seats include {known(free, 8)} ({len(free)} free)"


def _check_seat(flight: Flight, cabin: Cabin, seat: str) -> str:
    """Normalise `seat` and check it exists in `cabin` and is free; return it."""
    seat = seat.strip().upper()
    m = _SEAT.match(seat)
    require(m is not None, f"seat must be a row number and a letter like '12A', got '{seat}'",
            params=('seat',), rejected=(seat,))
    assert m is not None
    row, letter = int(m.group(1)), m.group(2)
    if not (cabin.first_row <= row <= cabin.last_row and letter in cabin.letters):
        other = next((c.cabin for c in flight.cabins.values()
                      if c.first_row <= row <= c.last_row and letter in c.letters), None)
        where = f"it is in {other}" if other else f"{flight.aircraft} has no such seat"
        raise ToolError(f"seat '{seat}' is not in the {cabin.cabin} cabin of {flight.flight_id} "
                        f"(rows {_rows(cabin)}, letters {cabin.letters}); {where}",
                        params=('cabin', 'seat'),
                        rejected=(seat, cabin.cabin, flight.flight_id, cabin.letters, where))
    require(seat not in cabin.taken,
            f"seat '{seat}' on {flight.flight_id} is already taken; {_free_hint(cabin)}",
            reason='conflict', params=('seat',), rejected=(seat, flight.flight_id))
    return seat


def _take(cabin: Cabin, seat: str | None = None) -> str:
    seat = seat or cabin.free()[0]
    cabin.taken = sorted([*cabin.taken, seat], key=seat_key)
    return seat


def _release(cabin: Cabin, seat: str | None) -> None:
    if seat is not None and seat in cabin.taken:
        cabin.taken = [s for s in cabin.taken if s != seat]


def _no_duplicate(state: FlightState, passenger_id: str, flight: Flight) -> None:
    dup = next((b.booking_id for b in state.bookings.values() if b.passenger_id == passenger_id
                and b.flight_id == flight.flight_id and b.status != "cancelled"), None)
    require(dup is None, f"passenger '{passenger_id}' already holds booking '{dup}' on {_label(flight)}",
            reason='conflict', rejected=(passenger_id, dup))


def _fare(flight: Flight, booking: Booking) -> float:
    """Today's price of the booking's fare on `flight` (its flown cabin if the fare cabin is absent)."""
    cabin = flight.cabins.get(booking.fare_cabin) or flight.cabins[booking.cabin]
    return cabin.price


def _bag_limit(passenger: Passenger, cabin: CabinClass) -> int:
    return BAG_LIMIT[cabin] + (1 if passenger.loyalty_tier in ("gold", "platinum") else 0)


def _not_cancelled_booking(booking: Booking) -> None:
    require(booking.status != "cancelled", f"booking '{booking.booking_id}' is cancelled "
            f"(refunded {booking.refund_amount:.2f} USD); book a new flight with book_flight",
            reason='state', rejected=(booking.booking_id, booking.refund_amount))


def _view(state: FlightState, booking: Booking) -> BookingView:
    flight = state.flights[booking.flight_id]
    return BookingView(
        **booking.model_dump(), passenger_name=state.passengers[booking.passenger_id].name,
        flight_number=flight.flight_number, origin=flight.origin,
        destination=flight.destination, departure=flight.departure,
    )


def _summary(flight: Flight) -> FlightSummary:
    return FlightSummary(
        **flight.model_dump(include=set(_FlightBase.model_fields)),
        fares={c.cabin: c.price for c in flight.cabins.values()},
        seats_left={c.cabin: _seats_left(c) for c in flight.cabins.values()},
    )


# -- reads ---------------------------------------------------------------------------------


@tool()
def list_airports(
    state: FlightState,
    query: text("query", "Case-insensitive substring of the code, airport name or city.", max_length=80, listed="name") = "",
    country: text("word", "Only airports in this country, e.g. 'France'.", listed="country", example="France", optional=True) = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> AirportList:
    """List the airports served, with IATA codes, optionally filtered by name, city or country, a page at a time."""
    q = query.strip().lower()
    found = [
        a for a in state.airports.values()
        if (q in a.code.lower() or q in a.name.lower() or q in a.city.lower())
        and (country is None or a.country.lower() == country.strip().lower())
    ]
    return AirportList.of(found, offset, limit)


@tool(sensitive=("origin", "destination", "max_price"))
def search_flights(
    state: FlightState,
    origin: entity_id("airport", "Departure airport, IATA code, e.g. 'LHR'.", min_length=3, max_length=3, example="LHR"),
    destination: entity_id("airport", "Arrival airport, IATA code, e.g. 'CDG'.", min_length=3, max_length=3, example="CDG"),
    date: Annotated[day("Departure date.") | None, Field(description="Departure date.")] = None,
    cabin: Annotated[CabinClass | None, Field(description="Only flights with free seats in this cabin; max_price applies to it.")] = None,
    max_price: Annotated[float | None, Field(json_schema_extra=measure("money"), gt=0, le=100_000, description="Highest fare in USD (of `cabin`, else of the cheapest cabin with seats).")] = None,
    include_unavailable: Annotated[bool, Field(description="Also list departed, cancelled and sold-out flights.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> FlightSearchResult:
    """Search flights between two airports, optionally on one date, in one cabin and under a price, earliest first."""
    src = _airport(state, origin, "origin")
    dst = _airport(state, destination, "destination")
    require(src.code != dst.code, "origin and destination must differ",
            params=('destination', 'origin'))
    if date is not None:
        parse_day(date, "date")
    found = []
    for f in state.flights.values():
        if f.origin != src.code or f.destination != dst.code or (date and f.departure[:10] != date):
            continue
        open_cabins = [c for c in f.cabins.values() if _seats_left(c) > 0]
        if cabin is not None:
            if cabin not in f.cabins:
                continue
            open_cabins = [c for c in open_cabins if c.cabin == cabin]
        bookable = f.status != "cancelled" and not _departed(state, f) and bool(open_cabins)
        if not include_unavailable and not bookable:
            continue
        if max_price is not None:
            pool = open_cabins or ([f.cabins[cabin]] if cabin else list(f.cabins.values()))
            if min(c.price for c in pool) > max_price:
                continue
        found.append(_summary(f))
    found.sort(key=lambda s: (s.departure, s.flight_id))
    return FlightSearchResult.of(found, offset, limit)


@tool(sensitive=("flight_id",))
def get_flight(state: FlightState, flight_id: FlightId) -> FlightDetails:
    """Get a flight's schedule, aircraft, status, gate and per-cabin fares, free seats and bag rules."""
    f = _flight(state, flight_id)
    return FlightDetails(
        **f.model_dump(exclude={"cabins"}),
        estimated_departure=_est_departure(f).isoformat(timespec="minutes"),
        cabins=[CabinSummary(cabin=c.cabin, price=c.price, rows=_rows(c), seats_total=c.capacity(),
                             seats_left=_seats_left(c), bag_limit=BAG_LIMIT[c.cabin],
                             bag_fee=BAG_FEE[c.cabin]) for c in f.cabins.values()],
    )


@tool(sensitive=("flight_number",))
def get_flight_status(
    state: FlightState,
    flight_number: FlightNumber,
    date: Annotated[day("Departure date.") | None,
                    Field(description="Departure date; default: the next flight not yet departed.")] = None,
) -> FlightStatusInfo:
    """Get the live status of a flight by its number: scheduled, delayed, cancelled or departed, with times and gate."""
    number = flight_number.replace(" ", "").upper()
    runs = [f for f in state.flights.values() if f.flight_number == number]
    numbers = sorted({f.flight_number for f in state.flights.values()})
    require(bool(runs), f"flight number '{flight_number}' not found (parameter 'flight_number'); "
            f"known: {known(numbers, 12)}",
            reason='not_found', params=('flight_number',), rejected=(flight_number,),
            choices=shown(numbers, 12))
    if date is not None:
        parse_day(date, "date")
        match = [f for f in runs if f.departure[:10] == date]
        require(bool(match), f"{number} does not operate on {date}; it departs on "
                + ", ".join(f.departure[:10] for f in runs),
                rejected=(number, date), choices=tuple(f.departure[:10] for f in runs))
    else:
        match = [f for f in runs if not _departed(state, f)] or runs[-1:]
    f = match[0]
    arrival = datetime.fromisoformat(f.arrival) + timedelta(minutes=f.delay_minutes)
    return FlightStatusInfo(
        **f.model_dump(include=set(_FlightBase.model_fields)), gate=f.gate,
        estimated_departure=_est_departure(f).isoformat(timespec="minutes"),
        estimated_arrival=arrival.isoformat(timespec="minutes"),
    )


@tool(sensitive=("flight_id",))
def get_seat_map(
    state: FlightState,
    flight_id: FlightId,
    cabin: Annotated[CabinClass, Field(description="Cabin whose seats to show.")] = "economy",
) -> SeatMap:
    """Show one cabin of a flight: its rows and seat letters, fare, and which seats are free or taken."""
    f = _flight(state, flight_id)
    c = _cabin(f, cabin)
    return SeatMap(flight_id=f.flight_id, cabin=c.cabin, rows=_rows(c), letters=c.letters,
                   price=c.price, seats_total=c.capacity(), seats_left=_seats_left(c),
                   free_seats=c.free(), taken_seats=list(c.taken))


@tool()
def search_passengers(
    state: FlightState,
    query: text("query", "Case-insensitive substring of the name or email.", max_length=80, listed="name") = "",
    loyalty_tier: Annotated[LoyaltyTier | None, Field(description="Only members of this loyalty tier.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> PassengerList:
    """Find airline passengers (travellers with a profile) by name or email, optionally by loyalty tier."""
    q = query.strip().lower()
    found = [
        p for p in state.passengers.values()
        if (q in p.name.lower() or q in p.email.lower())
        and (loyalty_tier is None or p.loyalty_tier == loyalty_tier)
    ]
    return PassengerList.of(found, offset, limit)


@tool(sensitive=("passenger_id",))
def get_passenger_profile(state: FlightState, passenger_id: PassengerId) -> PassengerProfile:
    """Get a passenger's profile: contact details, passport, loyalty tier and miles balance."""
    p = _passenger(state, passenger_id)
    active = sum(1 for b in state.bookings.values()
                 if b.passenger_id == passenger_id and b.status != "cancelled")
    return PassengerProfile(**p.model_dump(), active_bookings=active,
                            extra_bag_allowance=_bag_limit(p, "economy") - BAG_LIMIT["economy"])


@tool(sensitive=("passenger_id",))
def list_passenger_bookings(
    state: FlightState,
    passenger_id: PassengerId,
    status: Annotated[BookingStatus | None, Field(description="Only bookings in this status.")] = None,
    upcoming_only: Annotated[bool, Field(description="Only bookings on flights that have not departed.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> BookingList:
    """List a passenger's flight bookings, ordered by departure."""
    _passenger(state, passenger_id)
    found = [
        b for b in state.bookings.values()
        if b.passenger_id == passenger_id and (status is None or b.status == status)
        and not (upcoming_only and _departed(state, state.flights[b.flight_id]))
    ]
    found.sort(key=lambda b: (state.flights[b.flight_id].departure, b.booking_id))
    return BookingList.of(found, offset, limit, view=lambda b: _view(state, b))


@tool(sensitive=("booking_id",))
def get_flight_booking(state: FlightState, booking_id: BookingId) -> BookingView:
    """Get one flight booking: passenger, flight, cabin, seat, status, bags and amount paid."""
    return _view(state, _booking(state, booking_id))


# -- writes --------------------------------------------------------------------------------


@tool(write=True, sensitive=("passenger_id", "flight_id", "seat"))
def book_flight(
    state: FlightState,
    passenger_id: PassengerId,
    flight_id: FlightId,
    cabin: Annotated[CabinClass, Field(description="Cabin class to book.")] = "economy",
    seat: Annotated[SeatId | None, Field(description="Seat id such as '12A'; default: the first free seat.")] = None,
    checked_bags: Annotated[int, Field(ge=0, le=4, description="Checked bags to add now (fee per bag depends on cabin).")] = 0,
) -> BookingView:
    """Book a seat on a flight for a passenger; charges the cabin fare plus checked-bag fees."""
    p = _passenger(state, passenger_id)
    f = _flight(state, flight_id)
    _flying(state, f, "booking", "search_flights for another flight on this route")
    c = _cabin(f, cabin)
    _no_duplicate(state, p.passenger_id, f)
    _has_room(f, c)
    if seat is not None:
        seat = _check_seat(f, c, seat)
    limit = _bag_limit(p, cabin)
    require(checked_bags <= limit, f"checked_bags {checked_bags} exceeds the {cabin} limit of {limit} "
            f"bags for a {p.loyalty_tier} member",
            reason='limit', params=('checked_bags', 'limit'),
            rejected=(checked_bags, cabin, limit, p.loyalty_tier))
    state.advance()
    booking = Booking(
        booking_id=state.new_id("BKG"), passenger_id=p.passenger_id, flight_id=f.flight_id,
        cabin=cabin, fare_cabin=cabin, seat=_take(c, seat), status="confirmed", checked_bags=checked_bags,
        price_paid=round(c.price + checked_bags * BAG_FEE[cabin], 2), booked_at=state.now,
    )
    state.bookings[booking.booking_id] = booking
    return _view(state, booking)


@tool(write=True, sensitive=("booking_id",))
def cancel_flight_booking(state: FlightState, booking_id: BookingId) -> BookingView:
    """Cancel a flight booking before departure: refunds part of the price (all of it if the airline cancelled) and any upgrade miles."""
    b = _booking(state, booking_id)
    require(b.status != "cancelled", f"booking '{booking_id}' is already cancelled "
            f"(refunded {b.refund_amount:.2f} USD)",
            reason='conflict', rejected=(booking_id, b.refund_amount))
    f = state.flights[b.flight_id]
    require(not _departed(state, f), f"{_label(f)} has departed; cancellation is no longer possible")
    rate = 1.0 if f.status == "cancelled" else REFUND_RATE[b.fare_cabin]
    state.advance()
    _release(f.cabins[b.cabin], b.seat)
    b.status, b.seat, b.checked_in_at = "cancelled", None, None
    b.refund_amount = round(b.price_paid * rate, 2)
    state.passengers[b.passenger_id].miles += b.upgrade_miles
    return _view(state, b)


@tool(write=True, sensitive=("booking_id", "new_flight_id"))
def change_booking_flight(
    state: FlightState,
    booking_id: BookingId,
    new_flight_id: entity_id("flight", "Flight to move to, same origin and destination, e.g. 'FLT-0031'.", example="FLT-0031"),
) -> FlightChangeReceipt:
    """Move a confirmed booking to another flight on the same route in the same cabin; charges any fare increase and the change fee (both waived if the airline cancelled the old flight)."""
    b = _booking(state, booking_id)
    _not_cancelled_booking(b)
    require(b.status != "checked_in", f"booking '{booking_id}' is checked in; flight changes "
            "close at check-in", rejected=(booking_id,))
    old = state.flights[b.flight_id]
    require(new_flight_id != old.flight_id, f"booking '{booking_id}' is already on {_label(old)}; "
            "choose a different flight (parameter 'new_flight_id')",
            reason='conflict', params=('new_flight_id',), rejected=(booking_id,))
    require(not _departed(state, old), f"{_label(old)} has departed; the booking can no longer change")
    new = _flight(state, new_flight_id, "new_flight_id")
    alternatives = [f.flight_id for f in state.flights.values()
                    if f.origin == old.origin and f.destination == old.destination
                    and f.flight_id != old.flight_id and f.status != "cancelled" and not _departed(state, f)]
    require(new.origin == old.origin and new.destination == old.destination,
            f"{new.flight_id} flies {new.origin}-{new.destination} but the booking is "
            f"{old.origin}-{old.destination}; flights on that route: {known(alternatives)}",
            rejected=(new.flight_id, new.origin, new.destination, old.origin, old.destination),
            choices=shown(alternatives))
    _flying(state, new, "booking it", f"other flights on this route: {known(alternatives)}")
    _no_duplicate(state, b.passenger_id, new)
    cabin = _cabin(new, b.cabin, None)
    _has_room(new, cabin)
    waived = old.status == "cancelled"
    diff = round(_fare(new, b) - _fare(old, b), 2)
    fee = 0.0 if waived else CHANGE_FEE[b.fare_cabin]
    charged = round(fee + (0.0 if waived else max(diff, 0.0)), 2)
    state.advance()
    _release(old.cabins[b.cabin], b.seat)
    keep = b.seat if b.seat and b.seat not in cabin.taken and b.seat in cabin.seats() else None
    b.seat = _take(cabin, keep)
    b.flight_id = new.flight_id
    b.price_paid = round(b.price_paid + charged, 2)
    return FlightChangeReceipt(booking=_view(state, b), previous_flight_id=old.flight_id,
                               fare_difference=diff, change_fee=fee, amount_charged=charged)


@tool(write=True, sensitive=("booking_id", "seat"))
def select_seat(state: FlightState, booking_id: BookingId, seat: SeatId) -> BookingView:
    """Move a confirmed booking to another free seat in its cabin (see get_seat_map)."""
    b = _booking(state, booking_id)
    _not_cancelled_booking(b)
    require(b.status != "checked_in", f"booking '{booking_id}' is checked in; seat changes after "
            "check-in are made at the gate", params=('seat',), rejected=(booking_id,))
    f = state.flights[b.flight_id]
    _flying(state, f, "seat selection")
    c = f.cabins[b.cabin]
    require(seat.strip().upper() != b.seat, f"booking '{booking_id}' already has seat {b.seat}",
            reason='conflict', params=('seat',), rejected=(booking_id, b.seat))
    seat = _check_seat(f, c, seat)
    _release(c, b.seat)
    b.seat = _take(c, seat)
    return _view(state, b)


@tool(write=True, sensitive=("booking_id",))
def add_checked_bag(
    state: FlightState,
    booking_id: BookingId,
    count: Annotated[int, Field(ge=1, le=3, description="Number of bags to add.")] = 1,
) -> BagReceipt:
    """Add checked bags to a booking, within its cabin's limit; the per-bag fee is charged."""
    b = _booking(state, booking_id)
    _not_cancelled_booking(b)
    f = state.flights[b.flight_id]
    _flying(state, f, "adding bags")
    p = state.passengers[b.passenger_id]
    limit = _bag_limit(p, b.cabin)
    require(b.checked_bags + count <= limit, f"baggage limit: {b.cabin} allows {limit} checked bags "
            f"for a {p.loyalty_tier} member; booking '{booking_id}' has {b.checked_bags}, "
            f"so at most {limit - b.checked_bags} more",
            reason='limit', params=('limit',),
            rejected=(b.cabin, limit, p.loyalty_tier, booking_id, b.checked_bags))
    fee = round(count * BAG_FEE[b.cabin], 2)
    b.checked_bags += count
    b.price_paid = round(b.price_paid + fee, 2)
    return BagReceipt(booking_id=b.booking_id, checked_bags=b.checked_bags, bag_limit=limit,
                      fee_charged=fee, price_paid=b.price_paid)


@tool(write=True, sensitive=("booking_id",))
def check_in_for_flight(state: FlightState, booking_id: BookingId) -> BoardingPass:
    """Check a booking in and issue its boarding pass; open from 24 hours until 45 minutes before (estimated) departure."""
    b = _booking(state, booking_id)
    _not_cancelled_booking(b)
    require(b.status != "checked_in", f"booking '{booking_id}' is already checked in "
            f"(at {b.checked_in_at}, seat {b.seat})",
            reason='conflict', params=('seat',), rejected=(booking_id, b.checked_in_at, b.seat))
    f = state.flights[b.flight_id]
    _flying(state, f, "check-in")
    dep = _est_departure(f)
    opens = dep - timedelta(hours=CHECK_IN_OPENS_H)
    closes = dep - timedelta(minutes=CHECK_IN_CLOSES_MIN)
    now = state.now_dt()
    require(now >= opens, f"check-in for {_label(f)} opens at {opens.isoformat(timespec='minutes')}, "
            f"{CHECK_IN_OPENS_H} hours before departure; it is now {state.now}",
            rejected=(CHECK_IN_OPENS_H, state.now))
    require(now <= closes, f"check-in for {_label(f)} closed at {closes.isoformat(timespec='minutes')}, "
            f"{CHECK_IN_CLOSES_MIN} minutes before departure; it is now {state.now}",
            rejected=(CHECK_IN_CLOSES_MIN, state.now))
    p = state.passengers[b.passenger_id]
    require(p.passport_expiry > dep.date().isoformat(), f"passport of '{p.passenger_id}' is not "
            f"valid for this flight (expiry {p.passport_expiry}, departure {dep.date()}); "
            "renew it with update_passenger_passport before check-in",
            rejected=(p.passenger_id, p.passport_expiry))
    assert b.seat is not None
    state.advance()
    b.status, b.checked_in_at = "checked_in", state.now
    group = _BOARDING_GROUP[b.cabin] - (1 if p.loyalty_tier in ("gold", "platinum") and b.cabin != "first" else 0)
    return BoardingPass(booking_id=b.booking_id, passenger_name=p.name, flight_number=f.flight_number,
                        origin=f.origin, destination=f.destination,
                        departure=dep.isoformat(timespec="minutes"), gate=f.gate, cabin=b.cabin,
                        seat=b.seat, boarding_group=max(group, 1))


@tool(write=True, sensitive=("booking_id",))
def redeem_miles_upgrade(
    state: FlightState,
    booking_id: BookingId,
    to_cabin: Annotated[CabinClass, Field(description="Higher cabin to move the booking to.")],
) -> UpgradeReceipt:
    """Upgrade a booking to a higher cabin with the passenger's miles; a new seat in that cabin is assigned."""
    b = _booking(state, booking_id)
    _not_cancelled_booking(b)
    f = state.flights[b.flight_id]
    _flying(state, f, "upgrading")
    higher = [c for c in CABINS[CABINS.index(b.cabin) + 1:] if c in f.cabins]
    require(CABINS.index(to_cabin) > CABINS.index(b.cabin), f"booking '{booking_id}' is already in "
            f"{b.cabin}; upgrades on this flight go to: {', '.join(higher) or '(none)'}",
            reason='conflict', rejected=(booking_id, b.cabin), choices=tuple(higher))
    target = _cabin(f, to_cabin, "to_cabin")
    _has_room(f, target)
    p = state.passengers[b.passenger_id]
    cost = UPGRADE_MILES[to_cabin] - UPGRADE_MILES[b.cabin]
    require(p.miles >= cost, f"insufficient miles: '{p.passenger_id}' has {p.miles:,} miles, "
            f"an upgrade from {b.cabin} to {to_cabin} costs {cost:,}",
            reason='limit', rejected=(p.passenger_id, p.miles, b.cabin, to_cabin, cost))
    previous = b.cabin
    p.miles -= cost
    b.upgrade_miles += cost
    _release(f.cabins[previous], b.seat)
    b.cabin, b.seat = to_cabin, _take(target)
    return UpgradeReceipt(booking=_view(state, b), previous_cabin=previous, miles_used=cost,
                          miles_left=p.miles)


@tool(write=True, sensitive=("passenger_id", "passport_number", "passport_expiry"))
def update_passenger_passport(
    state: FlightState,
    passenger_id: PassengerId,
    passport_number: text("word", "New passport number, 6-9 letters or digits.", listed="passport_number", min_length=6, max_length=12),
    passport_expiry: day("Expiry date of the passport, after today.", listed="passport_expiry", role="expiry"),
) -> Passenger:
    """Record a passenger's new or renewed passport; locked while they are checked in for an upcoming flight."""
    p = _passenger(state, passenger_id)
    number = passport_number.strip().upper()
    require(_PASSPORT.match(number) is not None,
            f"passport_number must be 6-9 letters or digits, got '{passport_number}'",
            params=('passport_number',), rejected=(passport_number,))
    parse_day(passport_expiry, "passport_expiry")
    require(passport_expiry > state.now[:10],
            f"passport_expiry {passport_expiry} is not after today ({state.now[:10]})",
            params=('passport_expiry',), rejected=(passport_expiry,))
    require(not (number == p.passport_number and passport_expiry == p.passport_expiry),
            f"passport {number} expiring {passport_expiry} is already on file for '{passenger_id}'",
            reason='conflict', rejected=(number, passport_expiry, passenger_id))
    other = next((o for o in state.passengers.values()
                  if o.passport_number == number and o.passenger_id != p.passenger_id), None)
    require(other is None, f"passport number {number} is registered to another passenger",
            rejected=(number,))
    locked = next((b for b in state.bookings.values() if b.passenger_id == p.passenger_id
                   and b.status == "checked_in" and not _departed(state, state.flights[b.flight_id])), None)
    require(locked is None, f"'{passenger_id}' is checked in on booking "
            f"'{locked.booking_id if locked else ''}'; passport details are locked until that flight departs",
            rejected=(passenger_id, locked.booking_id if locked else ''))
    p.passport_number, p.passport_expiry = number, passport_expiry
    return p
