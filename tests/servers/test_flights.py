"""Flights server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub, state_hash
from prove_servers.flights import SERVER
from prove_servers.flights.state import (
    Airport,
    Booking,
    Cabin,
    Flight,
    FlightState,
    Passenger,
    initial_state,
)

# now 2026-03-16T09:00. LHR->CDG: FLT-0001 departed 07:00, FLT-0006 09:30 (check-in closed),
# FLT-0002 18:00 today (check-in open, business sold out), FLT-0004 tomorrow (cancelled by the
# airline), FLT-0003 in two days (check-in not open yet). CDG->JFK: FLT-0005, delayed 60 min.
FLIGHTS = {
    "FLT-0001": ("KX100", "LHR", "CDG", "2026-03-16T07:00", "departed", 0,
                 {"economy": (3, 4, "ABCD", 80.0, ["3A"]), "business": (1, 1, "AC", 300.0, [])}),
    "FLT-0006": ("KX210", "LHR", "CDG", "2026-03-16T09:30", "scheduled", 0,
                 {"economy": (3, 3, "AB", 95.0, ["3A"])}),
    "FLT-0002": ("KX200", "LHR", "CDG", "2026-03-16T18:00", "scheduled", 0,
                 {"economy": (3, 4, "ABCD", 100.0, ["3A", "3B", "3C", "3D", "4A"]),
                  "business": (1, 1, "AC", 400.0, ["1A", "1C"])}),
    "FLT-0004": ("OW300", "LHR", "CDG", "2026-03-17T08:00", "cancelled", 0,
                 {"economy": (3, 4, "ABCD", 90.0, ["3C"]), "business": (1, 1, "AC", 380.0, [])}),
    "FLT-0003": ("KX200", "LHR", "CDG", "2026-03-18T18:00", "scheduled", 0,
                 {"economy": (3, 4, "ABCD", 150.0, ["3A", "3C", "3D", "4D"]),
                  "premium_economy": (2, 2, "AC", 260.0, []),
                  "business": (1, 1, "AC", 500.0, ["1A"])}),
    "FLT-0005": ("OW400", "CDG", "JFK", "2026-03-17T10:00", "delayed", 60,
                 {"economy": (10, 11, "ABC", 300.0, []), "first": (1, 1, "AK", 2000.0, [])}),
}
# booking id: passenger, flight, cabin, seat, status, bags, price
BOOKINGS = {
    "BKG-0001": ("PAX-0001", "FLT-0002", "economy", "3A", "confirmed", 0, 100.0),
    "BKG-0002": ("PAX-0002", "FLT-0002", "economy", "3B", "confirmed", 2, 180.0),
    "BKG-0003": ("PAX-0003", "FLT-0002", "business", "1A", "checked_in", 0, 400.0),
    "BKG-0004": ("PAX-0001", "FLT-0001", "economy", "3A", "confirmed", 0, 80.0),
    "BKG-0005": ("PAX-0001", "FLT-0003", "economy", "4D", "confirmed", 0, 150.0),
    "BKG-0006": ("PAX-0002", "FLT-0004", "economy", "3C", "confirmed", 0, 90.0),
    "BKG-0007": ("PAX-0001", "FLT-0005", "economy", None, "cancelled", 0, 300.0),
    "BKG-0008": ("PAX-0003", "FLT-0006", "economy", "3A", "confirmed", 0, 95.0),
}


def tiny() -> FlightState:
    s = FlightState(now="2026-03-16T09:00")
    for code, name, city, country in (("LHR", "Heathrow", "London", "United Kingdom"),
                                      ("CDG", "Charles de Gaulle", "Paris", "France"),
                                      ("JFK", "John F. Kennedy International", "New York", "United States")):
        s.airports[code] = Airport(code=code, name=name, city=city, country=country)
    for fid, (number, src, dst, dep, status, delay, cabins) in FLIGHTS.items():
        s.flights[fid] = Flight(
            flight_id=fid, flight_number=number, airline="Kestrel Air", origin=src, destination=dst,
            departure=dep, arrival=dep[:11] + "23:00", aircraft="Airbus A321neo", status=status,
            delay_minutes=delay, gate="B7",
            cabins={c: Cabin(cabin=c, first_row=r0, last_row=r1, letters=letters, price=price, taken=taken)
                    for c, (r0, r1, letters, price, taken) in cabins.items()},
        )
    for pid, name, tier, miles, expiry, passport in (
        ("PAX-0001", "Ada Chen", "blue", 20000, "2030-05-01", "XA1234567"),
        ("PAX-0002", "Bo Silva", "gold", 90000, "2026-03-01", "YB7654321"),
        ("PAX-0003", "Cy Diaz", "platinum", 0, "2031-01-01", "KC5555555"),
        ("PAX-0004", "Dee Evans", "silver", 45000, "2029-09-09", "LD4444444"),
    ):
        s.passengers[pid] = Passenger(
            passenger_id=pid, name=name, email=f"{name.split()[0].lower()}@fly.com", phone="+1-555-100-1000",
            passport_number=passport, passport_expiry=expiry, nationality="Portugal",
            loyalty_tier=tier, miles=miles,
        )
    for bid, (pid, fid, cabin, seat, status, bags, price) in BOOKINGS.items():
        s.bookings[bid] = Booking(
            booking_id=bid, passenger_id=pid, flight_id=fid, cabin=cabin, fare_cabin=cabin, seat=seat,
            status=status, checked_bags=bags, price_paid=price,
            refund_amount=150.0 if status == "cancelled" else 0.0, booked_at="2026-03-01T10:00",
            checked_in_at="2026-03-15T20:00" if status == "checked_in" else None,
        )
    return s


hub = hub_fixture(SERVER, tiny)


def ids(items: list[dict], key: str = "flight_id") -> list[str]:
    return [item[key] for item in items]


def test_seventeen_tools_with_reads_and_writes() -> None:
    writes = [t.name for t in SERVER.tools if t.write]
    assert len(SERVER.tools) == 17 and len(writes) == 8


def test_seeded_world_is_deterministic_and_consistent() -> None:
    a, b = initial_state(7), initial_state(7)
    assert state_hash(a) == state_hash(b) != state_hash(initial_state(8))
    assert not a.counters and a.model_copy(deep=True).new_id("BKG") == f"BKG-{len(a.bookings) + 1:04d}"
    assert a.model_copy(deep=True).new_id("PAX") == f"PAX-{len(a.passengers) + 1:04d}"
    assert len({f.status for f in a.flights.values()}) >= 3
    for booking in a.bookings.values():
        taken = a.flights[booking.flight_id].cabins[booking.cabin].taken
        assert (booking.seat in taken) == (booking.status != "cancelled"), booking
    for flight in a.flights.values():
        for cabin in flight.cabins.values():
            assert len(set(cabin.taken)) == len(cabin.taken) <= cabin.capacity()
    h = Hub.for_state(SERVER, a)
    h.open("s", seed=0)
    pax = next(iter(a.passengers))
    flight = next(f for f in a.flights.values() if f.status == "scheduled"
                  and all(b.flight_id != f.flight_id for b in a.bookings.values() if b.passenger_id == pax)
                  and len(f.cabins["economy"].taken) < f.cabins["economy"].capacity())
    out = h.call("book_flight", {"passenger_id": pax, "flight_id": flight.flight_id}, episode_id="s")
    assert out["ok"], out
    assert out["result"]["booking_id"] == f"BKG-{len(a.bookings) + 1:04d}"


def test_airports(hub: Hub) -> None:
    assert ok(hub, "list_airports")["total"] == 3
    assert ids(ok(hub, "list_airports", country="france")["airports"], "code") == ["CDG"]
    assert ids(ok(hub, "list_airports", query="york")["airports"], "code") == ["JFK"]
    assert ok(hub, "list_airports", query="lhr")["airports"][0]["city"] == "London"


def test_list_airports_pages(hub: Hub) -> None:
    first = ok(hub, "list_airports", limit=2)
    assert (first["total"], first["next_offset"], len(first["airports"])) == (3, 2, 2)
    second = ok(hub, "list_airports", offset=first["next_offset"], limit=2)
    assert (second["total"], second["next_offset"]) == (3, None)
    every = ids(ok(hub, "list_airports")["airports"], "code")
    assert ids(first["airports"], "code") + ids(second["airports"], "code") == every


def test_search_flights(hub: Hub) -> None:
    res = ok(hub, "search_flights", origin="lhr", destination="CDG")
    assert ids(res["flights"]) == ["FLT-0006", "FLT-0002", "FLT-0003"]
    assert res["flights"][1]["seats_left"] == {"economy": 3, "business": 0}
    assert ids(ok(hub, "search_flights", origin="LHR", destination="CDG", date="2026-03-18")["flights"]) == ["FLT-0003"]
    assert ids(ok(hub, "search_flights", origin="LHR", destination="CDG", cabin="business")["flights"]) == ["FLT-0003"]
    assert ids(ok(hub, "search_flights", origin="LHR", destination="CDG", max_price=120)["flights"]) == ["FLT-0006", "FLT-0002"]
    every = ok(hub, "search_flights", origin="LHR", destination="CDG", include_unavailable=True)
    assert ids(every["flights"]) == ["FLT-0001", "FLT-0006", "FLT-0002", "FLT-0004", "FLT-0003"]
    page = ok(hub, "search_flights", origin="LHR", destination="CDG", limit=2)
    assert page["total"] == 3 and page["next_offset"] == 2
    assert ok(hub, "search_flights", origin="LHR", destination="CDG", offset=2)["next_offset"] is None
    assert ok(hub, "search_flights", origin="CDG", destination="LHR")["total"] == 0
    fails(hub, "search_flights", "airport 'XXX' not found", "parameter 'origin'", "LHR", origin="XXX", destination="CDG")
    fails(hub, "search_flights", "must differ", origin="LHR", destination="lhr")
    fails(hub, "search_flights", "date must be a date", origin="LHR", destination="CDG", date="tomorrow")
    fails(hub, "search_flights", "cabin", "'economy'", origin="LHR", destination="CDG", cabin="luxury")


def test_flight_details_and_status(hub: Hub) -> None:
    f = ok(hub, "get_flight", flight_id="FLT-0005")
    assert f["estimated_departure"] == "2026-03-17T11:00" and f["status"] == "delayed"
    first = next(c for c in f["cabins"] if c["cabin"] == "first")
    assert first["seats_total"] == 2 and first["bag_limit"] == 3 and first["bag_fee"] == 0.0
    fails(hub, "get_flight", "flight 'FLT-0099' not found", "FLT-0001", flight_id="FLT-0099")
    assert ok(hub, "get_flight_status", flight_number="kx 200")["flight_id"] == "FLT-0002"
    assert ok(hub, "get_flight_status", flight_number="KX200", date="2026-03-18")["flight_id"] == "FLT-0003"
    assert ok(hub, "get_flight_status", flight_number="KX100")["status"] == "departed"
    assert ok(hub, "get_flight_status", flight_number="OW300")["departure"] == "2026-03-17T08:00"
    delayed = ok(hub, "get_flight_status", flight_number="OW400")
    assert delayed["delay_minutes"] == 60 and delayed["estimated_arrival"] == "2026-03-18T00:00"
    fails(hub, "get_flight_status", "does not operate on 2026-03-20", "2026-03-16, 2026-03-18",
          flight_number="KX200", date="2026-03-20")
    fails(hub, "get_flight_status", "flight number 'ZZ999' not found", "KX200", flight_number="ZZ999")


def test_seat_map(hub: Hub) -> None:
    m = ok(hub, "get_seat_map", flight_id="FLT-0002")
    assert m["free_seats"] == ["4B", "4C", "4D"] and m["seats_left"] == 3 and m["rows"] == "3-4"
    assert ok(hub, "get_seat_map", flight_id="FLT-0002", cabin="business")["seats_left"] == 0
    fails(hub, "get_seat_map", "has no first cabin", "cabins offered: economy, business",
          flight_id="FLT-0002", cabin="first")


def test_passengers(hub: Hub) -> None:
    assert ids(ok(hub, "search_passengers", query="silva")["passengers"], "passenger_id") == ["PAX-0002"]
    assert ids(ok(hub, "search_passengers", loyalty_tier="platinum")["passengers"], "passenger_id") == ["PAX-0003"]
    assert ok(hub, "search_passengers", limit=2)["next_offset"] == 2
    fails(hub, "search_passengers", "loyalty_tier", "'blue'", loyalty_tier="diamond")
    prof = ok(hub, "get_passenger_profile", passenger_id="PAX-0002")
    assert prof["extra_bag_allowance"] == 1 and prof["active_bookings"] == 2 and prof["miles"] == 90000
    fails(hub, "get_passenger_profile", "passenger 'PAX-9' not found", "PAX-0001", passenger_id="PAX-9")


def test_bookings_reads(hub: Hub) -> None:
    res = ok(hub, "list_passenger_bookings", passenger_id="PAX-0001")
    assert ids(res["bookings"], "booking_id") == ["BKG-0004", "BKG-0001", "BKG-0007", "BKG-0005"]
    assert ids(ok(hub, "list_passenger_bookings", passenger_id="PAX-0001", status="cancelled")["bookings"],
               "booking_id") == ["BKG-0007"]
    assert ok(hub, "list_passenger_bookings", passenger_id="PAX-0001", upcoming_only=True)["total"] == 3
    assert ok(hub, "list_passenger_bookings", passenger_id="PAX-0001", limit=3)["next_offset"] == 3
    fails(hub, "list_passenger_bookings", "passenger 'PAX-7' not found", passenger_id="PAX-7")
    b = ok(hub, "get_flight_booking", booking_id="BKG-0001")
    assert b["flight_number"] == "KX200" and b["passenger_name"] == "Ada Chen" and b["seat"] == "3A"
    fails(hub, "get_flight_booking", "booking 'BKG-42' not found", "BKG-0001", booking_id="BKG-42")


def test_book_flight_is_visible(hub: Hub) -> None:
    b = ok(hub, "book_flight", passenger_id="PAX-0002", flight_id="FLT-0003", seat="4a", checked_bags=1)
    assert (b["booking_id"], b["seat"], b["price_paid"], b["booked_at"]) == ("BKG-0009", "4A", 190.0, "2026-03-16T09:01")
    assert "4A" in ok(hub, "get_seat_map", flight_id="FLT-0003")["taken_seats"]
    assert "BKG-0009" in ids(ok(hub, "list_passenger_bookings", passenger_id="PAX-0002")["bookings"], "booking_id")
    auto = ok(hub, "book_flight", passenger_id="PAX-0003", flight_id="FLT-0003", cabin="business")
    assert auto["seat"] == "1C" and auto["price_paid"] == 500.0
    assert ok(hub, "get_seat_map", flight_id="FLT-0003", cabin="business")["seats_left"] == 0
    assert ok(hub, "search_flights", origin="LHR", destination="CDG", cabin="business")["total"] == 0


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"flight_id": "FLT-0001"}, ("has departed", "booking is no longer possible")),
        ({"flight_id": "FLT-0004"}, ("cancelled by the airline", "search_flights")),
        ({"flight_id": "FLT-0006", "cabin": "business"}, ("has no business cabin", "cabins offered: economy")),
        ({"flight_id": "FLT-0003", "cabin": "first"}, ("has no first cabin",)),
        ({"flight_id": "FLT-0002", "passenger_id": "PAX-0003"}, ("already holds booking 'BKG-0003'",)),
        ({"flight_id": "FLT-0002", "cabin": "business"}, ("sold out", "2 of 2 seats taken", "economy (3 left)")),
        ({"flight_id": "FLT-0003", "seat": "3A"}, ("seat '3A'", "already taken", "3B, 4A, 4B, 4C")),
        ({"flight_id": "FLT-0003", "seat": "1C"}, ("not in the economy cabin", "it is in business")),
        ({"flight_id": "FLT-0003", "seat": "9A"}, ("rows 3-4, letters ABCD", "has no such seat")),
        ({"flight_id": "FLT-0003", "seat": "A12"}, ("row number and a letter",)),
        ({"flight_id": "FLT-0003", "checked_bags": 3}, ("exceeds the economy limit of 2", "silver member")),
        ({"flight_id": "FLT-0003", "checked_bags": 9}, ("checked_bags", "less than or equal to 4")),
        ({"flight_id": "FLT-0099"}, ("flight 'FLT-0099' not found", "parameter 'flight_id'")),
        ({"flight_id": "FLT-0003", "passenger_id": "PAX-9"}, ("passenger 'PAX-9' not found",)),
    ],
)
def test_book_flight_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "book_flight", *fragments, **{"passenger_id": "PAX-0004", **args})


def test_cancel_flight_booking(hub: Hub) -> None:
    b = ok(hub, "cancel_flight_booking", booking_id="BKG-0005")
    assert b["status"] == "cancelled" and b["seat"] is None and b["refund_amount"] == 75.0
    assert "4D" in ok(hub, "get_seat_map", flight_id="FLT-0003")["free_seats"]
    assert ok(hub, "get_flight_booking", booking_id="BKG-0005")["status"] == "cancelled"
    fails(hub, "cancel_flight_booking", "already cancelled", "75.00", booking_id="BKG-0005")
    assert ok(hub, "cancel_flight_booking", booking_id="BKG-0006")["refund_amount"] == 90.0  # airline cancelled
    assert ok(hub, "cancel_flight_booking", booking_id="BKG-0003")["refund_amount"] == 400.0  # checked in, business
    fails(hub, "cancel_flight_booking", "has departed", "cancellation", booking_id="BKG-0004")
    fails(hub, "cancel_flight_booking", "booking 'BKG-0' not found", booking_id="BKG-0")


def test_change_booking_flight(hub: Hub) -> None:
    r = ok(hub, "change_booking_flight", booking_id="BKG-0002", new_flight_id="FLT-0003")
    assert (r["fare_difference"], r["change_fee"], r["amount_charged"]) == (50.0, 75.0, 125.0)
    assert r["booking"]["seat"] == "3B" and r["booking"]["price_paid"] == 305.0  # seat kept: free there
    assert r["previous_flight_id"] == "FLT-0002"
    assert "3B" in ok(hub, "get_seat_map", flight_id="FLT-0002")["free_seats"]
    assert ok(hub, "get_flight_booking", booking_id="BKG-0002")["flight_id"] == "FLT-0003"
    # The airline cancelled FLT-0004: the change is free; 3C is taken on FLT-0003, so a free seat is given.
    r = ok(hub, "change_booking_flight", booking_id="BKG-0006", new_flight_id="FLT-0002")
    assert (r["change_fee"], r["amount_charged"]) == (0.0, 0.0) and r["booking"]["seat"] == "3B"


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"booking_id": "BKG-0001", "new_flight_id": "FLT-0002"}, ("already on flight FLT-0002", "different flight")),
        ({"booking_id": "BKG-0001", "new_flight_id": "FLT-0005"}, ("flies CDG-JFK", "LHR-CDG", "FLT-0006", "FLT-0003")),
        ({"booking_id": "BKG-0001", "new_flight_id": "FLT-0001"}, ("FLT-0001", "has departed")),
        ({"booking_id": "BKG-0001", "new_flight_id": "FLT-0004"}, ("cancelled by the airline", "other flights on this route")),
        ({"booking_id": "BKG-0001", "new_flight_id": "FLT-0003"}, ("already holds booking 'BKG-0005'",)),
        ({"booking_id": "BKG-0001", "new_flight_id": "FLT-0099"}, ("parameter 'new_flight_id'",)),
        ({"booking_id": "BKG-0003", "new_flight_id": "FLT-0003"}, ("checked in", "flight changes close")),
        ({"booking_id": "BKG-0007", "new_flight_id": "FLT-0002"}, ("is cancelled", "book_flight")),
        ({"booking_id": "BKG-0004", "new_flight_id": "FLT-0002"}, ("FLT-0001", "has departed", "can no longer change")),
    ],
)
def test_change_booking_flight_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "change_booking_flight", *fragments, **args)


def test_change_to_sold_out_or_missing_cabin(hub: Hub) -> None:
    biz = ok(hub, "book_flight", passenger_id="PAX-0004", flight_id="FLT-0003", cabin="business")
    fails(hub, "change_booking_flight", "business on flight FLT-0002", "sold out",
          booking_id=biz["booking_id"], new_flight_id="FLT-0002")
    prem = ok(hub, "redeem_miles_upgrade", booking_id="BKG-0005", to_cabin="premium_economy")["booking"]
    fails(hub, "change_booking_flight", "has no premium_economy cabin", "cabins offered: economy",
          booking_id=prem["booking_id"], new_flight_id="FLT-0006")


def test_select_seat(hub: Hub) -> None:
    b = ok(hub, "select_seat", booking_id="BKG-0001", seat="4c")
    assert b["seat"] == "4C"
    m = ok(hub, "get_seat_map", flight_id="FLT-0002")
    assert "3A" in m["free_seats"] and "4C" in m["taken_seats"]
    fails(hub, "select_seat", "already has seat 4C", booking_id="BKG-0001", seat="4C")
    fails(hub, "select_seat", "seat '3B'", "already taken", "3A, 4B, 4D", booking_id="BKG-0001", seat="3B")
    fails(hub, "select_seat", "it is in business", "rows 3-4", booking_id="BKG-0001", seat="1A")
    fails(hub, "select_seat", "has no such seat", booking_id="BKG-0001", seat="30A")
    fails(hub, "select_seat", "row number and a letter", booking_id="BKG-0001", seat="ZZ")
    fails(hub, "select_seat", "seat changes after check-in", booking_id="BKG-0003", seat="4B")
    fails(hub, "select_seat", "is cancelled", booking_id="BKG-0007", seat="10A")
    fails(hub, "select_seat", "has departed", booking_id="BKG-0004", seat="3B")
    fails(hub, "select_seat", "cancelled by the airline", "change_booking_flight", booking_id="BKG-0006", seat="4A")


def test_add_checked_bag(hub: Hub) -> None:
    r = ok(hub, "add_checked_bag", booking_id="BKG-0001", count=2)
    assert (r["checked_bags"], r["fee_charged"], r["price_paid"], r["bag_limit"]) == (2, 80.0, 180.0, 2)
    assert ok(hub, "get_flight_booking", booking_id="BKG-0001")["checked_bags"] == 2
    fails(hub, "add_checked_bag", "baggage limit", "allows 2", "at most 0 more", booking_id="BKG-0001")
    assert ok(hub, "add_checked_bag", booking_id="BKG-0002")["bag_limit"] == 3  # gold: one more
    assert ok(hub, "add_checked_bag", booking_id="BKG-0003")["fee_charged"] == 0.0  # business, checked in
    fails(hub, "add_checked_bag", "is cancelled", booking_id="BKG-0007")
    fails(hub, "add_checked_bag", "has departed", "adding bags", booking_id="BKG-0004")
    fails(hub, "add_checked_bag", "cancelled by the airline", booking_id="BKG-0006")
    fails(hub, "add_checked_bag", "count", "greater than or equal to 1", booking_id="BKG-0001", count=0)


def test_check_in(hub: Hub) -> None:
    bp = ok(hub, "check_in_for_flight", booking_id="BKG-0001")
    assert (bp["seat"], bp["gate"], bp["boarding_group"], bp["flight_number"]) == ("3A", "B7", 3, "KX200")
    b = ok(hub, "get_flight_booking", booking_id="BKG-0001")
    assert b["status"] == "checked_in" and b["checked_in_at"] == "2026-03-16T09:01"
    fails(hub, "check_in_for_flight", "already checked in", booking_id="BKG-0001")
    fails(hub, "check_in_for_flight", "opens at 2026-03-17T18:00", "24 hours", booking_id="BKG-0005")
    fails(hub, "check_in_for_flight", "closed at 2026-03-16T08:45", booking_id="BKG-0008")
    fails(hub, "check_in_for_flight", "has departed", booking_id="BKG-0004")
    fails(hub, "check_in_for_flight", "cancelled by the airline", booking_id="BKG-0006")
    fails(hub, "check_in_for_flight", "is cancelled", booking_id="BKG-0007")
    # Delayed flight: the window follows the estimated departure (10:00 + 60 min).
    late = ok(hub, "book_flight", passenger_id="PAX-0003", flight_id="FLT-0005")
    fails(hub, "check_in_for_flight", "opens at 2026-03-16T11:00", booking_id=late["booking_id"])


def test_check_in_needs_a_valid_passport(hub: Hub) -> None:
    fails(hub, "check_in_for_flight", "not valid for this flight", "expiry 2026-03-01",
          "update_passenger_passport", booking_id="BKG-0002")
    ok(hub, "update_passenger_passport", passenger_id="PAX-0002", passport_number="YB7654321",
       passport_expiry="2036-03-01")
    assert ok(hub, "check_in_for_flight", booking_id="BKG-0002")["boarding_group"] == 2  # gold


def test_redeem_miles_upgrade(hub: Hub) -> None:
    fails(hub, "redeem_miles_upgrade", "insufficient miles", "20,000", "40,000",
          booking_id="BKG-0005", to_cabin="business")
    r = ok(hub, "redeem_miles_upgrade", booking_id="BKG-0005", to_cabin="premium_economy")
    assert (r["miles_used"], r["miles_left"], r["previous_cabin"]) == (15000, 5000, "economy")
    assert r["booking"]["cabin"] == "premium_economy" and r["booking"]["seat"] == "2A"
    assert ok(hub, "get_passenger_profile", passenger_id="PAX-0001")["miles"] == 5000
    assert "4D" in ok(hub, "get_seat_map", flight_id="FLT-0003")["free_seats"]
    fails(hub, "redeem_miles_upgrade", "already in premium_economy", "go to: business",
          booking_id="BKG-0005", to_cabin="economy")
    # Cancelling refunds at the economy fare's rate and returns the miles.
    assert ok(hub, "cancel_flight_booking", booking_id="BKG-0005")["refund_amount"] == 75.0
    assert ok(hub, "get_passenger_profile", passenger_id="PAX-0001")["miles"] == 20000


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"booking_id": "BKG-0002", "to_cabin": "business"}, ("sold out",)),
        ({"booking_id": "BKG-0002", "to_cabin": "first"}, ("has no first cabin", "parameter 'to_cabin'")),
        ({"booking_id": "BKG-0003", "to_cabin": "economy"}, ("already in business", "(none)")),
        ({"booking_id": "BKG-0007", "to_cabin": "first"}, ("is cancelled",)),
        ({"booking_id": "BKG-0004", "to_cabin": "business"}, ("has departed", "upgrading")),
        ({"booking_id": "BKG-0006", "to_cabin": "business"}, ("cancelled by the airline",)),
        ({"booking_id": "BKG-0001", "to_cabin": "suite"}, ("to_cabin", "'premium_economy'")),
    ],
)
def test_upgrade_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "redeem_miles_upgrade", *fragments, **args)


def test_update_passenger_passport(hub: Hub) -> None:
    p = ok(hub, "update_passenger_passport", passenger_id="PAX-0001", passport_number=" ab1234567",
           passport_expiry="2035-06-30")
    assert (p["passport_number"], p["passport_expiry"]) == ("AB1234567", "2035-06-30")
    assert ok(hub, "get_passenger_profile", passenger_id="PAX-0001")["passport_number"] == "AB1234567"
    pid = "PAX-0001"
    fails(hub, "update_passenger_passport", "already on file", passenger_id=pid,
          passport_number="AB1234567", passport_expiry="2035-06-30")
    fails(hub, "update_passenger_passport", "6-9 letters or digits", passenger_id=pid,
          passport_number="12-3456", passport_expiry="2035-06-30")
    fails(hub, "update_passenger_passport", "is not after today (2026-03-16)", passenger_id=pid,
          passport_number="AB1234567", passport_expiry="2026-03-10")
    fails(hub, "update_passenger_passport", "passport_expiry must be a date", passenger_id=pid,
          passport_number="AB1234567", passport_expiry="next year")
    fails(hub, "update_passenger_passport", "registered to another passenger", passenger_id=pid,
          passport_number="yb7654321", passport_expiry="2035-06-30")
    fails(hub, "update_passenger_passport", "checked in on booking 'BKG-0003'", "locked",
          passenger_id="PAX-0003", passport_number="KC9999999", passport_expiry="2035-06-30")
    fails(hub, "update_passenger_passport", "passenger 'PAX-0' not found", passenger_id="PAX-0",
          passport_number="KC9999999", passport_expiry="2035-06-30")
