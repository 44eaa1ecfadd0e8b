"""Hotels tools: search, room availability, reservations, check-in/out, loyalty points, reviews."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, require
from prove.env.tool import tool
from prove.env.types import (
    DEFAULT_LIMIT,
    EXAMPLE,
    MONEY,
    Limit,
    Offset,
    Page,
    day,
    entity_ids,
    measure,
    naming,
    parse_day,
    text,
)
from prove_servers.hotels.state import (
    BOOKING_WINDOW_DAYS,
    EARN_PER_USD,
    FREE_CANCEL_HOURS,
    LATE_FEE_RULE,
    MAX_NIGHTS,
    MAX_SPECIAL_REQUESTS,
    POINTS_PER_USD,
    Amenity,
    BedType,
    CancellationPolicy,
    Guest,
    GuestEmail,
    GuestId,
    Hotel,
    HotelId,
    HotelState,
    Reservation,
    ReservationId,
    ReservationStatus,
    Review,
    RoomType,
    RoomTypeId,
    SpecialRequest,
    SpecialRequestKind,
    nights_of,
)

CheckIn = day("Arrival date, today or later.", listed="check_in")
CheckOut = day("Departure date, after the arrival date.", listed="check_out", role="return")
Guests = Annotated[int, Field(ge=1, le=10, description="Number of people staying (1-10).")]

_ACTIVE = ("confirmed", "checked_in")


class HotelSummary(BaseModel):
    hotel_id: HotelId
    name: str = Field(json_schema_extra=naming("name"))
    city: str
    stars: int
    amenities: list[Amenity]
    cancellation_policy: CancellationPolicy
    average_rating: float | None
    review_count: int
    lowest_nightly_price: float = Field(json_schema_extra={MONEY: True},
        description="Cheapest nightly price among room types that fit the guests (and are free on "
        "every night of the dates, when dates were given)."
    )


class HotelSearchResult(Page):
    hotels: list[HotelSummary]


class HotelDetails(BaseModel):
    hotel: Hotel
    average_rating: float | None
    review_count: int
    room_type_ids: entity_ids("room_type", "The hotel's room types.")


class RoomTypeView(BaseModel):
    room_type_id: RoomTypeId
    hotel_id: HotelId
    name: str = Field(json_schema_extra=naming("name"))
    bed: BedType
    capacity: int
    base_price: float = Field(json_schema_extra={MONEY: True})
    size_sqm: int
    rooms_left_tonight: int


class RoomTypeList(Page):
    hotel_id: HotelId
    room_types: list[RoomTypeView]


class NightAvailability(BaseModel):
    night: str
    rooms_left: int
    price: float = Field(json_schema_extra={MONEY: True})


class AvailabilityInfo(BaseModel):
    room_type_id: RoomTypeId
    hotel_id: HotelId
    check_in: str
    check_out: str
    guests: int
    fits_guests: bool = Field(description="Whether the room's capacity holds that many guests.")
    available: bool = Field(description="Free on every night and fits the guests.")
    sold_out_nights: list[str]
    nights: list[NightAvailability]
    total_price: float = Field(json_schema_extra={MONEY: True})


class ReservationList(Page):
    reservations: list[Reservation]


class ReviewList(Page):
    hotel_id: HotelId
    reviews: list[Review]
    average_rating: float | None


class CancellationQuote(BaseModel):
    reservation_id: ReservationId
    cancellation_policy: CancellationPolicy
    free_cancellation_until: str
    hours_until_check_in: float
    fee: float = Field(json_schema_extra={MONEY: True})
    refund: float = Field(json_schema_extra={MONEY: True}, description="Money returned of what was already paid, USD.")
    points_returned: int
    rule: str


class PointsRedemption(BaseModel):
    reservation_id: ReservationId
    guest_id: GuestId
    points_redeemed: int
    discount: float
    amount_due: float = Field(json_schema_extra={MONEY: True})
    points_left: int


class CheckOutReceipt(BaseModel):
    reservation: Reservation
    charged_now: float = Field(json_schema_extra={MONEY: True})
    points_earned: int
    loyalty_points: int


# -- helpers -------------------------------------------------------------------------------
def _today(state: HotelState) -> date:
    return date.fromisoformat(state.now[:10])


def _stay(state: HotelState, check_in: str, check_out: str) -> list[str]:
    """Validate a stay and return its nights."""
    start, end = parse_day(check_in, "check_in"), parse_day(check_out, "check_out")
    today = _today(state)
    require(start >= today, f"check_in {check_in} is in the past; today is {today}",
            reason='past', params=('check_in',), rejected=(check_in, today))
    require(end > start, f"check_out ({check_out}) must be after check_in ({check_in})",
            params=('check_in', 'check_out'))
    nights = (end - start).days
    require(nights <= MAX_NIGHTS, f"a stay may last at most {MAX_NIGHTS} nights; "
            f"{check_in} to {check_out} is {nights} nights",
            reason='limit', rejected=(MAX_NIGHTS, check_in, check_out, nights))
    last = (today.toordinal() + BOOKING_WINDOW_DAYS - 1)
    require(end.toordinal() - 1 <= last, f"rooms can be booked at most {BOOKING_WINDOW_DAYS} days "
            f"ahead; the last bookable night is {date.fromordinal(last)}",
            reason='conflict', rejected=(BOOKING_WINDOW_DAYS,))
    return nights_of(check_in, check_out)


def _free(room: RoomType, night: str, held: Reservation | None = None) -> int:
    """Rooms free on a night, counting the room a reservation being changed already holds."""
    own = held is not None and held.status in _ACTIVE and night in nights_of(held.check_in, held.check_out)
    return room.inventory.get(night, 0) + (1 if own else 0)


def _sold_out(room: RoomType, nights: list[str], held: Reservation | None = None) -> list[str]:
    return [n for n in nights if _free(room, n, held) <= 0]


def _no_room(room: RoomType, nights: list[str], held: Reservation | None = None) -> None:
    gone = _sold_out(room, nights, held)
    require(not gone, f"no '{room.name}' ({room.room_type_id}) left on the night of {gone[0] if gone else ''}"
            f"{f' (also {len(gone) - 1} more nights)' if len(gone) > 1 else ''}; "
            "check_room_availability or list_hotel_room_types for other rooms or dates",
            rejected=(room.name,))


def _release(room: RoomType, res: Reservation, since: str = "") -> None:
    for n in nights_of(res.check_in, res.check_out):
        if n in room.inventory and n >= since:
            room.inventory[n] += 1


def _fits(room: RoomType, guests: int) -> None:
    require(guests <= room.capacity, f"{guests} guests exceed the capacity of '{room.name}' "
            f"({room.room_type_id}), which sleeps {room.capacity}; pick a larger room type",
            reason='limit', params=('guests',), rejected=(guests, room.name, room.capacity))


def _reservation(state: HotelState, reservation_id: str) -> Reservation:
    return find(state.reservations, reservation_id, hint="use list_guest_reservations to find a guest's reservations")


def _status(res: Reservation, allowed: tuple[str, ...], action: str) -> None:
    require(res.status in allowed, f"reservation '{res.reservation_id}' is {res.status}; "
            f"only {' or '.join(allowed)} reservations can {action}",
            reason='state', rejected=(res.reservation_id, res.status, action), wanted=tuple(allowed))


def _rating(state: HotelState, hotel_id: str) -> tuple[float | None, int]:
    ratings = [r.rating for r in state.reviews.values() if r.hotel_id == hotel_id]
    return (round(sum(ratings) / len(ratings), 2) if ratings else None), len(ratings)


def _settle(state: HotelState, res: Reservation) -> None:
    """Recompute what is due after a price change: refund overpayment, return unused points."""
    excess = round(res.points_discount - res.total_price, 2)
    if excess > 0:
        back = round(excess * POINTS_PER_USD)
        state.guests[res.guest_id].loyalty_points += back
        res.points_redeemed -= back
        res.points_discount = res.total_price
    due = round(res.total_price - res.points_discount - res.amount_paid, 2)
    if due < 0:
        res.amount_paid = round(res.amount_paid + due, 2)
        due = 0.0
    res.amount_due = due
    res.payment_status = "paid" if due == 0 else "pending"


def _terms(state: HotelState, res: Reservation) -> tuple[float, float, str]:
    """(fee, hours until check-in, free-until time) for cancelling now."""
    hotel = state.hotels[res.hotel_id]
    arrival = datetime.fromisoformat(f"{res.check_in}T{hotel.check_in_time}")
    hours = round((arrival - state.now_dt()).total_seconds() / 3600, 1)
    free_hours = FREE_CANCEL_HOURS[hotel.cancellation_policy]
    until = (arrival - timedelta(hours=free_hours)).isoformat(timespec="minutes")
    if hours >= free_hours:
        return 0.0, hours, until
    if hotel.cancellation_policy == "strict":
        return round(res.total_price * 0.5, 2), hours, until
    return round(res.total_price / res.nights, 2), hours, until


# -- reads ---------------------------------------------------------------------------------
@tool()
def search_hotels(
    state: HotelState,
    city: text("word", "City to stay in, e.g. 'Lisbon'.", listed="city", example="Lisbon", optional=True) = None,
    check_in: Annotated[day("Arrival date.", listed="check_in") | None, Field(description="Arrival date; give with check_out to see only hotels with a free room.")] = None,
    check_out: Annotated[day("Departure date.", listed="check_out", role="return") | None, Field(description="Departure date.")] = None,
    guests: Annotated[int, Field(ge=1, le=10, description="Number of people the room must sleep.")] = 1,
    min_stars: Annotated[int | None, Field(json_schema_extra=measure("rating"), ge=1, le=5, description="Only hotels with at least this many stars.")] = None,
    max_nightly_price: Annotated[float | None, Field(json_schema_extra=measure("money"), gt=0, le=10000, description="Only hotels with a room at or under this nightly price, USD.")] = None,
    amenities: Annotated[list[Amenity] | None, Field(description="Only hotels offering all of these amenities.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> HotelSearchResult:
    """Search hotels by city, dates, party size, stars, nightly price and amenities, cheapest first."""
    require((check_in is None) == (check_out is None), "give both check_in and check_out, or neither",
            reason='missing', params=('check_in', 'check_out'))
    nights = _stay(state, check_in, check_out) if check_in and check_out else []
    found = []
    for h in state.hotels.values():
        if (city is not None and h.city.lower() != city.strip().lower()) or \
                (min_stars is not None and h.stars < min_stars) or \
                not set(amenities or ()) <= set(h.amenities):
            continue
        prices = [r.base_price for r in state.room_types.values()
                  if r.hotel_id == h.hotel_id and r.capacity >= guests and not _sold_out(r, nights)]
        low = min(prices) if prices else None
        if low is None or (max_nightly_price is not None and low > max_nightly_price):
            continue
        avg, count = _rating(state, h.hotel_id)
        found.append(HotelSummary(
            hotel_id=h.hotel_id, name=h.name, city=h.city, stars=h.stars, amenities=h.amenities,
            cancellation_policy=h.cancellation_policy, average_rating=avg, review_count=count,
            lowest_nightly_price=low,
        ))
    if city is not None and not found:
        cities = sorted({h.city for h in state.hotels.values()})
        require(city.strip().lower() in {c.lower() for c in cities},
                f"no hotels in '{city}' (parameter 'city'); cities served: {', '.join(cities)}",
                params=('city',), rejected=(city,), choices=tuple(cities))
    found.sort(key=lambda s: (s.lowest_nightly_price, s.hotel_id))
    return HotelSearchResult.of(found, offset, limit)


@tool(sensitive=("hotel_id",))
def get_hotel(state: HotelState, hotel_id: HotelId) -> HotelDetails:
    """Get a hotel's details: address, stars, amenities, check-in/out times, cancellation policy, rating."""
    hotel = find(state.hotels, hotel_id, hint="use search_hotels to find one")
    avg, count = _rating(state, hotel_id)
    rooms = [r.room_type_id for r in state.room_types.values() if r.hotel_id == hotel_id]
    return HotelDetails(hotel=hotel, average_rating=avg, review_count=count, room_type_ids=rooms)


