"""Hotels server state: hotels, room types with nightly inventory, guests, reservations, reviews."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import MONEY, day, entity_id, naming
from prove.env.world import CITIES, STREETS, days_before, email, person, phone

Amenity = Literal[
    "wifi", "pool", "gym", "spa", "parking", "breakfast", "restaurant", "bar",
    "airport_shuttle", "pet_friendly", "air_conditioning", "ev_charging",
]
CancellationPolicy = Literal["flexible", "moderate", "strict"]
BedType = Literal["single", "twin", "double", "queen", "king"]
GuestTier = Literal["member", "silver", "gold", "platinum"]
ReservationStatus = Literal["confirmed", "cancelled", "checked_in", "checked_out"]
PaymentStatus = Literal["pending", "paid", "refunded", "partially_refunded", "voided"]
SpecialRequestKind = Literal[
    "early_check_in", "late_check_in", "late_check_out", "extra_bed", "crib", "high_floor",
    "quiet_room", "accessible_room", "airport_transfer", "other",
]

AMENITIES: tuple[Amenity, ...] = (
    "wifi", "pool", "gym", "spa", "parking", "breakfast", "restaurant", "bar",
    "airport_shuttle", "pet_friendly", "air_conditioning", "ev_charging",
)
BOOKING_WINDOW_DAYS = 60
"""Nights can be booked from today up to this many days ahead (the inventory horizon)."""
MAX_NIGHTS = 30
POINTS_PER_USD = 100
"""Loyalty points needed for one USD of discount when redeeming."""
EARN_PER_USD = 10
"""Loyalty points earned per USD paid, credited at check-out."""
FREE_CANCEL_HOURS: dict[str, int] = {"flexible": 24, "moderate": 48, "strict": 48}
"""Cancelling at least this many hours before the check-in time is free."""
LATE_FEE_RULE: dict[str, str] = {
    "flexible": "first night", "moderate": "first night", "strict": "50% of the total price",
}
"""What a late cancellation costs under each policy."""
MAX_SPECIAL_REQUESTS = 5

HotelId = entity_id("hotel", "Hotel id, e.g. 'HTL-0003'.", example="HTL-0003")
RoomTypeId = entity_id("room_type", "Room type id, e.g. 'RMT-0007' (from list_hotel_room_types).", example="RMT-0007")
GuestId = entity_id("guest", "Guest id, e.g. 'GST-0002'.", example="GST-0002")
GuestEmail = entity_id("guest_email", "A guest's email address, e.g. 'uma.haddad@guests.example.com'.", example="uma.haddad@guests.example.com")
ReservationId = entity_id("reservation", "Hotel reservation id, e.g. 'HRS-0014'.", example="HRS-0014")
ReviewId = entity_id("review", "Hotel review id, e.g. 'REV-0021'.", example="REV-0021")


class Hotel(Record):
    hotel_id: HotelId
    name: str = Field(json_schema_extra=naming("name"))
    city: str
    address: str
    stars: int = Field(ge=1, le=5)
    amenities: list[Amenity] = Field(description="Amenities on site, sorted.")
    check_in_time: str = Field(description="Earliest check-in time of day, HH:MM.")
    check_out_time: str = Field(description="Latest check-out time of day, HH:MM.")
    cancellation_policy: CancellationPolicy
    phone: str


class RoomType(Record):
    room_type_id: RoomTypeId
    hotel_id: HotelId
    name: str = Field(json_schema_extra=naming("name"))
    bed: BedType
    capacity: int = Field(description="Most guests the room sleeps.")
    base_price: float = Field(json_schema_extra={MONEY: True}, description="Nightly price in USD.")
    size_sqm: int
    inventory: dict[str, int] = Field(
        description="Rooms still free per night (YYYY-MM-DD), for the next 60 nights."
    )


class Guest(Record):
    guest_id: GuestId
    name: str = Field(json_schema_extra=naming("alone"))
    email: GuestEmail
    phone: str
    loyalty_points: int
    tier: GuestTier
    member_since: str


class SpecialRequest(Record):
    kind: SpecialRequestKind
    note: str = ""


class Reservation(Record):
    reservation_id: ReservationId
    hotel_id: HotelId
    room_type_id: RoomTypeId
    guest_id: GuestId
    check_in: day("Arrival date.")
    check_out: day("Departure date.")
    nights: int
    guests: int = Field(description="Number of people staying.")
    additional_guests: list[str] = Field(default_factory=list, description="Names of companions.")
    status: ReservationStatus
    total_price: float = Field(json_schema_extra={MONEY: True}, description="Room price for the stay in USD.")
    points_redeemed: int = 0
    points_discount: float = Field(0.0, description="USD of the total covered by loyalty points.")
    amount_paid: float = Field(0.0, json_schema_extra={MONEY: True})
    amount_due: float = Field(json_schema_extra={MONEY: True}, description="What is still to be paid, USD.")
    payment_status: PaymentStatus
    cancellation_fee: float = Field(0.0, json_schema_extra={MONEY: True})
    special_requests: list[SpecialRequest] = Field(default_factory=list)
    created_at: str
    checked_in_at: str | None = None
    checked_out_at: str | None = None


class Review(Record):
    review_id: ReviewId
    hotel_id: HotelId
    reservation_id: ReservationId
    guest_id: GuestId
    rating: int = Field(ge=1, le=5)
    title: str = Field(json_schema_extra=naming("title"))
    text: str
    created_at: str


class HotelState(ServerState):
    hotels: dict[str, Hotel] = Field(default_factory=dict)
    room_types: dict[str, RoomType] = Field(default_factory=dict)
    guests: dict[str, Guest] = Field(default_factory=dict)
    reservations: dict[str, Reservation] = Field(default_factory=dict)
    reviews: dict[str, Review] = Field(default_factory=dict)


def nights_of(check_in: str, check_out: str) -> list[str]:
    """The nights of a stay: every date from check-in up to the day before check-out."""
    start, end = date.fromisoformat(check_in), date.fromisoformat(check_out)
    return [(start + timedelta(days=i)).isoformat() for i in range((end - start).days)]


_NAME_A = ("Grand", "Royal", "Harbor", "Park", "Riverside", "Old Town", "Central", "Skyline",
           "Garden", "Lakeside", "Maple", "Beacon", "Silver", "Crown")
_NAME_B = ("Hotel", "Inn", "Suites", "Lodge", "Plaza", "Residence", "Palace", "House")
_ROOMS: tuple[tuple[str, BedType, int, float, int], ...] = (
    ("Single Room", "single", 1, 0.7, 14),
    ("Standard Double", "double", 2, 1.0, 20),
    ("Twin Room", "twin", 2, 1.0, 22),
    ("Deluxe Queen", "queen", 2, 1.3, 26),
    ("Superior King", "king", 3, 1.6, 32),
    ("Family Suite", "king", 4, 2.2, 45),
)
_REVIEWS: dict[int, tuple[tuple[str, str], ...]] = {
    5: (("Perfect stay", "Spotless room, friendly staff, would come back."),
        ("Outstanding", "Great location and a wonderful breakfast.")),
    4: (("Very good", "Comfortable bed and quiet room; check-in took a while."),
        ("Lovely hotel", "Nice staff, slightly small bathroom.")),
    3: (("Okay for the price", "Clean but dated; the wifi was slow."),
        ("Average", "Fine for a night, nothing special.")),
    2: (("Disappointing", "Noisy street and the room was not ready on time."),),
    1: (("Would not return", "Dirty carpet and rude reception."),),
}


def initial_state(seed: int) -> HotelState:
    """~24 hotels in 8 cities, ~70 room types, ~30 guests, ~90 reservations; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-03-16T15:30"
    today = date.fromisoformat(now[:10])
    horizon = [(today + timedelta(days=i)).isoformat() for i in range(BOOKING_WINDOW_DAYS)]
    state = HotelState(now=now)
    htl, rmt, gst = Counter("HTL"), Counter("RMT"), Counter("GST")
    hrs, rev = Counter("HRS"), Counter("REV")
    used_names: list[str] = []
    for city in rng.sample(CITIES, 8):
        for _ in range(rng.randrange(2, 5)):
            name = f"{rng.choice(_NAME_A)} {rng.choice(_NAME_B)} {city}"
            if name in used_names:
                continue
            used_names.append(name)
            hid, stars = htl(), rng.choices([2, 3, 4, 5], weights=[2, 4, 4, 2])[0]
            amenities = sorted(rng.sample(AMENITIES, rng.randrange(2 + stars, 5 + stars)))
            state.hotels[hid] = Hotel(
                hotel_id=hid, name=name, city=city, stars=stars, amenities=amenities,
                address=f"{rng.randrange(1, 200)} {rng.choice(STREETS)}, {city}",
                check_in_time=rng.choice(["14:00", "15:00", "16:00"]),
                check_out_time=rng.choice(["10:00", "11:00", "12:00"]),
                cancellation_policy=rng.choices(["flexible", "moderate", "strict"], weights=[3, 2, 2])[0],
                phone=phone(rng),
            )
            for rname, bed, cap, factor, size in sorted(rng.sample(_ROOMS, rng.randrange(2, 5)),
                                                        key=lambda r: r[3]):
                free = rng.choices(range(1, rng.randrange(3, 10)), k=BOOKING_WINDOW_DAYS)
                if rng.random() < 0.3:  # some room types sell out on some nights
                    for i in rng.sample(range(BOOKING_WINDOW_DAYS), rng.randrange(3, 15)):
                        free[i] = 0
                rid = rmt()
                state.room_types[rid] = RoomType(
                    room_type_id=rid, hotel_id=hid, name=rname, bed=bed, capacity=cap,
                    base_price=round((45 + 35 * stars) * factor + rng.randrange(0, 30), 2),
                    size_sqm=size + rng.randrange(0, 6),
                    inventory=dict(zip(horizon, free, strict=True)),
                )
    rooms = list(state.room_types.values())
    for _ in range(rng.randrange(26, 34)):
        name = person(rng)
        points = rng.randrange(0, 60000)
        tier: GuestTier = ("platinum" if points > 45000 else "gold" if points > 25000
                           else "silver" if points > 10000 else "member")
        gid = gst()
        state.guests[gid] = Guest(
            guest_id=gid, name=name, email=email(name, "guests.example.com"), phone=phone(rng),
            loyalty_points=points, tier=tier, member_since=days_before(now, rng, 2500, 30)[:10],
        )
        for _ in range(rng.randrange(1, 5)):
            room = rng.choice(rooms)
            kind = rng.choices(["past", "current", "future", "cancelled"], weights=[4, 1, 4, 1])[0]
            nights = rng.randrange(1, 6)
            if kind == "past":
                start = today - timedelta(days=rng.randrange(nights, 200))
            elif kind == "current":  # arrived on an earlier day, leaves after today
                nights = max(nights, 2)
                start = today - timedelta(days=rng.randrange(1, nights))
            else:
                soon = rng.random() < 0.3  # arriving today or in the next days: check-in, late fees
                start = today + timedelta(days=rng.randrange(0, 3 if soon else BOOKING_WINDOW_DAYS - nights))
            check_in, check_out = start.isoformat(), (start + timedelta(days=nights)).isoformat()
            held = [n for n in nights_of(check_in, check_out) if n in room.inventory]
            if kind in ("current", "future") and any(room.inventory[n] == 0 for n in held):
                kind = "cancelled"
            for n in held if kind in ("current", "future") else ():
                room.inventory[n] -= 1
            total = round(room.base_price * nights, 2)
            status: ReservationStatus = {"past": "checked_out", "current": "checked_in",
                                         "future": "confirmed", "cancelled": "cancelled"}[kind]
            prepaid = kind == "past" or rng.random() < 0.3
            hotel = state.hotels[room.hotel_id]
            resid = hrs()
            state.reservations[resid] = Reservation(
                reservation_id=resid, hotel_id=room.hotel_id, room_type_id=room.room_type_id,
                guest_id=gid, check_in=check_in, check_out=check_out, nights=nights,
                guests=rng.randrange(1, room.capacity + 1), status=status, total_price=total,
                amount_paid=total if prepaid and kind != "cancelled" else 0.0,
                amount_due=0.0 if prepaid or kind == "cancelled" else total,
                payment_status="voided" if kind == "cancelled" else "paid" if prepaid else "pending",
                special_requests=[SpecialRequest(kind="high_floor")] if rng.random() < 0.2 else [],
                created_at=days_before(f"{check_in}T09:00" if kind == "past" else now, rng, 90, 1),
                checked_in_at=f"{check_in}T{hotel.check_in_time}" if kind in ("past", "current") else None,
                checked_out_at=f"{check_out}T{hotel.check_out_time}" if kind == "past" else None,
            )
            if kind == "past" and rng.random() < 0.6:
                rating = rng.choices([1, 2, 3, 4, 5], weights=[1, 1, 3, 5, 5])[0]
                title, text = rng.choice(_REVIEWS[rating])
                rvid = rev()
                state.reviews[rvid] = Review(
                    review_id=rvid, hotel_id=room.hotel_id, reservation_id=resid, guest_id=gid,
                    rating=rating, title=title, text=text, created_at=f"{check_out}T18:00",
                )
    return state
