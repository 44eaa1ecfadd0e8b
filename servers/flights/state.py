"""Flights server state: airports, flights with per-cabin seat maps, passengers, bookings."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from functools import lru_cache
from math import gcd
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import MONEY, day, entity_id, entity_ids, moment, naming
from prove.env.world import days_before, email, iso, money, person, phone

CabinClass = Literal["economy", "premium_economy", "business", "first"]
FlightStatus = Literal["scheduled", "delayed", "cancelled", "departed"]
BookingStatus = Literal["confirmed", "cancelled", "checked_in"]
LoyaltyTier = Literal["blue", "silver", "gold", "platinum"]

CABINS: tuple[CabinClass, ...] = ("economy", "premium_economy", "business", "first")
"""Cabins from lowest to highest; an upgrade moves right."""
BAG_LIMIT: dict[str, int] = {"economy": 2, "premium_economy": 2, "business": 3, "first": 3}
"""Checked bags allowed per booking; gold and platinum members get one more."""
BAG_FEE: dict[str, float] = {"economy": 40.0, "premium_economy": 30.0, "business": 0.0, "first": 0.0}
CHANGE_FEE: dict[str, float] = {"economy": 75.0, "premium_economy": 50.0, "business": 0.0, "first": 0.0}
REFUND_RATE: dict[str, float] = {"economy": 0.5, "premium_economy": 0.75, "business": 1.0, "first": 1.0}
"""Share of the price paid refunded on cancellation (everything when the airline cancelled)."""
UPGRADE_MILES: dict[str, int] = {"economy": 0, "premium_economy": 15000, "business": 40000, "first": 70000}
"""Miles value of each cabin; an upgrade costs the difference."""
CHECK_IN_OPENS_H = 24
CHECK_IN_CLOSES_MIN = 45

AirportCode = entity_id("airport", "IATA airport code, e.g. 'LHR'.", min_length=3, max_length=3, example="LHR")
FlightId = entity_id("flight", "Flight id, e.g. 'FLT-0012' (from search_flights).", example="FLT-0012")
FlightNumber = entity_id("flight_number", "Flight number (airline code and number), e.g. 'KX214'.",
                         min_length=3, max_length=8, example="KX214")
PassengerId = entity_id("passenger", "Passenger id, e.g. 'PAX-0003'.", example="PAX-0003")
BookingId = entity_id("booking", "Booking id, e.g. 'BKG-0007'.", example="BKG-0007")
SeatId = entity_id("seat", "Seat id: row number and letter, e.g. '12A'.", min_length=2, max_length=4, example="12A")
SeatIds = entity_ids("seat", "Seat ids, in seat order.")


def seat_key(seat: str) -> tuple[int, str]:
    """Sort key for seat ids: row number, then letter ('9C' before '12A')."""
    return int(seat[:-1]), seat[-1]


@lru_cache(maxsize=64)
def _seat_ids(first_row: int, last_row: int, letters: str) -> tuple[str, ...]:
    return tuple(f"{r}{c}" for r in range(first_row, last_row + 1) for c in letters)


class Airport(Record):
    code: AirportCode
    name: str = Field(json_schema_extra=naming("name"))
    city: str
    country: str


class Cabin(Record):
    cabin: CabinClass
    first_row: int
    last_row: int
    letters: str = Field(description="Seat letters in every row of this cabin, e.g. 'ABCDEF'.")
    price: float = Field(json_schema_extra={MONEY: True}, description="One-way fare in USD for this cabin.")
    taken: SeatIds = Field(default_factory=list, description="Occupied seat ids, in seat order.")

    def seats(self) -> list[str]:
        return list(_seat_ids(self.first_row, self.last_row, self.letters))

    def free(self) -> list[str]:
        taken = set(self.taken)
        return [s for s in self.seats() if s not in taken]

    def capacity(self) -> int:
        return (self.last_row - self.first_row + 1) * len(self.letters)


class Flight(Record):
    flight_id: FlightId
    flight_number: FlightNumber
    airline: str
    origin: AirportCode
    destination: AirportCode
    departure: moment("Scheduled departure, local time.")
    arrival: moment("Scheduled arrival, local time.")
    aircraft: str
    status: FlightStatus
    delay_minutes: int = 0
    gate: str
    cabins: dict[CabinClass, Cabin]


class Passenger(Record):
    passenger_id: PassengerId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    phone: str
    passport_number: str
    passport_expiry: day("Passport expiry date.")
    nationality: str
    loyalty_tier: LoyaltyTier
    miles: int


class Booking(Record):
    booking_id: BookingId
    passenger_id: PassengerId
    flight_id: FlightId
    cabin: CabinClass = Field(description="Cabin flown, after any upgrade.")
    fare_cabin: CabinClass = Field(description="Cabin of the fare bought; sets refund and change rules.")
    upgrade_miles: int = Field(0, description="Miles spent upgrading; returned on cancellation.")
    seat: SeatId | None = Field(description="Seat id; None once cancelled.")
    status: BookingStatus
    checked_bags: int = 0
    price_paid: float = Field(json_schema_extra={MONEY: True}, description="Everything charged so far in USD: fare, bags, fees.")
    refund_amount: float = Field(0.0, json_schema_extra={MONEY: True})
    booked_at: moment("When the booking was made.")
    checked_in_at: moment("When the booking was checked in.") | None = None


class FlightState(ServerState):
    airports: dict[str, Airport] = Field(default_factory=dict)
    flights: dict[str, Flight] = Field(default_factory=dict)
    passengers: dict[str, Passenger] = Field(default_factory=dict)
    bookings: dict[str, Booking] = Field(default_factory=dict)


_AIRPORTS = (
    ("JFK", "John F. Kennedy International", "New York", "United States", "na"),
    ("LAX", "Los Angeles International", "Los Angeles", "United States", "na"),
    ("ORD", "O'Hare International", "Chicago", "United States", "na"),
    ("SFO", "San Francisco International", "San Francisco", "United States", "na"),
    ("BOS", "Logan International", "Boston", "United States", "na"),
    ("SEA", "Seattle-Tacoma International", "Seattle", "United States", "na"),
    ("YYZ", "Toronto Pearson International", "Toronto", "Canada", "na"),
    ("LHR", "Heathrow", "London", "United Kingdom", "eu"),
    ("CDG", "Charles de Gaulle", "Paris", "France", "eu"),
    ("AMS", "Schiphol", "Amsterdam", "Netherlands", "eu"),
    ("FRA", "Frankfurt am Main", "Frankfurt", "Germany", "eu"),
    ("MAD", "Adolfo Suarez Madrid-Barajas", "Madrid", "Spain", "eu"),
    ("LIS", "Humberto Delgado", "Lisbon", "Portugal", "eu"),
    ("FCO", "Leonardo da Vinci-Fiumicino", "Rome", "Italy", "eu"),
    ("CPH", "Copenhagen Kastrup", "Copenhagen", "Denmark", "eu"),
    ("DUB", "Dublin", "Dublin", "Ireland", "eu"),
    ("NRT", "Narita International", "Tokyo", "Japan", "apac"),
    ("SIN", "Changi", "Singapore", "Singapore", "apac"),
    ("SYD", "Kingsford Smith", "Sydney", "Australia", "apac"),
)
_AIRLINES = (("KX", "Kestrel Air"), ("OW", "Orion Wings"), ("TL", "Tern Lines"))
# aircraft -> cabins as (cabin, first_row, last_row, letters)
_AIRCRAFT: dict[str, tuple[tuple[CabinClass, int, int, str], ...]] = {
    "Embraer E195-E2": (("business", 1, 2, "ACD"), ("economy", 3, 14, "ABCD")),
    "Airbus A320neo": (("business", 1, 3, "ACDF"), ("economy", 4, 18, "ABCDEF")),
    "Airbus A321neo": (("business", 1, 3, "ACDF"), ("premium_economy", 4, 6, "ABCDEF"),
                       ("economy", 7, 20, "ABCDEF")),
    "Boeing 787-9": (("business", 1, 5, "ADGK"), ("premium_economy", 10, 12, "ACDGHK"),
                     ("economy", 20, 30, "ABCDEFGHK")),
    "Airbus A350-900": (("first", 1, 1, "AK"), ("business", 2, 6, "ADGK"),
                        ("premium_economy", 10, 12, "ACDGHK"), ("economy", 20, 30, "ABCDEFGHK")),
}
_STEPS = (1, 5, 7, 11, 13, 17)
_FARE_FACTOR = {"economy": 1.0, "premium_economy": 1.7, "business": 3.4, "first": 6.0}


def initial_state(seed: int) -> FlightState:
    """16 airports, ~70 flights over five days, ~30 passengers and ~55 bookings; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-03-16T09:00"
    now_dt = datetime.fromisoformat(now)
    state = FlightState(now=now)
    flt_id, pax_id, bkg_id = Counter("FLT"), Counter("PAX"), Counter("BKG")
    chosen = sorted(rng.sample(_AIRPORTS, 16))
    region = {code: reg for code, _, _, _, reg in chosen}
    for code, name, city, country, _ in chosen:
        state.airports[code] = Airport(code=code, name=name, city=city, country=country)
    codes = list(region)
    routes: list[tuple[str, str]] = []
    while len(routes) < 12:
        a, b = rng.sample(codes, 2)
        if (a, b) in routes or (region[a] != region[b] and rng.random() < 0.5):
            continue
        routes.append((a, b))
        if len(routes) < 12 and (b, a) not in routes and rng.random() < 0.5:
            routes.append((b, a))
    used_numbers: set[str] = set()
    days = [(now_dt + timedelta(days=d)).date().isoformat() for d in range(-1, 4)]
    pending: list[Flight] = []
    for origin, dest in routes:
        long_haul = region[origin] != region[dest]
        minutes = rng.randrange(420, 840, 5) if long_haul else rng.randrange(60, 330, 5)
        base = money(rng, 380, 950) if long_haul else money(rng, 79, 320)
        for _ in range(rng.choice((1, 1, 2))):
            code, airline = rng.choice(_AIRLINES)
            number = f"{code}{rng.randrange(100, 1000)}"
            while number in used_numbers:
                number = f"{code}{rng.randrange(100, 1000)}"
            used_numbers.add(number)
            dep_min = rng.randrange(6 * 60, 22 * 60, 5)
            aircraft = rng.choice(("Boeing 787-9", "Airbus A350-900") if long_haul
                                  else ("Embraer E195-E2", "Airbus A320neo", "Airbus A321neo"))
            for when in days:
                if rng.random() < 0.15:
                    continue
                dep = datetime.fromisoformat(when) + timedelta(minutes=dep_min)
                status: FlightStatus = "scheduled"
                delay = 0
                if dep < now_dt:
                    status = "departed"
                elif rng.random() < 0.06:
                    status = "cancelled"
                elif rng.random() < 0.12:
                    status, delay = "delayed", rng.randrange(15, 185, 5)
                fare = base * rng.uniform(0.8, 1.25)
                pending.append(Flight(
                    flight_id="", flight_number=number, airline=airline, origin=origin,
                    destination=dest, departure=iso(dep), arrival=iso(dep + timedelta(minutes=minutes)),
                    aircraft=aircraft, status=status, delay_minutes=delay,
                    gate=f"{rng.choice('ABCDE')}{rng.randrange(1, 40)}",
                    cabins={c: Cabin(cabin=c, first_row=r0, last_row=r1, letters=letters,
                                     price=round(fare * _FARE_FACTOR[c], 2))
                            for c, r0, r1, letters in _AIRCRAFT[aircraft]},
                ))
    pending.sort(key=lambda f: (f.departure, f.flight_number))
    for flight in pending:
        flight.flight_id = flt_id()
        state.flights[flight.flight_id] = flight
    weights = {"economy": 8, "premium_economy": 3, "business": 2, "first": 1}
    for _ in range(rng.randrange(26, 34)):
        name = person(rng)
        pid = pax_id()
        expiry = f"{rng.randrange(2026, 2035)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
        if rng.random() < 0.1:
            expiry = f"2026-03-{rng.randrange(1, 16):02d}"  # expired: must be renewed before check-in
        state.passengers[pid] = Passenger(
            passenger_id=pid, name=name, email=email(name, "flymail.example.com"), phone=phone(rng),
            passport_number=f"{rng.choice('XYKPLM')}{rng.choice('ABCDEFGH')}{rng.randrange(10**6, 10**7)}",
            passport_expiry=expiry, nationality=rng.choice([a[3] for a in _AIRPORTS]),
            loyalty_tier=rng.choices(["blue", "silver", "gold", "platinum"], weights=[6, 3, 2, 1])[0],
            miles=rng.randrange(0, 160_000, 250),
        )
        for flight in rng.sample(pending, rng.randrange(1, 4)):
            open_cabins = [c for c in flight.cabins.values() if len(c.taken) < c.capacity()]
            cabin = rng.choices(open_cabins, weights=[weights[c.cabin] for c in open_cabins])[0]
            dep = datetime.fromisoformat(flight.departure)
            opens = dep - timedelta(hours=CHECK_IN_OPENS_H)
            bstatus: BookingStatus = "confirmed"
            if rng.random() < 0.12:
                bstatus = "cancelled"
            elif flight.status == "departed" or (
                opens <= now_dt and flight.status != "cancelled" and expiry > flight.departure[:10]
                and rng.random() < 0.5
            ):
                bstatus = "checked_in"
            bags = rng.choice((0, 0, 1, 1, 2))
            price = round(cabin.price + bags * BAG_FEE[cabin.cabin], 2)
            seat = None
            if bstatus != "cancelled":
                seat = rng.choice(cabin.free())
                cabin.taken.append(seat)
            checked_in_at = None
            if bstatus == "checked_in":
                closes = min(now_dt, dep - timedelta(minutes=CHECK_IN_CLOSES_MIN))
                span = max(int((closes - opens).total_seconds() // 60), 1)
                checked_in_at = iso(opens + timedelta(minutes=rng.randrange(span)))
            bid = bkg_id()
            state.bookings[bid] = Booking(
                booking_id=bid, passenger_id=pid, flight_id=flight.flight_id, cabin=cabin.cabin,
                fare_cabin=cabin.cabin,
                seat=seat, status=bstatus, checked_bags=bags, price_paid=price,
                refund_amount=round(price * REFUND_RATE[cabin.cabin], 2) if bstatus == "cancelled" else 0.0,
                booked_at=days_before(now, rng, 60, 2), checked_in_at=checked_in_at,
            )
    # Other travellers fill the cabins (in a seeded affine order: cheap and varied); some sell out.
    for flight in pending:
        for cabin in flight.cabins.values():
            seats, n = cabin.seats(), cabin.capacity()
            booked = set(cabin.taken)
            full = rng.random() < (0.4 if cabin.cabin == "first" else 0.06)
            k = n if full else len(booked) + int((n - len(booked)) * rng.uniform(0.2, 0.85))
            step, start = rng.choice(_STEPS), rng.randrange(n)
            while gcd(step, n) != 1:
                step += 1
            order = [seats[(start + j * step) % n] for j in range(k)]
            taken = booked.union([s for s in order if s not in booked][: k - len(booked)])
            j = k
            while len(taken) < k:  # booked seats were among the first k in `order`
                taken.add(seats[(start + j * step) % n])
                j += 1
            cabin.taken = [s for s in seats if s in taken]
    return state
