"""Car rental server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.carrental import SERVER
from prove_servers.carrental.state import (
    Branch,
    CarRentalState,
    DamageReport,
    Rental,
    RentalCustomer,
    Ride,
    Vehicle,
    initial_state,
    rental_price,
    ride_fare,
    ride_route,
)

# now 2026-03-16T09:00.
BRANCHES = {  # id: name, city, airport, opens, closes
    "BRN-0001": ("Berlin Airport", "Berlin", True, "00:00", "23:59"),
    "BRN-0002": ("Berlin Downtown", "Berlin", False, "08:00", "20:00"),
    "BRN-0003": ("Munich Central Station", "Munich", False, "07:00", "19:00"),
}
VEHICLES = {  # id: class, make, model, seats, gearbox, fuel, rate, branch, status, km
    "VEH-0001": ("economy", "Toyota", "Yaris", 5, "manual", "petrol", 40.0, "BRN-0001", "available", 10000),
    "VEH-0002": ("luxury", "BMW", "7 Series", 5, "automatic", "hybrid", 170.0, "BRN-0001", "available", 20000),
    "VEH-0003": ("van", "Ford", "Transit", 9, "manual", "diesel", 100.0, "BRN-0001", "maintenance", 30000),
    "VEH-0004": ("suv", "Toyota", "RAV4", 5, "automatic", "hybrid", 80.0, "BRN-0002", "rented", 50000),
    "VEH-0005": ("compact", "Volkswagen", "Golf", 5, "manual", "diesel", 50.0, "BRN-0001", "available", 15000),
}
CUSTOMERS = {  # id: name, age, licence expiry, tier
    "RCU-0001": ("Ada Chen", 40, "2030-01-01", "gold"),
    "RCU-0002": ("Bo Silva", 23, "2030-01-01", "none"),
    "RCU-0003": ("Cy Doe", 50, "2026-03-20", "silver"),
    "RCU-0004": ("Dee Young", 20, "2030-01-01", "none"),
}
RENTALS = {  # id: customer, vehicle, pickup, return, status, extras
    "RNT-0001": ("RCU-0001", "VEH-0005", "2026-03-16T09:30", "2026-03-18T09:30", "reserved", []),
    "RNT-0002": ("RCU-0002", "VEH-0004", "2026-03-13T10:00", "2026-03-15T10:00", "active", ["insurance_full"]),
    "RNT-0003": ("RCU-0002", "VEH-0005", "2026-03-20T10:00", "2026-03-22T10:00", "reserved", []),
    "RNT-0004": ("RCU-0001", "VEH-0001", "2026-03-01T10:00", "2026-03-03T10:00", "returned", []),
    "RNT-0005": ("RCU-0001", "VEH-0002", "2026-03-25T10:00", "2026-03-27T10:00", "reserved", []),
    "RNT-0006": ("RCU-0002", "VEH-0001", "2026-03-10T10:00", "2026-03-11T10:00", "cancelled", []),
    "RNT-0007": ("RCU-0001", "VEH-0003", "2026-03-16T09:00", "2026-03-17T09:00", "reserved", []),
    "RNT-0008": ("RCU-0003", "VEH-0002", "2026-03-17T10:00", "2026-03-19T10:00", "reserved", []),
    "RNT-0009": ("RCU-0001", "VEH-0001", "2026-03-14T10:00", "2026-03-16T08:00", "reserved", []),
    "RNT-0010": ("RCU-0001", "VEH-0004", "2026-03-16T08:30", "2026-03-17T08:30", "reserved", []),
}
RIDES = {  # id: customer, city, pickup, dropoff, type, status
    "RID-0001": ("RCU-0001", "Berlin", "Berlin Central Station", "12 Oak Street", "standard", "completed"),
    "RID-0002": ("RCU-0002", "Berlin", "Berlin Airport Terminal 1", "Museum Island", "xl", "driver_assigned"),
    "RID-0003": ("RCU-0003", "Munich", "Marienplatz", "Munich Stadium", "premium", "in_progress"),
    "RID-0004": ("RCU-0002", "Munich", "Marienplatz", "Munich Stadium", "standard", "cancelled"),
}


def tiny() -> CarRentalState:
    s = CarRentalState(now="2026-03-16T09:00")
    for bid, (name, city, airport, opens, closes) in BRANCHES.items():
        s.branches[bid] = Branch(branch_id=bid, name=name, city=city, address=f"1 Main St, {city}", airport=airport,
                                 opens=opens, closes=closes, phone="+1-555-300-3000")
    for vid, (cls, make, model, seats, gear, fuel, rate, bid, status, km) in VEHICLES.items():
        s.vehicles[vid] = Vehicle(vehicle_id=vid, plate=f"B-{vid[-4:]}", make=make, model=model, year=2024,
                                  vehicle_class=cls, seats=seats, transmission=gear, fuel=fuel, daily_rate=rate,
                                  branch_id=bid, status=status, mileage=km)
    for cid, (name, age, expiry, tier) in CUSTOMERS.items():
        first = name.split()[0].lower()
        s.customers[cid] = RentalCustomer(customer_id=cid, name=name, email=f"{first}@x.com", phone="+1-555-100-1000",
                                          age=age, license_number=f"L{cid[-4:]}", license_expiry=expiry,
                                          loyalty_tier=tier)
    for rid, (cid, vid, start, end, status, extras) in RENTALS.items():
        car, days = s.vehicles[vid], 1 if status == "cancelled" else int(end[8:10]) - int(start[8:10])
        money = rental_price(days, car.daily_rate, s.customers[cid].loyalty_tier, extras, 0.0)
        s.rentals[rid] = Rental(
            rental_id=rid, customer_id=cid, vehicle_id=vid, pickup_branch_id=car.branch_id,
            return_branch_id=car.branch_id, pickup_at=start, return_at=end, days=days, extras=extras, status=status,
            **money, start_mileage={"active": car.mileage, "returned": 9000}.get(status),
            end_mileage=9500 if status == "returned" else None, created_at="2026-03-01T08:00",
        )
    s.damage_reports["DMG-0001"] = DamageReport(report_id="DMG-0001", rental_id="RNT-0004", vehicle_id="VEH-0001",
                                                area="front", severity="minor", description="scratch", charge=150.0,
                                                reported_at="2026-03-03T10:00")
    for rid, (cid, city, pickup, dropoff, kind, status) in RIDES.items():
        km, _ = ride_route(city, pickup, dropoff)
        s.rides[rid] = Ride(ride_id=rid, customer_id=cid, city=city, pickup_address=pickup, dropoff_address=dropoff,
                            ride_type=kind, passengers=1, distance_km=km, fare_estimate=ride_fare(kind, km),
                            status=status, driver_name=None if status == "cancelled" else "Kofi Ito",
                            eta_minutes=4 if status == "driver_assigned" else None, requested_at="2026-03-16T08:50")
    return s


hub = hub_fixture(SERVER, tiny)


def ids(items: list[dict], key: str) -> list[str]:
    return [x[key] for x in items]


WINDOW = {"pickup_at": "2026-03-17T10:00", "return_at": "2026-03-19T10:00"}


def test_seeded_world_is_rich_and_consistent() -> None:
    s = initial_state(5)
    assert len(s.branches) >= 10 and len(s.vehicles) >= 60 and len(s.rentals) >= 40 and len(s.rides) >= 20
    assert {r.status for r in s.rentals.values()} == {"reserved", "active", "returned", "cancelled"}
    active = {r.vehicle_id for r in s.rentals.values() if r.status == "active"}
    assert active == {v.vehicle_id for v in s.vehicles.values() if v.status == "rented"}
    assert s.new_id("RNT") == f"RNT-{len(s.rentals) + 1:04d}"


def test_branches(hub: Hub) -> None:
    assert ok(hub, "list_rental_branches")["total"] == 3
    assert ids(ok(hub, "list_rental_branches", city="berlin")["branches"], "branch_id") == ["BRN-0001", "BRN-0002"]
    assert ids(ok(hub, "list_rental_branches", airport_only=True)["branches"], "branch_id") == ["BRN-0001"]
    assert ok(hub, "list_rental_branches", limit=2)["next_offset"] == 2
    fails(hub, "list_rental_branches", "no ride service in 'Atlantis'", "Berlin, Munich", city="Atlantis")


def test_search_rental_cars(hub: Hub) -> None:
    res = ok(hub, "search_rental_cars", branch_id="BRN-0001", **WINDOW)
    # VEH-0002 is reserved (RNT-0008), VEH-0003 in maintenance, VEH-0005 out until the 18th.
    assert ids(res["cars"], "vehicle_id") == ["VEH-0001"] and res["cars"][0]["estimated_total"] == 80.0
    later = {"pickup_at": "2026-03-18T10:00", "return_at": "2026-03-19T09:00"}
    assert ids(ok(hub, "search_rental_cars", branch_id="BRN-0001", **later)["cars"], "vehicle_id") == ["VEH-0001", "VEH-0005"]
    assert ok(hub, "search_rental_cars", branch_id="BRN-0001", vehicle_class="compact", **later)["total"] == 1
    assert ok(hub, "search_rental_cars", branch_id="BRN-0001", transmission="automatic", **later)["total"] == 0
    assert ok(hub, "search_rental_cars", branch_id="BRN-0001", fuel="diesel", **later)["total"] == 1
    assert ok(hub, "search_rental_cars", branch_id="BRN-0001", min_seats=6, **later)["total"] == 0
    assert ok(hub, "search_rental_cars", branch_id="BRN-0001", max_daily_rate=45, **later)["total"] == 1
    page = ok(hub, "search_rental_cars", branch_id="BRN-0001", limit=1, **later)
    assert page["next_offset"] == 1 and page["total"] == 2
    fails(hub, "search_rental_cars", "is in the past", branch_id="BRN-0001", pickup_at="2026-03-15T10:00",
          return_at="2026-03-17T10:00")
    fails(hub, "search_rental_cars", "must be after pickup_at", branch_id="BRN-0001", pickup_at="2026-03-17T10:00",
          return_at="2026-03-17T09:00")
    fails(hub, "search_rental_cars", "at most 28 days", branch_id="BRN-0001", pickup_at="2026-03-17T10:00",
          return_at="2026-04-20T10:00")
    fails(hub, "search_rental_cars", "open 08:00-20:00", "outside its opening hours", branch_id="BRN-0002",
          pickup_at="2026-03-17T22:00", return_at="2026-03-18T10:00")
    fails(hub, "search_rental_cars", "pickup_at must be a date and time YYYY-MM-DDTHH:MM", branch_id="BRN-0001",
          pickup_at="tomorrow", return_at="2026-03-18T10:00")
    fails(hub, "search_rental_cars", "vehicle_class", "'luxury'", branch_id="BRN-0001", vehicle_class="truck", **WINDOW)
    fails(hub, "search_rental_cars", "branch 'BRN-9' not found", "BRN-0001", branch_id="BRN-9", **WINDOW)


def test_search_rental_cars_pages(hub: Hub) -> None:
    later = {"pickup_at": "2026-03-18T10:00", "return_at": "2026-03-19T09:00"}
    every = ok(hub, "search_rental_cars", branch_id="BRN-0001", **later)
    assert (every["total"], every["next_offset"]) == (2, None)
    first = ok(hub, "search_rental_cars", branch_id="BRN-0001", limit=1, **later)
    assert (first["total"], first["next_offset"]) == (2, 1)
    second = ok(hub, "search_rental_cars", branch_id="BRN-0001", offset=first["next_offset"], limit=1, **later)
    assert (second["total"], second["next_offset"]) == (2, None)
    assert first["cars"] + second["cars"] == every["cars"]
    # The shared parser also takes seconds; times are kept to the minute.
    assert ok(hub, "search_rental_cars", branch_id="BRN-0001", pickup_at="2026-03-18T10:00:00",
              return_at="2026-03-19T09:00")["pickup_at"] == "2026-03-18T10:00"


def test_get_rental_car(hub: Hub) -> None:
    car = ok(hub, "get_rental_car", vehicle_id="VEH-0005")
    assert [w["pickup_at"] for w in car["booked"]] == ["2026-03-16T09:30", "2026-03-20T10:00"]
    assert car["branch_name"] == "Berlin Airport" and car["city"] == "Berlin"
    assert ids(ok(hub, "get_rental_car", vehicle_id="VEH-0001")["damage_reports"], "report_id") == ["DMG-0001"]
    fails(hub, "get_rental_car", "vehicle 'VEH-9' not found", "search_rental_cars", vehicle_id="VEH-9")


def test_get_rental_quote(hub: Hub) -> None:
    quote = ok(hub, "get_rental_quote", vehicle_id="VEH-0001", pickup_at="2026-03-17T10:00",
               return_at="2026-03-19T12:00", extras=["gps", "gps", "child_seat"], customer_id="RCU-0001")
    assert quote["days"] == 3 and quote["extras"] == ["child_seat", "gps"]
    assert (quote["base_price"], quote["discount"], quote["extras_price"], quote["total_price"]) == (120.0, 12.0, 42.0, 150.0)
    assert ok(hub, "get_rental_quote", vehicle_id="VEH-0001", **WINDOW)["total_price"] == 80.0
    one_way = ok(hub, "get_rental_quote", vehicle_id="VEH-0001", return_branch_id="BRN-0003", **WINDOW)
    assert one_way["one_way_fee"] == 90.0 and one_way["total_price"] == 170.0
    assert ok(hub, "get_rental_quote", vehicle_id="VEH-0001", return_branch_id="BRN-0002", **WINDOW)["one_way_fee"] == 0.0
    fails(hub, "get_rental_quote", "customer 'RCU-9' not found", vehicle_id="VEH-0001", customer_id="RCU-9", **WINDOW)


LATER = {"pickup_at": "2026-03-28T10:00", "return_at": "2026-03-30T10:00"}


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"vehicle_id": "VEH-0002", "return_branch_id": "BRN-0003", "customer_id": "RCU-0001", **LATER},
         ("luxury cars cannot be returned in another city (Munich)", "BRN-0001, BRN-0002")),
        ({"vehicle_id": "VEH-0002", "customer_id": "RCU-0002", **LATER}, ("is 23", "aged 25 or over")),
        ({"vehicle_id": "VEH-0001", "customer_id": "RCU-0004", **LATER}, ("is 20", "at least 21")),
        ({"vehicle_id": "VEH-0001", "customer_id": "RCU-0003", "pickup_at": "2026-03-19T10:00",
          "return_at": "2026-03-21T10:00"}, ("expires on 2026-03-20", "before the return on 2026-03-21")),
        ({"vehicle_id": "VEH-0003", "customer_id": "RCU-0001", **LATER}, ("is in maintenance",)),
        ({"vehicle_id": "VEH-0005", "customer_id": "RCU-0001", **WINDOW},
         ("already booked from 2026-03-16T09:30 to 2026-03-18T09:30",)),
        ({"vehicle_id": "VEH-0001", "customer_id": "RCU-0001", "return_branch_id": "BRN-0002",
          "pickup_at": "2026-03-28T10:00", "return_at": "2026-03-30T21:00"}, ("Berlin Downtown", "outside its opening hours")),
        ({"vehicle_id": "VEH-0001", "customer_id": "RCU-0001", "pickup_at": "2026-03-28T10:00",
          "return_at": "2026-03-27T10:00"}, ("must be after pickup_at",)),
        ({"vehicle_id": "VEH-0001", "customer_id": "RCU-0001", "pickup_at": "2026-03-10T10:00",
          "return_at": "2026-03-17T10:00"}, ("is in the past",)),
        ({"vehicle_id": "VEH-0001", "customer_id": "RCU-0001", "return_branch_id": "BRN-7", **LATER},
         ("branch 'BRN-7' not found", "return_branch_id")),
        ({"vehicle_id": "VEH-0001", "customer_id": "RCU-0001", "extras": ["jetpack"], **LATER}, ("extras", "'gps'")),
    ],
)
@pytest.mark.parametrize("tool", ["get_rental_quote", "reserve_rental_car"])
def test_quote_and_reserve_failures(hub: Hub, tool: str, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, tool, *fragments, **args)


def test_reserve_rental_car(hub: Hub) -> None:
    rental = ok(hub, "reserve_rental_car", customer_id="RCU-0001", vehicle_id="VEH-0001", extras=["insurance_full"],
                **WINDOW)
    assert rental["rental_id"] == "RNT-0011" and rental["status"] == "reserved"
    assert rental["total_price"] == 122.0 and rental["pickup_branch_id"] == "BRN-0001"
    assert ok(hub, "search_rental_cars", branch_id="BRN-0001", **WINDOW)["total"] == 0
    assert ok(hub, "get_car_rental", rental_id="RNT-0011")["extras"] == ["insurance_full"]
    fails(hub, "reserve_rental_car", "already booked from 2026-03-17T10:00 to 2026-03-19T10:00",
          customer_id="RCU-0002", vehicle_id="VEH-0001", pickup_at="2026-03-18T10:00", return_at="2026-03-20T10:00")
    fails(hub, "reserve_rental_car", "customer 'RCU-8' not found", customer_id="RCU-8", vehicle_id="VEH-0001", **LATER)
    fails(hub, "get_car_rental", "rental 'RNT-99' not found", "list_customer_rentals", rental_id="RNT-99")


def test_list_customer_rentals(hub: Hub) -> None:
    res = ok(hub, "list_customer_rentals", customer_id="RCU-0001")
    assert res["customer"]["loyalty_tier"] == "gold" and res["total"] == 6
    assert ids(res["rentals"], "rental_id")[:3] == ["RNT-0005", "RNT-0001", "RNT-0007"]
    assert ok(hub, "list_customer_rentals", email="BO@x.com")["open_ride_ids"] == ["RID-0002"]
    assert ok(hub, "list_customer_rentals", customer_id="RCU-0001", status="returned")["total"] == 1
    assert ok(hub, "list_customer_rentals", customer_id="RCU-0001", limit=4)["next_offset"] == 4
    fails(hub, "list_customer_rentals", "exactly one of customer_id or email")
    fails(hub, "list_customer_rentals", "no customer with email 'zz@x.com'", email="zz@x.com")
    fails(hub, "list_customer_rentals", "status", "'reserved'", customer_id="RCU-0001", status="booked")


def test_cancel_car_rental(hub: Hub) -> None:
    late = ok(hub, "cancel_car_rental", rental_id="RNT-0001")  # pickup in 30 minutes: one day's rate
    assert late["status"] == "cancelled" and late["cancellation_fee"] == 50.0 and late["total_price"] == 50.0
    assert "VEH-0005" in ids(ok(hub, "search_rental_cars", branch_id="BRN-0001", **WINDOW)["cars"], "vehicle_id")
    assert ok(hub, "cancel_car_rental", rental_id="RNT-0005")["cancellation_fee"] == 0.0
    fails(hub, "cancel_car_rental", "is active", "cannot be cancelled", "return_rental_car", rental_id="RNT-0002")
    fails(hub, "cancel_car_rental", "is cancelled", "only reserved", rental_id="RNT-0001")
    fails(hub, "cancel_car_rental", "is returned", rental_id="RNT-0004")


def test_add_rental_extra(hub: Hub) -> None:
    rental = ok(hub, "add_rental_extra", rental_id="RNT-0005", extra="gps")
    assert rental["extras"] == ["gps"] and rental["extras_price"] == 16.0 and rental["total_price"] == 322.0
    assert ok(hub, "get_car_rental", rental_id="RNT-0005")["total_price"] == 322.0
    fails(hub, "add_rental_extra", "already has gps", rental_id="RNT-0005", extra="gps")
    assert ok(hub, "add_rental_extra", rental_id="RNT-0002", extra="gps")["total_price"] == 226.0
    fails(hub, "add_rental_extra", "is cancelled", rental_id="RNT-0006", extra="gps")
    fails(hub, "add_rental_extra", "is returned", rental_id="RNT-0004", extra="child_seat")
    fails(hub, "add_rental_extra", "extra", "'insurance_full'", rental_id="RNT-0005", extra="sunroof")


def test_extend_car_rental(hub: Hub) -> None:
    rental = ok(hub, "extend_car_rental", rental_id="RNT-0001", new_return_at="2026-03-20T09:30")
    assert rental["days"] == 4 and rental["total_price"] == 180.0
    fails(hub, "extend_car_rental", "already booked from 2026-03-20T10:00", "latest possible return is 2026-03-20T10:00",
          rental_id="RNT-0001", new_return_at="2026-03-21T09:30")
    fails(hub, "extend_car_rental", "must be later than the current return time", rental_id="RNT-0001",
          new_return_at="2026-03-19T09:30")
    fails(hub, "extend_car_rental", "expires on 2026-03-20", rental_id="RNT-0008", new_return_at="2026-03-21T10:00")
    fails(hub, "extend_car_rental", "outside its opening hours", rental_id="RNT-0002", new_return_at="2026-03-18T22:00")
    fails(hub, "extend_car_rental", "is cancelled", rental_id="RNT-0006", new_return_at="2026-03-18T10:00")
    fails(hub, "extend_car_rental", "new_return_at must be a date and time YYYY-MM-DDTHH:MM", rental_id="RNT-0002", new_return_at="2026-03-18")
    # The overdue RNT-0002 runs into RNT-0010's booking of the same car until that one is cancelled.
    fails(hub, "extend_car_rental", "already booked from 2026-03-16T08:30 to 2026-03-17T08:30",
          rental_id="RNT-0002", new_return_at="2026-03-18T10:00")
    ok(hub, "cancel_car_rental", rental_id="RNT-0010")
    overdue = ok(hub, "extend_car_rental", rental_id="RNT-0002", new_return_at="2026-03-18T10:00")
    assert overdue["days"] == 5 and overdue["total_price"] == 525.0


def test_start_car_rental(hub: Hub) -> None:
    rental = ok(hub, "start_car_rental", rental_id="RNT-0001")
    assert rental["status"] == "active" and rental["start_mileage"] == 15000 and rental["picked_up_at"] == "2026-03-16T09:00"
    assert ok(hub, "get_rental_car", vehicle_id="VEH-0005")["vehicle"]["status"] == "rented"
    fails(hub, "start_car_rental", "is active", "only reserved", rental_id="RNT-0001")
    fails(hub, "start_car_rental", "can be picked up from 2026-03-25T09:00", rental_id="RNT-0005")
    fails(hub, "start_car_rental", "is in maintenance", rental_id="RNT-0007")
    fails(hub, "start_car_rental", "expired", "pickup was 2026-03-14T10:00", rental_id="RNT-0009")
    fails(hub, "start_car_rental", "still out on an earlier rental", rental_id="RNT-0010")


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"rental_id": "RNT-0002", "odometer_km": 49000}, ("below the reading at pickup (50000)",)),
        ({"rental_id": "RNT-0002", "odometer_km": 60000}, ("10000 km in 2 days",)),
        ({"rental_id": "RNT-0001", "odometer_km": 16000}, ("is reserved", "only active")),
        ({"rental_id": "RNT-0002", "odometer_km": 50100, "return_branch_id": "BRN-5"}, ("branch 'BRN-5' not found",)),
        ({"rental_id": "RNT-0002", "odometer_km": -1}, ("odometer_km", "greater than or equal to 0")),
    ],
)
def test_return_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "return_rental_car", *fragments, **args)


def test_return_rental_car_late_and_one_way(hub: Hub) -> None:
    # RNT-0002 was due back yesterday 10:00: one late day; returned in Munich: one-way fee.
    rental = ok(hub, "return_rental_car", rental_id="RNT-0002", odometer_km=50400, return_branch_id="BRN-0003")
    assert rental["status"] == "returned" and rental["late_fee"] == 80.0 and rental["one_way_fee"] == 90.0
    assert rental["total_price"] == 380.0 and rental["mileage_driven"] == 400
    car = ok(hub, "get_rental_car", vehicle_id="VEH-0004")["vehicle"]
    assert (car["status"], car["mileage"], car["branch_id"]) == ("available", 50400, "BRN-0003")
    fails(hub, "return_rental_car", "is returned", rental_id="RNT-0002", odometer_km=50500)
    # Another branch in the same city: no one-way fee, and the car now waits there.
    ok(hub, "start_car_rental", rental_id="RNT-0001")
    same_city = ok(hub, "return_rental_car", rental_id="RNT-0001", odometer_km=15100, return_branch_id="BRN-0002")
    assert same_city["one_way_fee"] == 0.0 and same_city["late_fee"] == 0.0
    assert ok(hub, "get_rental_car", vehicle_id="VEH-0005")["vehicle"]["branch_id"] == "BRN-0002"


def test_report_vehicle_damage(hub: Hub) -> None:
    ok(hub, "start_car_rental", rental_id="RNT-0001")
    report = ok(hub, "report_vehicle_damage", rental_id="RNT-0001", area="rear", severity="minor",
                description="scratch on the bumper")
    assert report["report_id"] == "DMG-0002" and report["charge"] == 150.0
    assert ok(hub, "get_car_rental", rental_id="RNT-0001")["damage_charges"] == 150.0
    fails(hub, "report_vehicle_damage", "already reported", "DMG-0002", rental_id="RNT-0001", area="rear",
          severity="major", description="again")
    ok(hub, "report_vehicle_damage", rental_id="RNT-0001", area="windshield", severity="major", description="crack")
    assert ok(hub, "get_rental_car", vehicle_id="VEH-0005")["vehicle"]["status"] == "rented"
    returned = ok(hub, "return_rental_car", rental_id="RNT-0001", odometer_km=15200)
    assert returned["total_price"] == 90.0 + 1050.0
    assert ok(hub, "get_rental_car", vehicle_id="VEH-0005")["vehicle"]["status"] == "maintenance"
    # Full insurance: no charge; major damage after return sends the car to maintenance.
    ok(hub, "return_rental_car", rental_id="RNT-0002", odometer_km=50100)
    covered = ok(hub, "report_vehicle_damage", rental_id="RNT-0002", area="roof", severity="major", description="hail")
    assert covered["charge"] == 0.0
    assert ok(hub, "get_rental_car", vehicle_id="VEH-0004")["vehicle"]["status"] == "maintenance"
    fails(hub, "report_vehicle_damage", "is reserved", "only active or returned", rental_id="RNT-0005",
          area="rear", severity="minor", description="scratch")
    fails(hub, "report_vehicle_damage", "area", "'windshield'", rental_id="RNT-0002", area="engine",
          severity="minor", description="noise")


def test_ride_fares(hub: Hub) -> None:
    est = ok(hub, "estimate_ride_fare", city="berlin", pickup_address="Berlin Central Station",
             dropoff_address="Museum Island")
    km, eta = ride_route("Berlin", "Berlin Central Station", "Museum Island")
    assert est["city"] == "Berlin" and est["distance_km"] == km and est["driver_eta_minutes"] == eta
    assert [(o["ride_type"], o["fare_estimate"]) for o in est["options"]] == [
        (t, ride_fare(t, km)) for t in ("standard", "xl", "premium")]
    back = ok(hub, "estimate_ride_fare", city="Berlin", pickup_address="museum island",
              dropoff_address="Berlin Central Station", ride_type="xl")
    assert back["distance_km"] == km and len(back["options"]) == 1
    fails(hub, "estimate_ride_fare", "are the same place", city="Berlin", pickup_address="Museum Island",
          dropoff_address="museum  island")
    fails(hub, "estimate_ride_fare", "no ride service in 'Atlantis'", city="Atlantis", pickup_address="Pier 1",
          dropoff_address="Pier 2")
    fails(hub, "estimate_ride_fare", "ride_type", "'premium'", city="Berlin", pickup_address="Pier 1",
          dropoff_address="Pier 2", ride_type="limo")


def test_request_and_cancel_rides(hub: Hub) -> None:
    trip = {"city": "Berlin", "pickup_address": "12 Oak Street", "dropoff_address": "Berlin Airport Terminal 1"}
    km, eta = ride_route("Berlin", trip["pickup_address"], trip["dropoff_address"])
    ride = ok(hub, "request_ride", customer_id="RCU-0001", ride_type="premium", passengers=2, **trip)
    assert ride["ride_id"] == "RID-0005" and ride["fare_estimate"] == ride_fare("premium", km)
    assert ride["status"] == ("driver_assigned" if eta <= 10 else "requested")
    assert ok(hub, "get_ride_status", ride_id="RID-0005")["passengers"] == 2
    assert ok(hub, "list_customer_rentals", customer_id="RCU-0001")["open_ride_ids"] == ["RID-0005"]
    fails(hub, "request_ride", "already has an open ride (RID-0005", customer_id="RCU-0001", **trip)
    fails(hub, "request_ride", "already has an open ride (RID-0002, driver_assigned)", customer_id="RCU-0002", **trip)
    fails(hub, "request_ride", "standard ride seats 4", customer_id="RCU-0004", passengers=5, **trip)
    fails(hub, "request_ride", "are the same place", customer_id="RCU-0004", city="Berlin",
          pickup_address="12 Oak Street", dropoff_address="12 oak street")
    fails(hub, "request_ride", "customer 'RCU-7' not found", customer_id="RCU-7", **trip)
    cancelled = ok(hub, "cancel_ride", ride_id="RID-0002")  # a driver was on the way: small fee
    assert cancelled["status"] == "cancelled" and cancelled["cancellation_fee"] == 5.0
    assert ok(hub, "request_ride", customer_id="RCU-0002", ride_type="xl", passengers=5, **trip)["ride_id"] == "RID-0006"
    fails(hub, "cancel_ride", "already completed", ride_id="RID-0001")
    fails(hub, "cancel_ride", "already cancelled", ride_id="RID-0004")
    fails(hub, "cancel_ride", "in progress", ride_id="RID-0003")
    fails(hub, "get_ride_status", "ride 'RID-99' not found", ride_id="RID-99")