@tool(sensitive=("hotel_id",))
def list_hotel_room_types(
    state: HotelState,
    hotel_id: HotelId,
    guests: Annotated[int | None, Field(ge=1, le=10, description="Only room types sleeping at least this many.")] = None,
    bed: Annotated[BedType | None, Field(description="Only room types with this bed.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> RoomTypeList:
    """List a hotel's room types with bed, capacity, nightly price and rooms left tonight, a page at a time."""
    find(state.hotels, hotel_id, hint="use search_hotels to find one")
    tonight = state.now[:10]
    rooms = [
        RoomTypeView(room_type_id=r.room_type_id, hotel_id=r.hotel_id, name=r.name, bed=r.bed,
                     capacity=r.capacity, base_price=r.base_price, size_sqm=r.size_sqm,
                     rooms_left_tonight=r.inventory.get(tonight, 0))
        for r in state.room_types.values()
        if r.hotel_id == hotel_id and (guests is None or r.capacity >= guests) and (bed is None or r.bed == bed)
    ]
    return RoomTypeList.of(rooms, offset, limit, hotel_id=hotel_id)


@tool(sensitive=("room_type_id",))
def check_room_availability(
    state: HotelState, room_type_id: RoomTypeId, check_in: CheckIn, check_out: CheckOut, guests: Guests = 1,
) -> AvailabilityInfo:
    """Check whether a room type is free on every night of a stay, night by night, with the total price."""
    room = find(state.room_types, room_type_id, hint="use list_hotel_room_types to find one")
    nights = _stay(state, check_in, check_out)
    gone = _sold_out(room, nights)
    fits = guests <= room.capacity
    return AvailabilityInfo(
        room_type_id=room_type_id, hotel_id=room.hotel_id, check_in=check_in, check_out=check_out,
        guests=guests, fits_guests=fits, available=fits and not gone, sold_out_nights=gone,
        nights=[NightAvailability(night=n, rooms_left=room.inventory.get(n, 0), price=room.base_price)
                for n in nights],
        total_price=round(room.base_price * len(nights), 2),
    )


@tool(sensitive=("reservation_id",))
def get_hotel_reservation(state: HotelState, reservation_id: ReservationId) -> Reservation:
    """Get a reservation: hotel, room, dates, guests, status, price, payment and special requests."""
    return _reservation(state, reservation_id)


@tool(sensitive=("guest_id",))
def list_guest_reservations(
    state: HotelState,
    guest_id: GuestId,
    status: Annotated[ReservationStatus | None, Field(description="Only reservations in this status.")] = None,
    hotel_id: Annotated[HotelId | None, Field(description="Only reservations at this hotel.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ReservationList:
    """List a guest's hotel reservations, latest arrival first, filtered by status and hotel."""
    find(state.guests, guest_id, hint="use get_hotel_guest with the guest's email")
    found = sorted(
        (r for r in state.reservations.values()
         if r.guest_id == guest_id and (status is None or r.status == status)
         and (hotel_id is None or r.hotel_id == hotel_id)),
        key=lambda r: (r.check_in, r.reservation_id), reverse=True,
    )
    return ReservationList.of(found, offset, limit)


@tool(sensitive=("guest_id", "email"))
def get_hotel_guest(
    state: HotelState,
    guest_id: Annotated[GuestId | None, Field(description="Guest id, e.g. 'GST-0002'.", json_schema_extra={EXAMPLE: "GST-0002"})] = None,
    email: Annotated[GuestEmail | None, Field(description="The guest's email address, if the id is not known.")] = None,
) -> Guest:
    """Get a hotel guest's profile, loyalty points and tier, by guest id or by email."""
    require((guest_id is None) != (email is None), "give exactly one of guest_id or email",
            reason='missing', params=('email', 'guest_id'))
    if guest_id is not None:
        return find(state.guests, guest_id, hint="try get_hotel_guest with the email")
    assert email is not None
    match = next((g for g in state.guests.values() if g.email.lower() == email.strip().lower()), None)
    require(match is not None, f"no guest with email '{email}' (parameter 'email'); check the spelling",
            reason='not_found', params=('email',), rejected=(email,))
    assert match is not None
    return match


@tool(sensitive=("hotel_id",))
def list_hotel_reviews(
    state: HotelState,
    hotel_id: HotelId,
    min_rating: Annotated[int | None, Field(json_schema_extra=measure("rating"), ge=1, le=5, description="Only reviews rated at least this.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ReviewList:
    """List a hotel's guest reviews, newest first, with the hotel's average rating."""
    find(state.hotels, hotel_id, hint="use search_hotels to find one")
    found = sorted((r for r in state.reviews.values()
                    if r.hotel_id == hotel_id and (min_rating is None or r.rating >= min_rating)),
                   key=lambda r: (r.created_at, r.review_id), reverse=True)
    avg, _ = _rating(state, hotel_id)
    return ReviewList.of(found, offset, limit, hotel_id=hotel_id, average_rating=avg)


@tool(sensitive=("reservation_id",))
def get_cancellation_quote(state: HotelState, reservation_id: ReservationId) -> CancellationQuote:
    """Quote what cancelling a confirmed reservation now would cost under the hotel's policy."""
    res = _reservation(state, reservation_id)
    _status(res, ("confirmed",), "be cancelled")
    fee, hours, until = _terms(state, res)
    policy = state.hotels[res.hotel_id].cancellation_policy
    return CancellationQuote(
        reservation_id=reservation_id, cancellation_policy=policy, free_cancellation_until=until,
        hours_until_check_in=hours, fee=fee, refund=round(max(res.amount_paid - fee, 0.0), 2),
        points_returned=res.points_redeemed,
        rule=f"free until {FREE_CANCEL_HOURS[policy]}h before check-in, then {LATE_FEE_RULE[policy]}",
    )


# -- writes --------------------------------------------------------------------------------
@tool(write=True, sensitive=("guest_id", "room_type_id"))
def book_hotel_room(
    state: HotelState,
    guest_id: GuestId,
    room_type_id: RoomTypeId,
    check_in: CheckIn,
    check_out: CheckOut,
    guests: Guests = 1,
    pay_now: Annotated[bool, Field(description="Prepay the whole stay now instead of paying at the hotel.")] = False,
    special_requests: Annotated[list[SpecialRequestKind] | None, Field(description="Requests to pass to the hotel.")] = None,
) -> Reservation:
    """Book a room type for a guest for a stay; takes one room from every night's inventory."""
    guest = find(state.guests, guest_id, hint="use get_hotel_guest with the guest's email")
    room = find(state.room_types, room_type_id, hint="use list_hotel_room_types to find one")
    nights = _stay(state, check_in, check_out)
    _fits(room, guests)
    _no_room(room, nights)
    kinds = sorted(set(special_requests or ()))
    require(len(kinds) <= MAX_SPECIAL_REQUESTS, f"at most {MAX_SPECIAL_REQUESTS} special requests",
            reason='limit', rejected=(MAX_SPECIAL_REQUESTS,))
    for n in nights:
        room.inventory[n] -= 1
    total = round(room.base_price * len(nights), 2)
    res = Reservation(
        reservation_id=state.new_id("HRS"), hotel_id=room.hotel_id, room_type_id=room_type_id,
        guest_id=guest.guest_id, check_in=check_in, check_out=check_out, nights=len(nights),
        guests=guests, status="confirmed", total_price=total, amount_paid=total if pay_now else 0.0,
        amount_due=0.0 if pay_now else total, payment_status="paid" if pay_now else "pending",
        special_requests=[SpecialRequest(kind=k) for k in kinds], created_at=state.now,
    )
    state.reservations[res.reservation_id] = res
    return res


@tool(write=True, sensitive=("reservation_id",))
def modify_hotel_reservation_dates(
    state: HotelState, reservation_id: ReservationId, check_in: CheckIn, check_out: CheckOut,
) -> Reservation:
    """Move a confirmed reservation to new dates in the same room type; the price is recomputed."""
    res = _reservation(state, reservation_id)
    _status(res, ("confirmed",), "change dates")
    require((check_in, check_out) != (res.check_in, res.check_out),
            f"reservation '{reservation_id}' already runs {check_in} to {check_out}",
            reason='conflict', rejected=(reservation_id, check_in, check_out))
    room = state.room_types[res.room_type_id]
    nights = _stay(state, check_in, check_out)
    _no_room(room, nights, held=res)
    _release(room, res)
    for n in nights:
        room.inventory[n] -= 1
    res.check_in, res.check_out, res.nights = check_in, check_out, len(nights)
    res.total_price = round(room.base_price * len(nights), 2)
    _settle(state, res)
    return res


@tool(write=True, sensitive=("reservation_id",))
def cancel_hotel_reservation(
    state: HotelState,
    reservation_id: ReservationId,
    accept_fee: Annotated[bool, Field(description="Confirm paying the late-cancellation fee, if one applies (see get_cancellation_quote).")] = False,
) -> Reservation:
    """Cancel a confirmed reservation, refunding what was paid minus any late-cancellation fee."""
    res = _reservation(state, reservation_id)
    _status(res, ("confirmed",), "be cancelled")
    fee, hours, _ = _terms(state, res)
    policy = state.hotels[res.hotel_id].cancellation_policy
    require(fee == 0 or accept_fee,
            f"cancelling '{reservation_id}' now ({hours}h before check-in) costs a fee of {fee:.2f} USD "
            f"under the {policy} policy ({LATE_FEE_RULE[policy]} within {FREE_CANCEL_HOURS[policy]}h); "
            "pass accept_fee=true to cancel anyway",
            params=('accept_fee',), rejected=(reservation_id, fee, policy))
    _release(state.room_types[res.room_type_id], res)
    state.guests[res.guest_id].loyalty_points += res.points_redeemed
    paid = res.amount_paid
    res.status, res.cancellation_fee, res.amount_paid, res.amount_due = "cancelled", fee, fee, 0.0
    res.points_redeemed, res.points_discount = 0, 0.0
    if fee == 0:
        res.payment_status = "refunded" if paid > 0 else "voided"
    else:
        res.payment_status = "partially_refunded" if paid > fee else "paid"
    return res


@tool(write=True, sensitive=("reservation_id",))
def add_special_request(
    state: HotelState,
    reservation_id: ReservationId,
    kind: Annotated[SpecialRequestKind, Field(description="What the guest asks for.")],
    note: text("body", "Details for the hotel, e.g. an arrival time.", listed="note", max_length=200) = "",
) -> Reservation:
    """Add a special request (crib, late check-in, quiet room...) to an upcoming or current stay."""
    res = _reservation(state, reservation_id)
    _status(res, _ACTIVE, "take special requests")
    have = [r.kind for r in res.special_requests]
    require(kind not in have, f"reservation '{reservation_id}' already has a '{kind}' request",
            reason='conflict', rejected=(reservation_id, kind))
    require(len(have) < MAX_SPECIAL_REQUESTS,
            f"reservation '{reservation_id}' already has the maximum of {MAX_SPECIAL_REQUESTS} requests",
            reason='conflict', rejected=(reservation_id, MAX_SPECIAL_REQUESTS))
    res.special_requests.append(SpecialRequest(kind=kind, note=note.strip()))
    return res


@tool(write=True, sensitive=("reservation_id",))
def check_in_hotel_guest(state: HotelState, reservation_id: ReservationId) -> Reservation:
    """Check a guest in on the arrival day (from the hotel's check-in time, or earlier with an early_check_in request)."""
    res = _reservation(state, reservation_id)
    _status(res, ("confirmed",), "check in")
    today, hotel = state.now[:10], state.hotels[res.hotel_id]
    require(today >= res.check_in, f"check-in for '{reservation_id}' opens on {res.check_in} "
            f"at {hotel.check_in_time}; today is {today}",
            rejected=(reservation_id, res.check_in, hotel.check_in_time, today))
    require(today < res.check_out, f"the stay of '{reservation_id}' ended on {res.check_out}; it can no longer be checked in",
            rejected=(reservation_id, res.check_out))
    early = any(r.kind == "early_check_in" for r in res.special_requests)
    require(today > res.check_in or early or state.now[11:] >= hotel.check_in_time,
            f"check-in at {hotel.name} starts at {hotel.check_in_time} (now {state.now[11:]}); "
            "add an early_check_in special request to arrive earlier",
            rejected=(hotel.name, hotel.check_in_time))
    res.status, res.checked_in_at = "checked_in", state.now
    return res


@tool(write=True, sensitive=("reservation_id",))
def check_out_hotel_guest(state: HotelState, reservation_id: ReservationId) -> CheckOutReceipt:
    """Check a guest out: charge what is due, free unused nights and credit loyalty points."""
    res = _reservation(state, reservation_id)
    _status(res, ("checked_in",), "check out")
    _release(state.room_types[res.room_type_id], res, since=state.now[:10])
    charged = res.amount_due
    earned = int(round(res.total_price - res.points_discount) * EARN_PER_USD)
    guest = state.guests[res.guest_id]
    guest.loyalty_points += earned
    res.amount_paid = round(res.amount_paid + charged, 2)
    res.amount_due, res.payment_status = 0.0, "paid"
    res.status, res.checked_out_at = "checked_out", state.now
    return CheckOutReceipt(reservation=res, charged_now=charged, points_earned=earned,
                           loyalty_points=guest.loyalty_points)


@tool(write=True, sensitive=("reservation_id", "points"))
def redeem_hotel_points(
    state: HotelState,
    reservation_id: ReservationId,
    points: Annotated[int, Field(ge=100, le=1_000_000, description="Loyalty points to spend, at least 100 (100 points = 1 USD).")],
) -> PointsRedemption:
    """Spend the guest's loyalty points to lower what is still due on a reservation."""
    res = _reservation(state, reservation_id)
    _status(res, _ACTIVE, "use points")
    guest = state.guests[res.guest_id]
    require(points <= guest.loyalty_points, f"guest '{guest.guest_id}' has only {guest.loyalty_points} "
            f"points; requested {points}",
            reason='limit', params=('points',),
            rejected=(guest.guest_id, guest.loyalty_points, points))
    discount = round(points / POINTS_PER_USD, 2)
    require(discount <= res.amount_due + 1e-9, f"only {res.amount_due:.2f} USD is due on '{reservation_id}'; "
            f"at most {int(round(res.amount_due * POINTS_PER_USD))} points can be used",
            reason='limit', params=('points',), rejected=(res.amount_due, reservation_id))
    guest.loyalty_points -= points
    res.points_redeemed += points
    res.points_discount = round(res.points_discount + discount, 2)
    _settle(state, res)
    return PointsRedemption(reservation_id=reservation_id, guest_id=guest.guest_id, points_redeemed=points,
                            discount=discount, amount_due=res.amount_due, points_left=guest.loyalty_points)


@tool(write=True, sensitive=("reservation_id",))
def write_hotel_review(
    state: HotelState,
    reservation_id: ReservationId,
    rating: Annotated[int, Field(json_schema_extra=measure("rating"), ge=1, le=5, description="Stars from 1 (worst) to 5 (best).")],
    title: text("title", "Short headline.", listed="title", min_length=1, max_length=80),
    text: text("body", "The review itself.", listed="text", max_length=2000) = "",
) -> Review:
    """Review a hotel after a completed (checked-out) stay; one review per reservation."""
    res = _reservation(state, reservation_id)
    require(res.status == "checked_out", f"reservation '{reservation_id}' is {res.status}; "
            "a review can only be written after check-out",
            reason='state', rejected=(reservation_id, res.status))
    dup = next((r for r in state.reviews.values() if r.reservation_id == reservation_id), None)
    require(dup is None, f"reservation '{reservation_id}' was already reviewed ({dup.review_id if dup else ''})",
            reason='conflict', rejected=(reservation_id,))
    review = Review(review_id=state.new_id("REV"), hotel_id=res.hotel_id, reservation_id=reservation_id,
                    guest_id=res.guest_id, rating=rating, title=title.strip(), text=text.strip(),
                    created_at=state.now)
    state.reviews[review.review_id] = review
    return review


@tool(write=True, sensitive=("reservation_id",))
def add_hotel_guest_to_reservation(
    state: HotelState,
    reservation_id: ReservationId,
    guest_name: text("person_name", "Full name of the companion.", min_length=1, max_length=80),
) -> Reservation:
    """Add a companion to an upcoming or current stay, within the room's capacity."""
    res = _reservation(state, reservation_id)
    _status(res, _ACTIVE, "add guests")
    room = state.room_types[res.room_type_id]
    name = " ".join(guest_name.split())
    names = [state.guests[res.guest_id].name.lower(), *(n.lower() for n in res.additional_guests)]
    require(name.lower() not in names, f"'{name}' is already on reservation '{reservation_id}'",
            reason='conflict', rejected=(name, reservation_id))
    _fits(room, res.guests + 1)
    res.additional_guests.append(name)
    res.guests += 1
    return res
