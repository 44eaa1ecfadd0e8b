"""Hotels server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.hotels import SERVER
from prove_servers.hotels.state import (
    Guest,
    Hotel,
    HotelState,
    Reservation,
    Review,
    RoomType,
    initial_state,
)

# now 2026-03-16T09:00; bookable nights 2026-03-16 .. 2026-05-14.
HORIZON = [(date(2026, 3, 16) + timedelta(days=i)).isoformat() for i in range(60)]
HOTELS = {  # id: name, city, stars, amenities, check-in time, policy
    "HTL-0001": ("Harbor Inn Lisbon", "Lisbon", 3, ["breakfast", "wifi"], "15:00", "strict"),
    "HTL-0002": ("Grand Palace Lisbon", "Lisbon", 5, ["pool", "spa", "wifi"], "14:00", "flexible"),
    "HTL-0003": ("Park Lodge Berlin", "Berlin", 2, ["parking", "wifi"], "10:00", "moderate"),
}
ROOMS = {  # id: hotel, name, bed, capacity, price, rooms per night, sold-out nights
    "RMT-0001": ("HTL-0001", "Standard Double", "double", 2, 100.0, 2, ("2026-03-18", "2026-03-20")),
    "RMT-0002": ("HTL-0001", "Family Suite", "king", 4, 220.0, 1, ()),
    "RMT-0003": ("HTL-0002", "Deluxe Queen", "queen", 2, 300.0, 3, ()),
    "RMT-0004": ("HTL-0003", "Single Room", "single", 1, 60.0, 1, ()),
}
RESERVATIONS = {  # id: guest, room, check-in, check-out, guests, status, price, paid
    "HRS-0001": ("GST-0001", "RMT-0001", "2026-03-17", "2026-03-19", 1, "confirmed", 200.0, 0.0),
    "HRS-0002": ("GST-0001", "RMT-0003", "2026-04-10", "2026-04-12", 2, "confirmed", 600.0, 600.0),
    "HRS-0003": ("GST-0002", "RMT-0004", "2026-03-16", "2026-03-18", 1, "confirmed", 120.0, 0.0),
    "HRS-0004": ("GST-0001", "RMT-0002", "2026-03-14", "2026-03-18", 3, "checked_in", 880.0, 0.0),
    "HRS-0005": ("GST-0002", "RMT-0001", "2026-02-01", "2026-02-03", 1, "checked_out", 200.0, 200.0),
    "HRS-0006": ("GST-0002", "RMT-0003", "2026-03-01", "2026-03-02", 1, "cancelled", 300.0, 0.0),
    "HRS-0007": ("GST-0002", "RMT-0001", "2026-01-05", "2026-01-06", 1, "checked_out", 100.0, 100.0),
    "HRS-0008": ("GST-0002", "RMT-0003", "2026-03-10", "2026-03-12", 1, "confirmed", 600.0, 0.0),
}


def tiny() -> HotelState:
    s = HotelState(now="2026-03-16T09:00")
    for hid, (name, city, stars, amenities, check_in, policy) in HOTELS.items():
        s.hotels[hid] = Hotel(hotel_id=hid, name=name, city=city, address=f"1 Main St, {city}", stars=stars,
                              amenities=amenities, check_in_time=check_in, check_out_time="11:00",
                              cancellation_policy=policy, phone="+1-555-200-2000")
    for rid, (hid, name, bed, cap, price, per_night, sold_out) in ROOMS.items():
        s.room_types[rid] = RoomType(room_type_id=rid, hotel_id=hid, name=name, bed=bed, capacity=cap,
                                     base_price=price, size_sqm=20,
                                     inventory={d: 0 if d in sold_out else per_night for d in HORIZON})
    s.guests["GST-0001"] = Guest(guest_id="GST-0001", name="Ada Chen", email="ada@x.com", phone="+1-555-100-1000",
                                 loyalty_points=15000, tier="silver", member_since="2020-01-01")
    s.guests["GST-0002"] = Guest(guest_id="GST-0002", name="Bo Silva", email="bo@x.com", phone="+1-555-100-1001",
                                 loyalty_points=50, tier="member", member_since="2024-05-01")
    for rid, (gid, room, start, end, guests, status, price, paid) in RESERVATIONS.items():
        nights = (date.fromisoformat(end) - date.fromisoformat(start)).days
        s.reservations[rid] = Reservation(
            reservation_id=rid, hotel_id=ROOMS[room][0], room_type_id=room, guest_id=gid, check_in=start,
            check_out=end, nights=nights, guests=guests, status=status, total_price=price, amount_paid=paid,
            amount_due=0.0 if status == "cancelled" else round(price - paid, 2),
            payment_status="voided" if status == "cancelled" else "paid" if paid == price else "pending",
            created_at="2026-01-01T10:00",
        )
    s.reviews["REV-0001"] = Review(review_id="REV-0001", hotel_id="HTL-0001", reservation_id="HRS-0007",
                                   guest_id="GST-0002", rating=4, title="Very good", text="Quiet.",
                                   created_at="2026-01-06T18:00")
    return s


hub = hub_fixture(SERVER, tiny)


def ids(items: list[dict], key: str) -> list[str]:
    return [x[key] for x in items]


def left(hub: Hub, room: str, night: str) -> int:
    nxt = (date.fromisoformat(night) + timedelta(days=1)).isoformat()
    return ok(hub, "check_room_availability", room_type_id=room, check_in=night, check_out=nxt)["nights"][0]["rooms_left"]


def test_seeded_world_is_rich_and_consistent() -> None:
    s = initial_state(3)
    assert len(s.hotels) >= 15 and len(s.room_types) >= 40 and len(s.reservations) >= 40
    assert {r.status for r in s.reservations.values()} == {"confirmed", "cancelled", "checked_in", "checked_out"}
    assert all(len(r.inventory) == 60 for r in s.room_types.values())
    assert s.new_id("HRS") == f"HRS-{len(s.reservations) + 1:04d}"


def test_search_hotels(hub: Hub) -> None:
    res = ok(hub, "search_hotels", city="lisbon")
    assert ids(res["hotels"], "hotel_id") == ["HTL-0001", "HTL-0002"]
    assert res["hotels"][0]["lowest_nightly_price"] == 100.0 and res["hotels"][0]["average_rating"] == 4.0
    # RMT-0001 is sold out on the 20th, so the suite is Harbor Inn's cheapest free room.
    dated = ok(hub, "search_hotels", city="Lisbon", check_in="2026-03-19", check_out="2026-03-21", guests=2)
    assert [h["lowest_nightly_price"] for h in dated["hotels"]] == [220.0, 300.0]
    assert ids(ok(hub, "search_hotels", guests=3)["hotels"], "hotel_id") == ["HTL-0001"]
    assert ids(ok(hub, "search_hotels", max_nightly_price=90)["hotels"], "hotel_id") == ["HTL-0003"]
    assert ids(ok(hub, "search_hotels", amenities=["pool", "wifi"])["hotels"], "hotel_id") == ["HTL-0002"]
    assert ids(ok(hub, "search_hotels", min_stars=4)["hotels"], "hotel_id") == ["HTL-0002"]
    page = ok(hub, "search_hotels", limit=2)
    assert page["total"] == 3 and page["next_offset"] == 2
    fails(hub, "search_hotels", "no hotels in 'Atlantis'", "Berlin, Lisbon", city="Atlantis")
    fails(hub, "search_hotels", "give both check_in and check_out", check_in="2026-03-20")
    fails(hub, "search_hotels", "is in the past", check_in="2026-03-01", check_out="2026-03-03")
    fails(hub, "search_hotels", "amenities", "'wifi'", amenities=["sauna"])


def test_get_hotel_and_room_types(hub: Hub) -> None:
    details = ok(hub, "get_hotel", hotel_id="HTL-0001")
    assert details["hotel"]["cancellation_policy"] == "strict" and details["review_count"] == 1
    assert details["room_type_ids"] == ["RMT-0001", "RMT-0002"]
    fails(hub, "get_hotel", "hotel 'HTL-9' not found", "search_hotels", hotel_id="HTL-9")
    rooms = ok(hub, "list_hotel_room_types", hotel_id="HTL-0001")
    assert ids(rooms["room_types"], "room_type_id") == ["RMT-0001", "RMT-0002"]
    assert rooms["room_types"][1]["rooms_left_tonight"] == 1
    assert ok(hub, "list_hotel_room_types", hotel_id="HTL-0001", guests=3)["total"] == 1
    assert ok(hub, "list_hotel_room_types", hotel_id="HTL-0001", bed="double")["total"] == 1
    fails(hub, "list_hotel_room_types", "bed", "'king'", hotel_id="HTL-0001", bed="waterbed")
    fails(hub, "list_hotel_room_types", "hotel 'HTL-7' not found", hotel_id="HTL-7")


def test_room_types_page(hub: Hub) -> None:
    first = ok(hub, "list_hotel_room_types", hotel_id="HTL-0001", limit=1)
    assert first["total"] == 2 and first["next_offset"] == 1
    second = ok(hub, "list_hotel_room_types", hotel_id="HTL-0001", offset=first["next_offset"], limit=1)
    assert second["total"] == 2 and second["next_offset"] is None
    assert ids(first["room_types"] + second["room_types"], "room_type_id") == ["RMT-0001", "RMT-0002"]


def test_check_room_availability(hub: Hub) -> None:
    info = ok(hub, "check_room_availability", room_type_id="RMT-0001", check_in="2026-03-19",
              check_out="2026-03-22", guests=2)
    assert info["sold_out_nights"] == ["2026-03-20"] and not info["available"] and info["total_price"] == 300.0
    assert [n["rooms_left"] for n in info["nights"]] == [2, 0, 2]
    assert not ok(hub, "check_room_availability", room_type_id="RMT-0003", check_in="2026-03-19",
                  check_out="2026-03-20", guests=3)["fits_guests"]
    assert ok(hub, "check_room_availability", room_type_id="RMT-0003", check_in="2026-03-19",
              check_out="2026-03-20")["available"]
    base = {"room_type_id": "RMT-0003"}
    fails(hub, "check_room_availability", "must be after check_in", **base, check_in="2026-03-20", check_out="2026-03-20")
    fails(hub, "check_room_availability", "at most 30 nights", "31 nights", **base, check_in="2026-03-20",
          check_out="2026-04-20")
    fails(hub, "check_room_availability", "last bookable night is 2026-05-14", **base, check_in="2026-05-10",
          check_out="2026-05-16")
    fails(hub, "check_room_availability", "check_in must be a date", **base, check_in="next friday",
          check_out="2026-05-16")
    fails(hub, "check_room_availability", "room type 'RMT-9' not found", "list_hotel_room_types",
          room_type_id="RMT-9", check_in="2026-03-20", check_out="2026-03-21")


def test_guests_and_reservations(hub: Hub) -> None:
    assert ok(hub, "get_hotel_guest", guest_id="GST-0001")["loyalty_points"] == 15000
    assert ok(hub, "get_hotel_guest", email=" BO@x.com")["guest_id"] == "GST-0002"
    fails(hub, "get_hotel_guest", "exactly one of guest_id or email")
    fails(hub, "get_hotel_guest", "exactly one", guest_id="GST-0001", email="ada@x.com")
    fails(hub, "get_hotel_guest", "no guest with email 'zed@x.com'", email="zed@x.com")
    fails(hub, "get_hotel_guest", "guest 'GST-9' not found", guest_id="GST-9")
    res = ok(hub, "list_guest_reservations", guest_id="GST-0001")
    assert ids(res["reservations"], "reservation_id") == ["HRS-0002", "HRS-0001", "HRS-0004"]
    assert ok(hub, "list_guest_reservations", guest_id="GST-0002", status="checked_out")["total"] == 2
    assert ok(hub, "list_guest_reservations", guest_id="GST-0001", hotel_id="HTL-0002")["total"] == 1
    page = ok(hub, "list_guest_reservations", guest_id="GST-0002", limit=2)
    assert page["next_offset"] == 2 and page["total"] == 5
    fails(hub, "list_guest_reservations", "status", "'checked_in'", guest_id="GST-0001", status="pending")
    fails(hub, "list_guest_reservations", "guest 'GST-5' not found", guest_id="GST-5")
    assert ok(hub, "get_hotel_reservation", reservation_id="HRS-0004")["status"] == "checked_in"
    fails(hub, "get_hotel_reservation", "reservation 'HRS-99' not found", "list_guest_reservations",
          reservation_id="HRS-99")


def test_book_hotel_room_takes_inventory(hub: Hub) -> None:
    res = ok(hub, "book_hotel_room", guest_id="GST-0002", room_type_id="RMT-0003", check_in="2026-04-01",
             check_out="2026-04-04", guests=2, pay_now=True, special_requests=["crib", "crib", "quiet_room"])
    assert res["reservation_id"] == "HRS-0009" and res["total_price"] == 900.0 and res["nights"] == 3
    assert res["payment_status"] == "paid" and res["amount_due"] == 0.0
    assert [r["kind"] for r in res["special_requests"]] == ["crib", "quiet_room"]
    assert left(hub, "RMT-0003", "2026-04-01") == 2
    assert ok(hub, "list_guest_reservations", guest_id="GST-0002", status="confirmed")["total"] == 3
    ok(hub, "book_hotel_room", guest_id="GST-0002", room_type_id="RMT-0004", check_in="2026-03-20",
       check_out="2026-03-21")
    fails(hub, "book_hotel_room", "no 'Single Room' (RMT-0004) left on the night of 2026-03-20",
          guest_id="GST-0001", room_type_id="RMT-0004", check_in="2026-03-19", check_out="2026-03-22")


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"check_in": "2026-03-19", "check_out": "2026-03-22"}, ("left on the night of 2026-03-20",)),
        ({"check_in": "2026-03-17", "check_out": "2026-03-22"}, ("night of 2026-03-18", "also 1 more")),
        ({"check_in": "2026-03-21", "check_out": "2026-03-22", "guests": 3}, ("3 guests exceed", "sleeps 2")),
        ({"check_in": "2026-03-15", "check_out": "2026-03-17"}, ("in the past", "today is 2026-03-16")),
        ({"check_in": "2026-03-22", "check_out": "2026-03-21"}, ("must be after check_in",)),
        ({"check_in": "2026-03-21", "check_out": "2026-04-30"}, ("at most 30 nights",)),
        ({"check_in": "2026-05-14", "check_out": "2026-05-16"}, ("at most 60 days ahead",)),
        ({"check_in": "2026-03-21", "check_out": "2026-03-22", "guest_id": "GST-7"}, ("guest 'GST-7' not found",)),
        ({"check_in": "2026-03-21", "check_out": "2026-03-22", "room_type_id": "RMT-7"}, ("room type 'RMT-7'",)),
        ({"check_in": "2026-03-21", "check_out": "2026-03-22", "special_requests": ["butler"]},
         ("special_requests", "'crib'")),
    ],
)
def test_book_hotel_room_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "book_hotel_room", *fragments, **{"guest_id": "GST-0001", "room_type_id": "RMT-0001", **args})


def test_modify_dates(hub: Hub) -> None:
    # HRS-0001 holds the last RMT-0001 room on the 18th, so moving within its own nights works.
    res = ok(hub, "modify_hotel_reservation_dates", reservation_id="HRS-0001", check_in="2026-03-18",
             check_out="2026-03-19")
    assert res["total_price"] == 100.0 and res["amount_due"] == 100.0 and res["nights"] == 1
    assert left(hub, "RMT-0001", "2026-03-17") == 3 and left(hub, "RMT-0001", "2026-03-18") == 0
    res = ok(hub, "modify_hotel_reservation_dates", reservation_id="HRS-0001", check_in="2026-03-21",
             check_out="2026-03-24")
    assert res["total_price"] == 300.0 and left(hub, "RMT-0001", "2026-03-18") == 1
    assert left(hub, "RMT-0001", "2026-03-21") == 1
    fails(hub, "modify_hotel_reservation_dates", "night of 2026-03-20", reservation_id="HRS-0001",
          check_in="2026-03-20", check_out="2026-03-22")
    fails(hub, "modify_hotel_reservation_dates", "already runs", reservation_id="HRS-0001",
          check_in="2026-03-21", check_out="2026-03-24")
    fails(hub, "modify_hotel_reservation_dates", "is cancelled", "only confirmed", reservation_id="HRS-0006",
          check_in="2026-03-21", check_out="2026-03-22")
    fails(hub, "modify_hotel_reservation_dates", "in the past", reservation_id="HRS-0001",
          check_in="2026-03-10", check_out="2026-03-22")
    # A prepaid stay that gets shorter is partly refunded.
    paid = ok(hub, "modify_hotel_reservation_dates", reservation_id="HRS-0002", check_in="2026-04-10",
              check_out="2026-04-11")
    assert paid["amount_paid"] == 300.0 and paid["amount_due"] == 0.0 and paid["payment_status"] == "paid"


def test_cancellation_quote_and_fee(hub: Hub) -> None:
    quote = ok(hub, "get_cancellation_quote", reservation_id="HRS-0001")
    assert quote["cancellation_policy"] == "strict" and quote["hours_until_check_in"] == 30.0
    assert quote["fee"] == 100.0 and quote["refund"] == 0.0 and quote["free_cancellation_until"] == "2026-03-15T15:00"
    fails(hub, "cancel_hotel_reservation", "costs a fee of 100.00 USD", "strict", "accept_fee=true",
          reservation_id="HRS-0001")
    ok(hub, "redeem_hotel_points", reservation_id="HRS-0001", points=1000)
    res = ok(hub, "cancel_hotel_reservation", reservation_id="HRS-0001", accept_fee=True)
    assert res["status"] == "cancelled" and res["cancellation_fee"] == 100.0 and res["payment_status"] == "paid"
    assert ok(hub, "get_hotel_guest", guest_id="GST-0001")["loyalty_points"] == 15000  # points came back
    assert left(hub, "RMT-0001", "2026-03-17") == 3
    fails(hub, "cancel_hotel_reservation", "is cancelled", reservation_id="HRS-0001")
    fails(hub, "get_cancellation_quote", "is checked_in", reservation_id="HRS-0004")
    free = ok(hub, "get_cancellation_quote", reservation_id="HRS-0002")
    assert free["fee"] == 0.0 and free["refund"] == 600.0
    res = ok(hub, "cancel_hotel_reservation", reservation_id="HRS-0002")
    assert res["payment_status"] == "refunded" and res["amount_paid"] == 0.0
    fails(hub, "cancel_hotel_reservation", "is checked_in", "only confirmed", reservation_id="HRS-0004")


def test_special_requests(hub: Hub) -> None:
    res = ok(hub, "add_special_request", reservation_id="HRS-0001", kind="crib", note="for a baby")
    assert res["special_requests"] == [{"kind": "crib", "note": "for a baby"}]
    assert ok(hub, "get_hotel_reservation", reservation_id="HRS-0001")["special_requests"][0]["kind"] == "crib"
    fails(hub, "add_special_request", "already has a 'crib' request", reservation_id="HRS-0001", kind="crib")
    for kind in ("high_floor", "quiet_room", "late_check_in", "extra_bed"):
        ok(hub, "add_special_request", reservation_id="HRS-0001", kind=kind)
    fails(hub, "add_special_request", "maximum of 5", reservation_id="HRS-0001", kind="other")
    fails(hub, "add_special_request", "is checked_out", reservation_id="HRS-0005", kind="crib")
    fails(hub, "add_special_request", "kind", "'airport_transfer'", reservation_id="HRS-0001", kind="jacuzzi")


def test_check_in_and_out(hub: Hub) -> None:
    fails(hub, "check_in_hotel_guest", "starts at 10:00", "early_check_in", reservation_id="HRS-0003")
    ok(hub, "add_special_request", reservation_id="HRS-0003", kind="early_check_in")
    res = ok(hub, "check_in_hotel_guest", reservation_id="HRS-0003")
    assert res["status"] == "checked_in" and res["checked_in_at"] == "2026-03-16T09:00"
    fails(hub, "check_in_hotel_guest", "opens on 2026-03-17", reservation_id="HRS-0001")
    fails(hub, "check_in_hotel_guest", "ended on 2026-03-12", reservation_id="HRS-0008")
    fails(hub, "check_in_hotel_guest", "is checked_in", reservation_id="HRS-0003")
    receipt = ok(hub, "check_out_hotel_guest", reservation_id="HRS-0004")
    assert receipt["charged_now"] == 880.0 and receipt["points_earned"] == 8800 and receipt["loyalty_points"] == 23800
    assert receipt["reservation"]["status"] == "checked_out" and receipt["reservation"]["payment_status"] == "paid"
    assert left(hub, "RMT-0002", "2026-03-17") == 2  # the unused nights went back on sale
    assert ok(hub, "get_hotel_guest", guest_id="GST-0001")["loyalty_points"] == 23800
    fails(hub, "check_out_hotel_guest", "is checked_out", "only checked_in", reservation_id="HRS-0004")
    fails(hub, "check_out_hotel_guest", "is confirmed", reservation_id="HRS-0001")


def test_points(hub: Hub) -> None:
    out = ok(hub, "redeem_hotel_points", reservation_id="HRS-0001", points=1500)
    assert out["discount"] == 15.0 and out["amount_due"] == 185.0 and out["points_left"] == 13500
    assert ok(hub, "get_hotel_reservation", reservation_id="HRS-0001")["points_redeemed"] == 1500
    fails(hub, "redeem_hotel_points", "has only 13500 points", reservation_id="HRS-0001", points=20000)
    fails(hub, "redeem_hotel_points", "has only 50 points", reservation_id="HRS-0003", points=100)
    fails(hub, "redeem_hotel_points", "only 0.00 USD is due", "at most 0 points", reservation_id="HRS-0002", points=100)
    fails(hub, "redeem_hotel_points", "points", "greater than or equal to 100", reservation_id="HRS-0001", points=50)
    fails(hub, "redeem_hotel_points", "is cancelled", reservation_id="HRS-0006", points=100)
    # Points that now exceed a shorter stay's price flow back to the guest.
    assert ok(hub, "redeem_hotel_points", reservation_id="HRS-0001", points=12000)["amount_due"] == 65.0
    res = ok(hub, "modify_hotel_reservation_dates", reservation_id="HRS-0001", check_in="2026-03-21",
             check_out="2026-03-22")
    assert res["points_discount"] == 100.0 and res["points_redeemed"] == 10000 and res["amount_due"] == 0.0
    assert res["payment_status"] == "paid"
    assert ok(hub, "get_hotel_guest", guest_id="GST-0001")["loyalty_points"] == 5000


def test_reviews(hub: Hub) -> None:
    listed = ok(hub, "list_hotel_reviews", hotel_id="HTL-0001")
    assert listed["total"] == 1 and listed["average_rating"] == 4.0
    review = ok(hub, "write_hotel_review", reservation_id="HRS-0005", rating=2, title="Noisy", text="Thin walls.")
    assert review["review_id"] == "REV-0002" and review["hotel_id"] == "HTL-0001"
    listed = ok(hub, "list_hotel_reviews", hotel_id="HTL-0001")
    assert ids(listed["reviews"], "review_id") == ["REV-0002", "REV-0001"] and listed["average_rating"] == 3.0
    assert ok(hub, "list_hotel_reviews", hotel_id="HTL-0001", min_rating=3)["total"] == 1
    assert ok(hub, "get_hotel", hotel_id="HTL-0001")["review_count"] == 2
    fails(hub, "write_hotel_review", "already reviewed (REV-0002)", reservation_id="HRS-0005", rating=5, title="x")
    fails(hub, "write_hotel_review", "only be written after check-out", reservation_id="HRS-0001", rating=5, title="x")
    fails(hub, "write_hotel_review", "rating", "less than or equal to 5", reservation_id="HRS-0007", rating=6, title="x")
    fails(hub, "list_hotel_reviews", "hotel 'HTL-8' not found", hotel_id="HTL-8")


def test_add_guest_to_reservation(hub: Hub) -> None:
    res = ok(hub, "add_hotel_guest_to_reservation", reservation_id="HRS-0001", guest_name=" Cy  Doe ")
    assert res["guests"] == 2 and res["additional_guests"] == ["Cy Doe"]
    assert ok(hub, "get_hotel_reservation", reservation_id="HRS-0001")["guests"] == 2
    fails(hub, "add_hotel_guest_to_reservation", "3 guests exceed", "sleeps 2", reservation_id="HRS-0001",
          guest_name="Di Roe")
    fails(hub, "add_hotel_guest_to_reservation", "already on", reservation_id="HRS-0001", guest_name="cy doe")
    fails(hub, "add_hotel_guest_to_reservation", "already on", reservation_id="HRS-0002", guest_name="Ada Chen")
    fails(hub, "add_hotel_guest_to_reservation", "is checked_out", reservation_id="HRS-0005", guest_name="Di Roe")
